"""The collective linear-algebra family: axpby, cumsum, sum, gemm, gemv, ger and hadamard. The
base classes check what the reference's Restrictions share (alpha/beta promotion, an atomic
update's constant beta, shapes of op(A)); each instruction checks its own shapes."""

from __future__ import annotations

from ...errors import Status
from .. import checks
from ..enums import (
    Transpose,
)
from ..inst import Exec, Inst, InstSpec, Prop
from ..types import (
    DYNAMIC,
    MemrefType,
    dyn_str,
    promote,
)
from ..values import Value
from .arith import ConstantInst
from .common import (
    ATOMIC,
    TRANS_A,
    TRANS_B,
    Row,
)


def _op(t: Transpose, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(reversed(shape)) if t is Transpose.t and len(shape) == 2 else shape


def _shape_eq(
    inst: Inst, a: tuple[int, ...], b: tuple[int, ...], *values: Value, what: str = ""
) -> None:
    """Static extents must agree; a dynamic extent matches anything. `what` states the rule."""
    if len(a) != len(b) or any(x != y and DYNAMIC not in (x, y) for x, y in zip(a, b)):
        fa = "x".join(dyn_str(x) for x in a) or "scalar"
        fb = "x".join(dyn_str(x) for x in b) or "scalar"
        detail = f"incompatible shapes {fa} and {fb}" + (f" ({what})" if what else "")
        raise inst.error(Status.ir_incompatible_shapes, detail, *values)


class BlasInst(Inst):
    """Shared checks of the BLAS-like instructions (alpha/beta promotion, atomic beta)."""

    __slots__ = ()

    def check_scalars(self, out: MemrefType, out_name: str) -> None:
        alpha, beta = self.required("alpha"), self.required("beta")
        checks.number(self, alpha, "alpha")
        b_ty = checks.number(self, beta, "beta")
        checks.promotable(
            self, b_ty, out.element, beta, what=f"type of beta to element type of {out_name}"
        )
        if self.props["atomic"]:
            self.check_atomic_beta(beta)

    def check_atomic_beta(self, beta: Value) -> None:
        d = beta.defining_inst
        value = d.props.get("value") if isinstance(d, ConstantInst) else None
        if isinstance(value, tuple):
            value = value[0] if value[1] == 0 else None
        if value is None or value not in (0, 1) or isinstance(value, bool):
            raise self.error(
                Status.ir_invalid_beta, "atomic update needs a constant beta of 0 or 1", beta
            )


class BlasA2Inst(BlasInst):
    """B := alpha op(A) + beta B style instructions (axpby, cumsum, sum)."""

    __slots__ = ()

    def check_a_b_types(self, a: MemrefType, b: MemrefType, b_name: str = "B") -> None:
        alpha = self.required("alpha")
        checks.promotable(
            self,
            checks.number(self, alpha, "alpha"),
            a.element,
            alpha,
            self.required("A"),
            what="type of alpha to element type of A",
        )
        checks.promotable(
            self,
            a.element,
            b.element,
            self.required("A"),
            self.required("B"),
            what=f"element type of A to element type of {b_name}",
        )


class AxpbyInst(BlasA2Inst):
    __slots__ = ()

    def verify(self) -> None:
        A, B = self.required("A"), self.required("B")
        a = checks.memref(self, A, "A")
        b = checks.memref_order(self, B, (0, 1, 2), Status.ir_expected_memref_order_0_1_or_2, "B")
        self.check_scalars(b, "B")
        _shape_eq(
            self,
            b.shape,
            _op(self.props["tA"], a.shape),
            A,
            B,
            what="shape(B) must equal shape(op(A))",
        )
        self.check_a_b_types(a, b)


class CumsumInst(BlasA2Inst):
    __slots__ = ()

    def verify(self) -> None:
        A, B = self.required("A"), self.required("B")
        a = checks.memref(self, A, "A")
        b = checks.memref(self, B, "B")
        if a.order < 1:
            raise self.error(Status.ir_expected_non_scalar_memref, "A must have order >= 1", A)
        mode = self.props["mode"]
        if not 0 <= mode < a.order:
            raise self.error(
                Status.ir_out_of_bounds,
                f"summation mode {mode} is not a mode of A (order {a.order})",
                A,
            )
        self.check_scalars(b, "B")
        _shape_eq(self, a.shape, b.shape, A, B, what="shape(A) must equal shape(B)")
        self.check_a_b_types(a, b)


class SumInst(BlasA2Inst):
    __slots__ = ()

    def verify(self) -> None:
        A, B = self.required("A"), self.required("B")
        a = checks.memref(self, A, "A")
        b = checks.memref_order(self, B, (0, 1), Status.ir_expected_memref_order_0_or_1, "b")
        self.check_scalars(b, "b")
        if a.order != b.order + 1:
            raise self.error(
                Status.ir_incompatible_shapes, "order(A) must equal order(b) + 1", A, B
            )
        if b.order == 1:
            _shape_eq(
                self,
                b.shape[:1],
                _op(self.props["tA"], a.shape)[:1],
                A,
                B,
                what="rows(b) must equal rows(op(A))",
            )
        self.check_a_b_types(a, b, "b")


class BlasA3Inst(BlasInst):
    """C := alpha op(A) op(B) + beta C style instructions (gemm, gemv, ger, hadamard)."""

    __slots__ = ()

    def check_types(self, a: MemrefType, b: MemrefType, c: MemrefType, names: str = "ABC") -> None:
        A, B, C = self.required("A"), self.required("B"), self.required("C")
        na, nb, nc = names[0], names[1], names[2]
        ab = promote(a.element, b.element)
        if ab is None:
            raise self.error(
                Status.ir_forbidden_promotion,
                f"element types {a.element} of {na} and {b.element} of {nb} "
                "have no common promoted type",
                A,
                B,
            )
        alpha = self.required("alpha")
        checks.promotable(
            self,
            checks.number(self, alpha, "alpha"),
            ab,
            alpha,
            what=f"type of alpha to promoted element type of {na} and {nb}",
        )
        checks.promotable(
            self,
            ab,
            c.element,
            A,
            B,
            C,
            what=f"promoted element type of {na} and {nb} to element type of {nc}",
        )

    def operands3(
        self, orders: tuple[int, int, int], names: str = "ABC"
    ) -> tuple[MemrefType, MemrefType, MemrefType]:
        status = {
            0: Status.ir_expected_memref_order_0,
            1: Status.ir_expected_memref_order_1,
            2: Status.ir_expected_memref_order_2,
        }
        types = []
        for key, name, order in zip("ABC", names, orders):
            v = self.required(key)
            types.append(checks.memref_order(self, v, (order,), status[order], name))
        a, b, c = types
        self.check_scalars(c, names[2])
        return a, b, c


class GemmInst(BlasA3Inst):
    __slots__ = ()

    def verify(self) -> None:
        a, b, c = self.operands3((2, 2, 2))
        A, B, C = self.required("A"), self.required("B"), self.required("C")
        opa, opb = _op(self.props["tA"], a.shape), _op(self.props["tB"], b.shape)
        _shape_eq(self, opa[1:], opb[:1], A, B, what="columns(op(A)) must equal rows(op(B))")
        _shape_eq(
            self,
            c.shape,
            (opa[0], opb[1]),
            A,
            B,
            C,
            what="shape(C) must equal rows(op(A)) x columns(op(B))",
        )
        self.check_types(a, b, c)


class GemvInst(BlasA3Inst):
    __slots__ = ()

    def verify(self) -> None:
        a, b, c = self.operands3((2, 1, 1), "Abc")
        A, B, C = self.required("A"), self.required("B"), self.required("C")
        opa = _op(self.props["tA"], a.shape)
        _shape_eq(self, opa[1:], b.shape, A, B, what="columns(op(A)) must equal rows(b)")
        _shape_eq(self, c.shape, opa[:1], A, C, what="rows(c) must equal rows(op(A))")
        self.check_types(a, b, c, "Abc")


class GerInst(BlasA3Inst):
    __slots__ = ()

    def verify(self) -> None:
        a, b, c = self.operands3((1, 1, 2), "abC")
        A, B, C = self.required("A"), self.required("B"), self.required("C")
        _shape_eq(
            self,
            c.shape,
            (a.shape[0], b.shape[0]),
            A,
            B,
            C,
            what="shape(C) must equal rows(a) x rows(b)",
        )
        self.check_types(a, b, c, "abC")


class HadamardInst(BlasA3Inst):
    __slots__ = ()

    def verify(self) -> None:
        A, B, C = self.required("A"), self.required("B"), self.required("C")
        c = checks.memref_order(self, C, (1, 2), Status.ir_expected_memref_order_1_or_2, "c")
        a = checks.memref_order(self, A, (c.order,), Status.ir_incompatible_shapes, "a")
        b = checks.memref_order(self, B, (c.order,), Status.ir_incompatible_shapes, "b")
        self.check_scalars(c, "c")
        _shape_eq(self, a.shape, c.shape, A, C, what="shape(a) must equal shape(c)")
        _shape_eq(self, b.shape, c.shape, B, C, what="shape(b) must equal shape(c)")
        self.check_types(a, b, c, "abc")


# ---- the table rows ------------------------------------------------------------------------------

_A2 = ("alpha", "A", "beta", "B")
_A3 = ("alpha", "A", "B", "beta", "C")


def _blas(
    cls: type[Inst], mnemonic: str, props: tuple[Prop, ...], operands: tuple[str, ...], fmt: str
) -> Row:
    """A row of a collective BLAS-like instruction: reads A (and B), updates its last operand."""
    writes = operands[-1]
    reads = tuple(o for o in operands if o in ("A", "B") and o != writes)
    spec = InstSpec(
        mnemonic,
        props,
        operands,
        exec=Exec.collective,
        fmt=fmt,
        side_effects=True,
        reads=reads + (writes,),
        writes=(writes,),
    )
    return (cls, spec, {})


ROWS: list[Row] = [
    _blas(AxpbyInst, "axpby", (ATOMIC, TRANS_A), _A2, "$alpha , $A , $beta , $B"),
    _blas(
        CumsumInst,
        "cumsum",
        (ATOMIC, Prop("mode", "int", 0)),
        _A2,
        "$alpha , $A , #mode , $beta , $B",
    ),
    _blas(SumInst, "sum", (ATOMIC, TRANS_A), _A2, "$alpha , $A , $beta , $B"),
    _blas(GemmInst, "gemm", (ATOMIC, TRANS_A, TRANS_B), _A3, "$alpha , $A , $B , $beta , $C"),
    _blas(GemvInst, "gemv", (ATOMIC, TRANS_A), _A3, "$alpha , $A , $B , $beta , $C"),
    _blas(GerInst, "ger", (ATOMIC,), _A3, "$alpha , $A , $B , $beta , $C"),
    _blas(HadamardInst, "hadamard", (ATOMIC,), _A3, "$alpha , $A , $B , $beta , $C"),
]
