"""Recipes: ready-made, pre-compiled kernels for common tasks (docs/design.md §B8).

A recipe is a tensor-language program generated from its parameters, compiled for one core info
when the recipe is created. Running it needs a handler for a runtime (the C API's OpenCL handler
lives in tinytc_py.capi.cl); the handler asks the recipe which kernel to run and which kernel
arguments to set (`Recipe.arguments`), so argument layouts are defined here once.

* `small_gemm_batched`: C_i = alpha * op(A_i) op(B_i) + beta * C_i for i < howmany, static sizes.
* `tall_and_skinny`: C = alpha * A B + beta * C with A of size M x K, M large (dynamic or not),
  K and N small and static.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..binary import Binary
from ..compiler import compile_to_spirv
from ..errors import Status, TinytcError
from ..ir.context import CompilerContext
from ..ir.types import DYNAMIC
from ..numpy_types import DTYPES
from ..target.core_info import CoreInfo
from ..text.dialect import parse


def _dim(v: int) -> str:
    return "?" if v == DYNAMIC else str(v)


def _zero(ty: str) -> str:
    if ty in ("c32", "c64"):
        return "[0.0, 0.0]"
    return "0.0" if ty in ("f16", "bf16", "f32", "f64") else "0"


def _scalar(ty: str) -> Any:
    try:
        return DTYPES[ty]
    except KeyError:
        raise TinytcError(Status.invalid_arguments, f"recipes do not support type {ty}") from None


@dataclass
class Arg:
    """One kernel argument the handler sets: a scalar (raw bytes) or memory (kind, handle)."""

    index: int
    scalar: bytes | None = None
    mem: tuple[int, Any] | None = None  # (tinytc_mem_type_t, value)


@dataclass
class Recipe:
    """A compiled recipe: its program, binary and the state of the argument layout."""

    name: str
    ty: str
    prog: Any
    binary: Binary
    kernels: tuple[str, ...]
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def scalar_size(self) -> int:
        return np.dtype(_scalar(self.ty)).itemsize

    def is_zero(self, raw: bytes) -> bool:
        if self.ty == "bf16":
            return np.frombuffer(raw, np.uint16)[0] & 0x7FFF == 0
        return bool(np.frombuffer(raw, _scalar(self.ty))[0] == 0)

    def _check_scalar(self, raw: bytes, what: str) -> None:
        if len(raw) != self.scalar_size:
            raise TinytcError(
                Status.invalid_kernel_arguments,
                f"{what} has {len(raw)} bytes, the recipe's {self.ty} has {self.scalar_size}",
            )

    # ---- argument layouts (docs/design.md §B8) ---------------------------------------------

    def small_gemm_batched_args(
        self, howmany: int, alpha: bytes, A: tuple, B: tuple, beta: bytes, C: tuple
    ) -> tuple[str, list[Arg], int]:
        """(kernel name, arguments, number of work-groups)."""
        self._check_scalar(alpha, "alpha")
        self._check_scalar(beta, "beta")
        n = np.int64(howmany).tobytes()
        args = [Arg(0, alpha), Arg(1, mem=A), Arg(2, n), Arg(3, mem=B), Arg(4, n)]
        args += [Arg(5, beta), Arg(6, mem=C), Arg(7, n)]
        kernel = "gemm_beta0" if self.is_zero(beta) else "gemm"
        return kernel, args, howmany

    def tall_and_skinny_args(
        self,
        M: int,
        alpha: bytes,
        A: tuple,
        ldA: int,
        B: tuple,
        ldB: int,
        beta: bytes,
        C: tuple,
        ldC: int,
    ) -> tuple[str, list[Arg], int]:
        self._check_scalar(alpha, "alpha")
        self._check_scalar(beta, "beta")
        p = self.params

        def i64(v: int) -> bytes:
            return np.int64(v).tobytes()

        layout: list[tuple[bytes | None, tuple | None]] = [(alpha, None), (None, A)]
        if p["M"] == DYNAMIC:
            layout.append((i64(M), None))
        if p["ldA"] == DYNAMIC:
            layout.append((i64(ldA), None))
        layout.append((None, B))
        if p["ldB"] == DYNAMIC:
            layout.append((i64(ldB), None))
        layout += [(beta, None), (None, C)]
        if p["M"] == DYNAMIC:
            layout.append((i64(M), None))
        if p["ldC"] == DYNAMIC:
            layout.append((i64(ldC), None))
        args = [Arg(i, s, m) for i, (s, m) in enumerate(layout)]
        block = p["M_block_size"]
        kernel = "gemm_beta0" if self.is_zero(beta) else "gemm"
        return kernel, args, (M + block - 1) // block


def _compile(
    name: str, ty: str, source: str, info: CoreInfo, ctx: CompilerContext | None, **params: Any
) -> Recipe:
    prog = parse(source, ctx or CompilerContext(), f"<recipe {name}>")
    binary = compile_to_spirv(prog, info)
    return Recipe(name, ty, prog, binary, ("gemm", "gemm_beta0"), dict(params))


def small_gemm_batched_source(
    ty: str, tA: str, tB: str, M: int, N: int, K: int, ldA: int, sA: int, ldB: int, sB: int,
    ldC: int, sC: int,
) -> str:  # fmt: skip
    a0, a1 = (M, K) if tA == "n" else (K, M)
    b0, b1 = (K, N) if tB == "n" else (N, K)
    funcs = []
    for kernel, beta in (("gemm", "%beta"), ("gemm_beta0", "%zero")):
        zero = f"    %zero = constant {_zero(ty)} : {ty}\n" if beta == "%zero" else ""
        funcs.append(
            f"func @{kernel}(%alpha: {ty},\n"
            f"    %A: memref<{ty}x{a0}x{a1}x?, strided<1,{ldA},{sA}>>,\n"
            f"    %B: memref<{ty}x{b0}x{b1}x?, strided<1,{ldB},{sB}>>,\n"
            f"    %beta: {ty},\n"
            f"    %C: memref<{ty}x{M}x{N}x?, strided<1,{ldC},{sC}>>) {{\n"
            f"    %gid = group_id.x : index\n{zero}"
            f"    %a = subview %A[0:{a0},0:{a1},%gid] : memref<{ty}x{a0}x{a1},strided<1,{ldA}>>\n"
            f"    %b = subview %B[0:{b0},0:{b1},%gid] : memref<{ty}x{b0}x{b1},strided<1,{ldB}>>\n"
            f"    %c = subview %C[0:{M},0:{N},%gid] : memref<{ty}x{M}x{N},strided<1,{ldC}>>\n"
            f"    gemm.{tA}.{tB} %alpha, %a, %b, {beta}, %c\n"
            "}\n"
        )
    return "\n".join(funcs)


def small_gemm_batched(
    info: CoreInfo,
    ty: str,
    tA: str,
    tB: str,
    M: int,
    N: int,
    K: int,
    ldA: int,
    strideA: int,
    ldB: int,
    strideB: int,
    ldC: int,
    strideC: int,
    *,
    ctx: CompilerContext | None = None,
) -> Recipe:
    """The small GEMM batched recipe (docs/design.md §B8.1); tA/tB are "n" or "t"."""
    _scalar(ty)
    sizes = (M, N, K, ldA, strideA, ldB, strideB, ldC, strideC)
    if any(v == DYNAMIC or v < 0 for v in sizes) or tA not in "nt" or tB not in "nt":
        raise TinytcError(Status.invalid_arguments, "small_gemm_batched needs static sizes")
    source = small_gemm_batched_source(ty, tA, tB, *sizes)
    return _compile("small_gemm_batched", ty, source, info, ctx)


def suggest_block_size(info: CoreInfo) -> int:
    size = min(128, info.minmax_work_group_size)
    if size <= 0:
        raise TinytcError(Status.invalid_core_info, "no usable work-group size")
    return size


def _gemm_on_block(
    ty: str, K: int, N: int, rows: str, rows_ty: str, ldA: str, ldC: str, beta: str
) -> str:
    """Subviews of the block of A and C starting at row %m, and the GEMM on them."""
    return (
        f"%a = subview %A[%m:{rows},0:{K}] : memref<{ty}x{rows_ty}x{K},strided<1,{ldA}>>\n"
        f"%c = subview %C[%m:{rows},0:{N}] : memref<{ty}x{rows_ty}x{N},strided<1,{ldC}>>\n"
        f"gemm.n.n %alpha, %a, %B, {beta}, %c\n"
    )


def tall_and_skinny_source(
    ty: str, M: int, N: int, K: int, ldA: int, ldB: int, ldC: int, aligns: tuple[int, int, int],
    block: int,
) -> str:  # fmt: skip
    lda, ldb, ldc = _dim(ldA), _dim(ldB), _dim(ldC)
    attrs = [f" {{alignment={a}}}" if a > 0 else "" for a in aligns]
    funcs = []
    for kernel, beta in (("gemm", None), ("gemm_beta0", _zero(ty))):
        head = (
            f"func @{kernel}(%alpha: {ty},\n"
            f"    %A: memref<{ty}x{_dim(M)}x{K},strided<1,{lda}>>{attrs[0]},\n"
            f"    %B: memref<{ty}x{K}x{N},strided<1,{ldb}>>{attrs[1]},\n"
            f"    %beta: {ty},\n"
            f"    %C: memref<{ty}x{_dim(M)}x{N},strided<1,{ldc}>>{attrs[2]}) {{\n"
        )
        body = "%gid = group_id.x : index\n"
        body += f"%bs = constant {block} : index\n%m = mul %gid, %bs : index\n"
        if beta:
            body += f"%zero = constant {beta} : {ty}\n"
        b = "%zero" if beta else "%beta"
        static = _gemm_on_block(ty, K, N, str(block), str(block), lda, ldc, b)
        if M != DYNAMIC and M % block == 0:
            body += static
        else:
            dynamic = _gemm_on_block(ty, K, N, "%rem", "?", lda, ldc, b)
            body += (
                "%size = size %C[0] : index\n%rem = sub %size, %m : index\n"
                "%partial = less_than %rem, %bs : bool\n"
                f"if %partial {{\n{dynamic}}} else {{\n{static}}}\n"
            )
        funcs.append(head + "".join("    " + line + "\n" for line in body.splitlines()) + "}\n")
    return "\n".join(funcs)


def tall_and_skinny(
    info: CoreInfo,
    ty: str,
    *,
    N: int,
    K: int,
    M: int = DYNAMIC,
    ldA: int = DYNAMIC,
    ldB: int = DYNAMIC,
    ldC: int = DYNAMIC,
    alignA: int = 0,
    alignB: int = 0,
    alignC: int = 0,
    M_block_size: int = 0,
    ctx: CompilerContext | None = None,
) -> Recipe:
    """The tall and skinny recipe (docs/design.md §B8.2): C = alpha A B + beta C, A is M x K."""
    _scalar(ty)
    if N == DYNAMIC or K == DYNAMIC or N < 0 or K < 0:
        raise TinytcError(Status.invalid_arguments, "tall_and_skinny needs static N and K")
    if any(v != DYNAMIC and v < 0 for v in (M, ldA, ldB, ldC)) or M_block_size < 0:
        raise TinytcError(Status.invalid_arguments, "negative size")
    block = M_block_size or suggest_block_size(info)
    source = tall_and_skinny_source(ty, M, N, K, ldA, ldB, ldC, (alignA, alignB, alignC), block)
    return _compile(
        "tall_and_skinny", ty, source, info, ctx,
        M=M, ldA=ldA, ldB=ldB, ldC=ldC, M_block_size=block,
    )  # fmt: skip
