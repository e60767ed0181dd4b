"""Recipes of the builder C API (capi/api/builder.toml, group Recipe) over tinytc_py.recipes.

A tinytc_recipe_t holds a `CRecipe`: the Python recipe plus the handles of its prog and binary
(which the recipe retains, docs/design.md §C1.5). A tinytc_recipe_handler_t is made by a runtime module
(capi/cl.py, capi/ze.py, capi/sycl.py) and holds an object with `set(kernel, args, groups)`
and `records`; `set_args` below computes the kernel arguments from the recipe and hands them to
it. In bounds-checked mode (docs/bounds-checks.rst) `records` are the handler's report records
(`ReportRecords`, in USM the handler allocates) and `set_args` appends the kernel's record as
its last argument; tinytc_recipe_handler_get_bounds_report reads them after the launches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..bounds_record import RECORD_LENGTH, report_message
from ..errors import Status, TinytcError
from ..ir.types import NumberType
from ..recipes import Arg, Recipe, small_gemm_batched, suggest_block_size, tall_and_skinny
from .core import BinaryObj
from .errors import invalid
from .handles import c_string, need, out, state, table
from .registry import export

TRANSPOSE = {0: "n", 1: "t"}
MEM_USM_POINTER = 1  # tinytc_mem_type_t
RECORD_BYTES = 8 * RECORD_LENGTH


@dataclass
class CRecipe:
    recipe: Recipe
    prog_addr: int
    binary_addr: int


def _number_type(p: Any) -> NumberType:
    ty = table.get("type", p)
    if not isinstance(ty, NumberType):
        invalid("a recipe needs a number type")
    return ty


def bounds_checked(recipe: Recipe) -> bool:
    return any(k.bounds_checks is not None for k in recipe.binary.kernels.values())


class ReportRecords:
    """The report records of a bounds-checked recipe's handler: one per recipe kernel (check
    ids belong to a kernel), side by side in one allocation of host-readable memory (shared
    USM) that the handler makes with `alloc(nbytes) -> address` and frees with `free(address)`
    when it goes away. Zero at the start; a record collects the violations of every launch of
    its kernel until `report` reads and clears it."""

    def __init__(self, recipe: Recipe, alloc: Callable[[int], int], free: Callable[[int], None]):
        self.recipe = recipe
        self.names = list(recipe.kernels)
        self.address = alloc(RECORD_BYTES * len(self.names))
        self._free: Callable[[int], None] | None = free
        self._values = state.ffi.cast("int64_t *", self.address)
        self.clear()

    def clear(self) -> None:
        for i in range(RECORD_LENGTH * len(self.names)):
            self._values[i] = 0

    def arg(self, kernel: str) -> Arg:
        """The kernel's record as its last argument (a USM pointer)."""
        index = self.recipe.binary.kernel(kernel).params[-1].first_arg
        offset = RECORD_BYTES * self.names.index(kernel)
        return Arg(index, mem=(MEM_USM_POINTER, self.address + offset))

    def report(self) -> str | None:
        """The located messages of the kernels whose record counted a violation (one line
        each), or None; clears the records."""
        found = []
        for k, name in enumerate(self.names):
            record = [int(self._values[k * RECORD_LENGTH + i]) for i in range(RECORD_LENGTH)]
            checks = self.recipe.binary.kernel(name).bounds_checks or []
            message = report_message(checks, record)
            if message is not None:
                found.append(f"kernel {name}: {message}")
        self.clear()
        return "\n".join(found) if found else None

    def close(self) -> None:
        if self._free is not None:
            free, self._free = self._free, None
            free(self.address)


def _new_recipe(p: Any, make: Any) -> None:
    recipe: Recipe = make()
    ctx_addr = table.context_handle(recipe.prog.ctx, "the type's compiler context")
    prog_addr = table.new_shared("prog", recipe.prog, (ctx_addr,))
    bin_addr = table.new_shared("binary", BinaryObj(recipe.binary, recipe.prog.ctx), (ctx_addr,))
    obj = CRecipe(recipe, prog_addr, bin_addr)
    # The recipe owns the only references of its prog and binary.
    out(p, table.new_shared("recipe", obj, (prog_addr, bin_addr)))
    table.release_addr(prog_addr)
    table.release_addr(bin_addr)


def _transpose(t: int) -> str:
    if t not in TRANSPOSE:
        invalid(f"unknown transpose {t}")
    return TRANSPOSE[t]


def _bytes(size: int, p: Any) -> bytes:
    need(p)
    return state.ffi.buffer(state.ffi.cast("char *", p), size)[:]


def _mem(kind: int, p: Any) -> tuple[int, Any]:
    if kind not in (0, 1, 2):
        invalid(f"unknown memory type {kind}")
    return kind, p


def _recipe(p: Any) -> CRecipe:
    return table.get("recipe", p)


@export
def tinytc_recipe_get_prog(recipe: Any, prg: Any) -> None:
    need(prg)
    out(prg, _recipe(recipe).prog_addr)


@export
def tinytc_recipe_get_binary(recipe: Any, bin_: Any) -> None:
    need(bin_)
    out(bin_, _recipe(recipe).binary_addr)


@export
def tinytc_recipe_handler_get_recipe(handler: Any, recipe: Any) -> None:
    need(recipe)
    out(recipe, table.entry("recipe_handler", handler).refs[0])


@export
def tinytc_recipe_small_gemm_batched_create(
    recipe: Any, info: Any, number_ty: Any, tA: int, tB: int, M: int, N: int, K: int,
    ldA: int, strideA: int, ldB: int, strideB: int, ldC: int, strideC: int,
) -> None:  # fmt: skip
    need(recipe)
    core = table.get("core_info", info)
    ty = _number_type(number_ty)
    ta, tb = _transpose(tA), _transpose(tB)
    sizes = (M, N, K, ldA, strideA, ldB, strideB, ldC, strideC)
    _new_recipe(recipe, lambda: small_gemm_batched(core, str(ty), ta, tb, *sizes, ctx=ty.ctx))


@export
def tinytc_recipe_tall_and_skinny_create(
    recipe: Any, info: Any, number_ty: Any, N: int, K: int, M_block_size: int
) -> None:
    need(recipe)
    core = table.get("core_info", info)
    ty = _number_type(number_ty)
    _new_recipe(
        recipe,
        lambda: tall_and_skinny(core, str(ty), N=N, K=K, M_block_size=M_block_size, ctx=ty.ctx),
    )


@export
def tinytc_recipe_tall_and_skinny_create_specialized(
    recipe: Any, info: Any, number_ty: Any, M: int, N: int, K: int, ldA: int, ldB: int,
    ldC: int, alignA: int, alignB: int, alignC: int, M_block_size: int,
) -> None:  # fmt: skip
    need(recipe)
    core = table.get("core_info", info)
    ty = _number_type(number_ty)
    _new_recipe(
        recipe,
        lambda: tall_and_skinny(
            core,
            str(ty),
            M=M,
            N=N,
            K=K,
            ldA=ldA,
            ldB=ldB,
            ldC=ldC,
            alignA=alignA,
            alignB=alignB,
            alignC=alignC,
            M_block_size=M_block_size,
            ctx=ty.ctx,
        ),  # fmt: skip
    )


def _handler(p: Any) -> Any:
    return table.get("recipe_handler", p)


def _check_recipe(handler: Any, name: str) -> Recipe:
    recipe = handler.recipe
    if recipe.name != name:
        raise TinytcError(Status.invalid_arguments, f"the handler runs a {recipe.name} recipe")
    return recipe


def _set(h: Any, kernel: str, args: list[Arg], groups: int) -> None:
    """Hands the arguments to the handler, with the kernel's report record last in
    bounds-checked mode."""
    records: ReportRecords | None = h.records
    h.set(kernel, args if records is None else [*args, records.arg(kernel)], groups)


@export
def tinytc_recipe_handler_get_bounds_report(handler: Any, message: Any) -> None:
    need(message)
    records: ReportRecords | None = _handler(handler).records
    if records is None:
        raise TinytcError(
            Status.invalid_arguments, "the handler's recipe was not compiled with bounds checks"
        )
    found = records.report()
    message[0] = state.ffi.NULL if found is None else c_string(found)


@export
def tinytc_recipe_small_gemm_batched_set_args(
    handler: Any, howmany: int, alpha_size: int, alpha_value: Any, A_type: int, A_value: Any,
    B_type: int, B_value: Any, beta_size: int, beta_value: Any, C_type: int, C_value: Any,
) -> None:  # fmt: skip
    h = _handler(handler)
    recipe = _check_recipe(h, "small_gemm_batched")
    kernel, args, groups = recipe.small_gemm_batched_args(
        howmany,
        _bytes(alpha_size, alpha_value),
        _mem(A_type, A_value),
        _mem(B_type, B_value),
        _bytes(beta_size, beta_value),
        _mem(C_type, C_value),
    )
    _set(h, kernel, args, groups)


@export
def tinytc_recipe_tall_and_skinny_set_args(
    handler: Any, M: int, alpha_size: int, alpha_value: Any, A_type: int, A_value: Any,
    ldA: int, B_type: int, B_value: Any, ldB: int, beta_size: int, beta_value: Any,
    C_type: int, C_value: Any, ldC: int,
) -> None:  # fmt: skip
    h = _handler(handler)
    recipe = _check_recipe(h, "tall_and_skinny")
    kernel, args, groups = recipe.tall_and_skinny_args(
        M,
        _bytes(alpha_size, alpha_value),
        _mem(A_type, A_value),
        ldA,
        _mem(B_type, B_value),
        ldB,
        _bytes(beta_size, beta_value),
        _mem(C_type, C_value),
        ldC,
    )
    _set(h, kernel, args, groups)


@export
def tinytc_recipe_tall_and_skinny_suggest_block_size(info: Any, M_block_size: Any) -> None:
    need(M_block_size)
    M_block_size[0] = suggest_block_size(table.get("core_info", info))
