"""Shared building blocks of the lower-linalg pass (docs/design.md §B4.1): the `LinalgGen` context
that one linear-algebra instruction is lowered with, and the common BLAS update

    C := alpha*ab + beta*C        (computed in C's element type, promotions by casts)

- not atomic: constant beta 0 stores alpha*ab without reading C; another constant beta loads C
  (constant 1 skips the multiplication); a run-time beta is tested, so beta == 0 never reads C
  (BLAS convention: C may hold garbage, even NaN, when beta is 0);
- atomic: constant beta 0 gives atomic_store, constant 1 atomic_add (scope work_group, relaxed);
  any other beta gives ir_invalid_beta.

Index arithmetic goes through `Fold` (known numbers fold on the spot), so static sizes give
straight-line code. The instructions are made by `PassBuilder.emit` / `value` (compiled), not
the builder's interpreted instruction methods.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import Status
from ..ir.enums import AddressSpace, Comp3, MemoryScope, MemorySemantics
from ..ir.inst import Inst
from ..ir.ops.arith import ConstantInst
from ..ir.types import DYNAMIC, MemrefType, NumberType, Type, as_memref, element_type
from ..ir.values import Value
from ..target.core_info import CoreInfo
from .lower_foreach import Fold, Int
from .pass_builder import PassBuilder

SCOPE = MemoryScope.work_group
SEMANTICS = MemorySemantics.relaxed


def known_number(v: Value) -> complex | None:
    """The number a scalar value is known to hold (a constant), as a Python complex."""
    d = v.defining_inst
    if not isinstance(d, ConstantInst):
        return None
    value = d.props["value"]
    if isinstance(value, bool):
        return None
    if isinstance(value, tuple):
        return complex(value[0], value[1])
    return complex(value)


class LinalgGen:
    """Builder, folding and launch geometry for lowering one instruction `inst`.

    S = subgroup size, (m_tiles, n_tiles) = (W0 / S, W1); `tiles` = number of subgroups."""

    def __init__(
        self, b: PassBuilder, inst: Inst, sgs: int, m_tiles: int, n_tiles: int, info: CoreInfo
    ) -> None:
        self.b, self.f, self.inst = b, Fold(b), inst
        self.ctx = b.ctx
        self.index = b.ctx.index
        self.sgs, self.m_tiles, self.n_tiles = sgs, m_tiles, n_tiles
        self.tiles = m_tiles * n_tiles
        self.info = info
        self.loc = inst.loc

    # ---- operands ------------------------------------------------------------------------------

    def op(self, key: str) -> Value:
        return self.inst.operand(key)

    @property
    def atomic(self) -> bool:
        return bool(self.inst.props["atomic"])

    # ---- values --------------------------------------------------------------------------------

    def const(self, x: Int | complex | float, ty: Type) -> Value:
        return x if isinstance(x, Value) else self.b.constant(x, ty)

    def idx(self, x: Int) -> Value:
        """An index value (a constant for a known number)."""
        return self.f.value(x, self.index)

    def extent(self, v: Value, mode: int) -> Int:
        """Size of mode `mode` of memref `v`: a number when static, else a `size` instruction."""
        ty = v.type
        assert isinstance(ty, MemrefType)
        s = ty.shape[mode]
        return s if s != DYNAMIC else self.b.value("size", {"operand": v}, {"mode": mode})

    def cast(self, v: Value, ty: Type) -> Value:
        """`v` converted to `ty` (scalar or coopmatrix); a no-op when the types agree."""
        return v if v.type is ty else self.b.value("cast", {"a": v}, None, ty)

    def promote(self, v: Value, ty: NumberType) -> Value:
        """Mixed-precision promotion of `v` to `ty` (ir_forbidden_promotion if not allowed)."""
        src = element_type(v.type)
        dst = element_type(ty)
        if (
            isinstance(src, NumberType)
            and isinstance(dst, NumberType)
            and src is not dst
            and not src.promotable_to(dst)
        ):
            raise self.inst.error(
                Status.ir_forbidden_promotion, f"cannot promote {src} to {dst}", v
            )
        return self.cast(v, ty)

    def zero(self, ty: Type) -> Value:
        return self.b.constant(0, ty)

    def builtin(self, name: str, mode: Comp3 | None = None) -> Value:
        """A subgroup builtin (i32)."""
        return self.b.value(name, {}, None if mode is None else {"mode": mode})

    def i32(self, x: int) -> Value:
        return self.b.constant(x, self.ctx.i32)

    def local_memref(self, ty: NumberType, n: int) -> MemrefType:
        return self.ctx.memref(ty, (n,), addrspace=AddressSpace.local)

    def barrier_local(self) -> None:
        self.b.emit("barrier", {}, {"fence_flags": AddressSpace.local})

    def binary(self, op: str, a: Value, b: Value) -> Value:
        """`op a, b` (add, mul, equal, ..., cooperative_matrix_scale):
        the result's type is the one the operands give."""
        return self.b.value(op, {"a": a, "b": b})

    def unary(self, op: str, a: Value) -> Value:
        """`op a` (subgroup_reduce_add, ...): the result's type is the one the operand gives."""
        return self.b.value(op, {"a": a})

    def load(self, memref: Value, index: list[Value]) -> Value:
        return self.b.value("load", {"operand": memref, "index_list": index})

    def store(self, val: Value, memref: Value, index: list[Value]) -> None:
        self.b.emit("store", {"val": val, "operand": memref, "index_list": index})

    # ---- structured control flow -----------------------------------------------------------------

    def if_then(self, cond: Value, then: Callable[[], None]) -> None:
        with self.b.if_(cond) as (t, _), t:
            then()

    def if_value(
        self, cond: Value, ty: Type, then: Callable[[], Value], otherwise: Callable[[], Value]
    ) -> Value:
        scope = self.b.if_(cond, [ty])
        with scope as (t, e):
            with t:
                self.b.yield_(then())
            with e:
                self.b.yield_(otherwise())
        return scope.results[0]

    def loop(
        self,
        lb: Int,
        ub: Int,
        step: Int | None,
        init: list[Value],
        body: Callable[[Value, list[Value]], list[Value]],
        attrs: dict | None = None,
    ) -> list[Value]:
        """for i = lb; i < ub; i += step with loop-carried `init`; body(i, carried) returns the
        next carried values. Returns the final values."""
        step_v = None if step is None or self.f.known(step) == 1 else self.idx(step)
        scope = self.b.for_(self.idx(lb), self.idx(ub), step_v, init=init, attrs=attrs)
        with scope as params:
            params = params if isinstance(params, tuple) else (params,)
            out = body(params[0], list(params[1:]))
            if init:
                self.b.yield_(*out)
        return scope.results

    # ---- the BLAS update -------------------------------------------------------------------------

    def scale(self, alpha: Value, x: Value) -> Value:
        """alpha*x in x's (element) type; folds a known alpha of 1."""
        if known_number(alpha) == 1:
            return x
        return self.binary("mul", self.promote(alpha, x.type), x)

    def combine(self, val: Value, beta: Value, load_c: Callable[[], Value]) -> Value | None:
        """val + beta*C, with C loaded only when beta may be non-zero; the type is val's.

        Returns None when beta is known to be 0 and val is the result as is."""
        k = known_number(beta)
        if k == 0:
            return None
        ty = val.type

        def with_c() -> Value:
            c = load_c()
            if k == 1:
                return self.binary("add", val, c)
            if isinstance(ty, NumberType):
                bc = self.binary("mul", self.promote(beta, ty), c)
            else:
                bc = self.binary(
                    "cooperative_matrix_scale", self.promote(beta, element_type(ty)), c
                )
            return self.binary("add", val, bc)

        if k is not None:
            return with_c()
        return self.if_value(self.beta_is_zero(beta, False), ty, with_c, lambda: val)

    def beta_is_zero(self, beta: Value, zero: bool = True) -> Value:
        """The run-time test of beta against 0 that decides whether C is read: `equal` (ordered)
        when `zero`, else its complement `not_equal` (unordered), so a NaN beta reads C."""
        return self.binary("equal" if zero else "not_equal", beta, self.zero(beta.type))

    def atomic_op(self, beta: Value) -> str:
        """atomic_store for a constant beta 0, atomic_add for 1; else ir_invalid_beta."""
        k = known_number(beta)
        if k == 0:
            return "store"
        if k == 1:
            return "add"
        raise self.inst.error(
            Status.ir_invalid_beta, "atomic update needs a constant beta of 0 or 1", beta
        )

    def update(self, alpha: Value, ab: Value, beta: Value, c: Value, index: list[Value]) -> None:
        """C[index] := alpha*ab + beta*C[index] in C's element type (atomically if .atomic)."""
        ty = as_memref(c.type).element
        val = self.scale(alpha, self.promote(ab, ty))
        if self.atomic:
            operands = {"val": val, "operand": c, "index_list": index}
            props = {"scope": SCOPE, "semantics": SEMANTICS}
            self.b.emit("atomic_" + self.atomic_op(beta), operands, props)
            return
        out = self.combine(val, beta, lambda: self.load(c, index))
        self.store(val if out is None else out, c, index)
