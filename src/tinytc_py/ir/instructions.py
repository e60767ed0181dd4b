"""Every instruction of the tensor language: family classes carry the verification of the
reference's "Restrictions"; the table at the bottom defines each instruction once, and the leaf
classes are made from it.
"""

from __future__ import annotations

from typing import Any

from ..errors import CompilationError, Status
from . import checks
from .enums import (
    CheckedFlag,
    Comp3,
    MatrixUse,
    MemoryScope,
    MemorySemantics,
    ReduceMode,
    Transpose,
)
from .inst import Exec, Inst, InstSpec, Prop
from .types import (
    DYNAMIC,
    BooleanType,
    CoopmatrixType,
    MemrefType,
    NumberType,
    ScalarKind,
    Type,
    canonical_stride,
    dyn_str,
    element_type,
    promote,
)
from .values import Value

# ---- shared property declarations --------------------------------------------------------------

ATOMIC = Prop("atomic", "flag", False)
TRANS_A = Prop("tA", Transpose, Transpose.n)
TRANS_B = Prop("tB", Transpose, Transpose.n)
CHECKED = Prop("checked", CheckedFlag, CheckedFlag.none)
SCOPE = Prop("scope", MemoryScope, MemoryScope.work_group)
SEMANTICS = Prop("semantics", MemorySemantics, MemorySemantics.relaxed)
COMP3 = Prop("mode", Comp3, None)  # required: the grammar has no default component


def _result(inst: Inst) -> Type:
    return inst.results[0].type


# ---- collective linear algebra ------------------------------------------------------------------


class BlasInst(Inst):
    """Shared checks of the BLAS-like instructions (alpha/beta promotion, atomic beta)."""

    __slots__ = ()

    def check_scalars(self, out: MemrefType, out_name: str) -> None:
        alpha, beta = self.operand("alpha"), self.operand("beta")
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


class BlasA2Inst(BlasInst):
    """B := alpha op(A) + beta B style instructions (axpby, cumsum, sum)."""

    __slots__ = ()

    def check_a_b_types(self, a: MemrefType, b: MemrefType, b_name: str = "B") -> None:
        alpha = self.operand("alpha")
        checks.promotable(
            self,
            alpha.type,
            a.element,
            alpha,
            self.operand("A"),
            what="type of alpha to element type of A",
        )
        checks.promotable(
            self,
            a.element,
            b.element,
            self.operand("A"),
            self.operand("B"),
            what=f"element type of A to element type of {b_name}",
        )


class AxpbyInst(BlasA2Inst):
    __slots__ = ()

    def verify(self) -> None:
        A, B = self.operand("A"), self.operand("B")
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
        A, B = self.operand("A"), self.operand("B")
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
        A, B = self.operand("A"), self.operand("B")
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
        A, B, C = self.operand("A"), self.operand("B"), self.operand("C")
        na, nb, nc = names
        ab = promote(a.element, b.element)
        if ab is None:
            raise self.error(
                Status.ir_forbidden_promotion,
                f"element types {a.element} of {na} and {b.element} of {nb} "
                "have no common promoted type",
                A,
                B,
            )
        alpha = self.operand("alpha")
        checks.promotable(
            self,
            alpha.type,
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
            v = self.operand(key)
            types.append(checks.memref_order(self, v, (order,), status[order], name))
        a, b, c = types
        self.check_scalars(c, names[2])
        return a, b, c


class GemmInst(BlasA3Inst):
    __slots__ = ()

    def verify(self) -> None:
        a, b, c = self.operands3((2, 2, 2))
        A, B, C = self.operand("A"), self.operand("B"), self.operand("C")
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
        A, B, C = self.operand("A"), self.operand("B"), self.operand("C")
        opa = _op(self.props["tA"], a.shape)
        _shape_eq(self, opa[1:], b.shape, A, B, what="columns(op(A)) must equal rows(b)")
        _shape_eq(self, c.shape, opa[:1], A, C, what="rows(c) must equal rows(op(A))")
        self.check_types(a, b, c, "Abc")


class GerInst(BlasA3Inst):
    __slots__ = ()

    def verify(self) -> None:
        a, b, c = self.operands3((1, 1, 2), "abC")
        A, B, C = self.operand("A"), self.operand("B"), self.operand("C")
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
        A, B, C = self.operand("A"), self.operand("B"), self.operand("C")
        c = checks.memref_order(self, C, (1, 2), Status.ir_expected_memref_order_1_or_2, "c")
        a = checks.memref_order(self, A, (c.order,), Status.ir_incompatible_shapes, "a")
        b = checks.memref_order(self, B, (c.order,), Status.ir_incompatible_shapes, "b")
        self.check_scalars(c, "c")
        _shape_eq(self, a.shape, c.shape, A, C, what="shape(a) must equal shape(c)")
        _shape_eq(self, b.shape, c.shape, B, C, what="shape(b) must equal shape(c)")
        self.check_types(a, b, c, "abc")


# ---- other collective instructions ----------------------------------------------------------------


class AllocaInst(Inst):
    __slots__ = ()

    def verify(self) -> None:
        ty = _result(self)
        if not isinstance(ty, MemrefType):
            raise self.error(Status.ir_expected_memref, f"alloca must return a memref, not {ty}")
        if ty.is_dynamic:
            raise self.error(
                Status.ir_invalid_shape, f"alloca needs a static shape and stride, got {ty}"
            )
        if ty.addrspace.text != "local":
            raise self.error(
                Status.ir_expected_local_address_space,
                f"alloca must return a memref in the local address space, got {ty}",
            )
        align = self.attrs.get("alignment") if self.attrs is not None else None
        if align is None:
            return
        value = getattr(align, "value", None)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.error(Status.ir_expected_integer_attribute, "alignment must be an integer")
        if value <= 0 or value & (value - 1) or value % ty.element.size:
            raise self.error(
                Status.ir_insufficient_alignment,
                f"alignment {value} must be a power of two and a multiple of the element size",
            )


class LoopRangeMixin:
    """from/to lists of foreach and foreach_tile."""

    __slots__ = ()

    def check_ranges(self: Any) -> list[Type]:
        frm, to = self.operand_list("from"), self.operand_list("to")
        if not frm or len(frm) != len(to):
            raise self.error(
                Status.ir_from_to_mismatch, "from and to lists must be non-empty and equally long"
            )
        for f, t in zip(frm, to):
            fty = checks.integer(self, f, "loop bound")
            checks.same_type(
                self, fty, t.type, Status.ir_number_mismatch, "loop bounds differ", f, t
            )
        return [f.type for f in frm]


class ForeachInst(LoopRangeMixin, Inst):
    __slots__ = ()
    region_kinds = (Exec.spmd,)

    def verify(self) -> None:
        self.check_ranges()

    def region_param_types(self) -> list[list[Type]]:
        return [[f.type for f in self.operand_list("from")]]


class ForeachTileInst(LoopRangeMixin, Inst):
    __slots__ = ()
    region_kinds = (Exec.spmd,)

    def verify(self) -> None:
        types = self.check_ranges()
        tile = self.props["tile_shape"]
        if len(tile) != len(types):
            raise self.error(
                Status.ir_from_tile_shape_mismatch, "tile shape and loop range differ in length"
            )
        if any(t <= 0 for t in tile):
            raise self.error(Status.ir_invalid_shape, "tile shape entries must be positive")

    def region_param_types(self) -> list[list[Type]]:
        types = [f.type for f in self.operand_list("from")]
        return [types + types]


class ParallelInst(Inst):
    __slots__ = ()
    region_kinds = (Exec.spmd,)


class LifetimeStopInst(Inst):
    __slots__ = ()

    def verify(self) -> None:
        obj = self.operand("object")
        if not isinstance(obj.defining_inst, AllocaInst):
            raise self.error(
                Status.ir_expected_memref, "lifetime_stop needs a value returned by alloca", obj
            )


# ---- mixed: arithmetic, comparison, math, cast, constant ---------------------------------------------

_NUMBER_FAMILY_STATUS = {
    "bool": Status.ir_boolean_unsupported,
    "int": Status.ir_int_unsupported,
    "float": Status.ir_fp_unsupported,
    "complex": Status.ir_complex_unsupported,
}


def _family(ty: Type) -> str:
    return "bool" if isinstance(ty, BooleanType) else ty.kind.family


class ArithInst(Inst):
    """Scalar or component-wise coopmatrix arithmetic; `allowed` lists the type families."""

    __slots__ = ()
    allowed: frozenset[str] = frozenset()

    def check_allowed(self, ty: Type, v: Value) -> None:
        scalar = element_type(ty)
        if not isinstance(scalar, (NumberType, BooleanType)):
            raise self.error(
                Status.ir_expected_coopmatrix_number_or_boolean,
                "operand must be a number, boolean or coopmatrix",
                v,
            )
        fam = _family(scalar)
        if fam not in self.allowed:
            raise self.error(_NUMBER_FAMILY_STATUS[fam], f"{self.name} does not accept {scalar}", v)


class ArithBinaryInst(ArithInst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["a"].type

    def verify(self) -> None:
        a, b = self.operand("a"), self.operand("b")
        self.check_allowed(a.type, a)
        checks.same_type(
            self, a.type, b.type, Status.ir_number_mismatch, "operand types differ", a, b
        )
        checks.same_type(
            self,
            a.type,
            _result(self),
            Status.ir_operand_type_must_match_return_type,
            "operand type must match the result type",
            a,
        )


class ArithUnaryInst(ArithInst):
    """Unary arithmetic; abs/im/re return the component type of a complex operand."""

    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        ty = operands["a"].type
        if cls.to_component and isinstance(ty, NumberType) and ty.is_complex:
            return ty.component_type
        return ty

    to_component = False

    def verify(self) -> None:
        a = self.operand("a")
        self.check_allowed(a.type, a)
        expected = a.type
        scalar = element_type(a.type)
        if self.to_component and isinstance(scalar, NumberType) and scalar.is_complex:
            comp = scalar.component_type
            expected = comp
            if isinstance(a.type, CoopmatrixType):
                t = a.type
                expected = t.ctx.coopmatrix(comp, t.rows, t.cols, t.use)
        if expected is not _result(self):
            raise self.error(
                Status.ir_operand_type_must_match_return_type,
                f"{self.name} of {a.type} returns {expected}, not {_result(self)}",
                a,
            )


class MathInst(ArithInst):
    """Scalar math (cos, exp, native_log, ...): operand and result types are equal."""

    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["a"].type

    def verify(self) -> None:
        a = self.operand("a")
        if not isinstance(a.type, NumberType):
            raise self.error(Status.ir_expected_number, "operand must be a scalar number", a)
        self.check_allowed(a.type, a)
        checks.same_type(
            self,
            a.type,
            _result(self),
            Status.ir_operand_type_must_match_return_type,
            "operand type must match the result type",
            a,
        )


class CompareInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return next(iter(operands.values())).type.ctx.bool

    ordered = False

    def verify(self) -> None:
        a, b = self.operand("a"), self.operand("b")
        ty = checks.number(self, a)
        checks.same_type(self, ty, b.type, Status.ir_number_mismatch, "operand types differ", a, b)
        if self.ordered and ty.is_complex:
            raise self.error(
                Status.ir_complex_unsupported, f"{self.name} is not defined on {ty}", a
            )
        if not isinstance(_result(self), BooleanType):
            raise self.error(Status.ir_expected_boolean, "comparison returns bool")


_CAST_FORBIDDEN = {("complex", "int"), ("complex", "float")}


class CastInst(Inst):
    __slots__ = ()

    def verify(self) -> None:
        a = self.operand("a")
        src, dst = a.type, _result(self)
        if isinstance(dst, CoopmatrixType):
            s = checks.coopmatrix(self, a)
            if s.shape != dst.shape:
                raise self.error(
                    Status.ir_incompatible_shapes,
                    f"cast must keep the shape ({s.rows}x{s.cols} vs {dst.rows}x{dst.cols})",
                    a,
                )
            if s.use is not dst.use and not (
                s.use is MatrixUse.acc and dst.use in (MatrixUse.a, MatrixUse.b)
            ):
                raise self.error(
                    Status.ir_invalid_matrix_use,
                    f"cannot cast {s.use.text} to {dst.use.text}",
                    a,
                )
            src, dst = s.component, dst.component
        else:
            checks.number(self, a)
            if not isinstance(dst, NumberType):
                raise self.error(Status.ir_expected_number, "cast result must be a number type")
        if (src.kind.family, dst.kind.family) in _CAST_FORBIDDEN:
            raise self.error(Status.ir_forbidden_cast, f"cannot cast {src} to {dst}", a)


_INT_BITS = {ScalarKind.i8: 8, ScalarKind.i16: 16, ScalarKind.i32: 32}


class ConstantInst(Inst):
    """`value` is a bool, int, float or (re, im) tuple matching the (component) type."""

    __slots__ = ()

    def verify(self) -> None:
        ty = _result(self)
        scalar = element_type(ty)
        value = self.props["value"]
        if not isinstance(scalar, (BooleanType, NumberType)):
            raise self.error(Status.ir_expected_number, f"constant of type {ty} is not allowed")
        mismatch = checks.constant_kind_mismatch(value, scalar, ty)
        if mismatch is not None:
            raise self.error(Status.ir_constant_mismatch, mismatch)
        bits = _INT_BITS.get(scalar.kind) if isinstance(scalar, NumberType) else None
        if bits and not -(2 ** (bits - 1)) <= value < 2**bits:
            raise self.error(Status.ir_constant_mismatch, f"{value} does not fit into {scalar}")


# ---- mixed: memory --------------------------------------------------------------------------------


class AssociatedInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return next(iter(operands.values())).type.ctx.bool

    def verify(self) -> None:
        checks.memref_or_group(self, self.operand("operand"))
        if not isinstance(_result(self), BooleanType):
            raise self.error(Status.ir_expected_boolean, "associated returns bool")


class LoadInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        ty = operands["operand"].type
        return ty.element if isinstance(ty, MemrefType) else getattr(ty, "memref", None)

    def verify(self) -> None:
        t = self.operand("operand")
        ty = checks.index_list(self, t, self.operand_list("index_list"))
        expected = ty.element if isinstance(ty, MemrefType) else ty.memref
        checks.same_type(
            self,
            expected,
            _result(self),
            Status.ir_operand_type_must_match_return_type,
            "result type must match the element type",
            t,
        )


class StoreInst(Inst):
    """store / atomic_store / atomic_add|min|max: value, memref, indices (result if update)."""

    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["val"].type

    def verify(self) -> None:
        val, t = self.operand("val"), self.operand("operand")
        checks.memref(self, t)
        mt = checks.index_list(self, t, self.operand_list("index_list"))
        checks.same_type(
            self,
            val.type,
            mt.element,
            Status.ir_number_mismatch,
            "value type must match the element type",
            val,
            t,
        )
        if self.results:
            checks.same_type(
                self,
                _result(self),
                mt.element,
                Status.ir_operand_type_must_match_return_type,
                "result type must match the element type",
                t,
            )
        if self.name in ("atomic_min", "atomic_max") and mt.element.is_complex:
            raise self.error(
                Status.ir_complex_unsupported, f"{self.name} is not defined on {mt.element}", val
            )


class SizeInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["operand"].type.ctx.index

    def verify(self) -> None:
        t = self.operand("operand")
        ty = checks.memref_or_group(self, t)
        order = ty.order if isinstance(ty, MemrefType) else 1
        if not 0 <= self.props["mode"] < order:
            raise self.error(
                Status.ir_out_of_bounds,
                f"mode {self.props['mode']} out of bounds (0 <= mode < {order})",
                t,
            )
        r = _result(self)
        if not (isinstance(r, NumberType) and r.kind is ScalarKind.index):
            raise self.error(Status.ir_expected_index, "size returns index")


class SubviewInst(Inst):
    """Static offsets/sizes use DYNAMIC where the next dynamic operand gives the value."""

    __slots__ = ()

    def verify(self) -> None:
        t = self.operand("operand")
        mt = checks.memref(self, t)
        offs, sizes = self.props["static_offsets"], self.props["static_sizes"]
        dyn_offs, dyn_sizes = self.operand_list("offsets"), self.operand_list("sizes")
        if len(offs) != mt.order or len(sizes) != mt.order:
            raise self.error(
                Status.ir_invalid_number_of_indices,
                f"expected {mt.order} indices or slices, got {len(offs)}",
                t,
            )
        if offs.count(DYNAMIC) != len(dyn_offs) or sizes.count(DYNAMIC) != len(dyn_sizes):
            raise self.error(Status.ir_subview_mismatch, "dynamic offsets/sizes do not match", t)
        for v in dyn_offs + dyn_sizes:
            checks.index(self, v)
        for o, s, ext in zip(offs, sizes, mt.shape):
            if (o < 0 and o != DYNAMIC) or (s < 0 and s != DYNAMIC):
                raise self.error(Status.ir_invalid_slice, "offset and size must be non-negative", t)
            if (
                ext != DYNAMIC
                and DYNAMIC not in (o, s)
                and o + s > ext
                or (ext != DYNAMIC and o != DYNAMIC and o >= ext and ext > 0)
            ):
                raise self.error(
                    Status.ir_out_of_bounds, f"slice {o}:{s} exceeds mode size {ext}", t
                )
        _check_view_type(self, mt, *subview_layout(mt, sizes))


Layout = tuple[tuple[int, ...], tuple[int, ...]]


def subview_layout(src: MemrefType, sizes: tuple[int, ...]) -> Layout:
    """Shape and stride of a subview: a size of 0 (a single index) drops its mode, the others
    keep the mode's stride. Shared by the verifier and the front ends that infer result types."""
    shape, stride = [], []
    for size, step in zip(sizes, src.stride):
        if size != 0:
            shape.append(size)
            stride.append(step)
    return tuple(shape), tuple(stride)


def expand_layout(src: MemrefType, mode: int, static: tuple[int, ...]) -> Layout:
    """Shape and stride of `expand`: the mode becomes `static`, with canonical strides scaled by
    the mode's stride (dynamic where either is dynamic)."""
    base = src.stride[mode]
    sub = [
        DYNAMIC if base == DYNAMIC or s == DYNAMIC else s * base for s in canonical_stride(static)
    ]
    shape = src.shape[:mode] + tuple(static) + src.shape[mode + 1 :]
    return shape, src.stride[:mode] + tuple(sub) + src.stride[mode + 1 :]


def fuse_layout(src: MemrefType, frm: int, to: int) -> Layout:
    """Shape and stride of `fuse`: modes frm..to become one of their product size (dynamic if
    one is) with the first mode's stride."""
    fused = src.shape[frm : to + 1]
    size = DYNAMIC if DYNAMIC in fused else _prod(fused)
    return src.shape[:frm] + (size,) + src.shape[to + 1 :], src.stride[: frm + 1] + src.stride[
        to + 1 :
    ]


def _check_view_type(
    inst: Inst, src: MemrefType, shape: tuple[int, ...], stride: tuple[int, ...]
) -> None:
    """The result memref of subview/expand/fuse: same element type and address space, the given
    shape (dynamic where computed dynamic), and the stride or '?' in its place."""
    r = _result(inst)
    t = inst.operand("operand")
    if not isinstance(r, MemrefType):
        raise inst.error(Status.ir_expected_memref, "result must be a memref", t)
    if r.element is not src.element:
        raise inst.error(
            Status.ir_operand_type_must_match_return_type,
            f"result element type {r.element} must match the operand's element type {src.element}",
            t,
        )
    if r.addrspace is not src.addrspace:
        raise inst.error(
            Status.ir_address_space_mismatch,
            f"result address space {r.addrspace.text} must match the operand's address space "
            f"{src.addrspace.text}",
            t,
        )
    ok = r.shape == tuple(shape) and (
        r.stride == tuple(stride) or all(a in (b, DYNAMIC) for a, b in zip(r.stride, stride))
    )
    if not ok:
        try:
            expected = str(src.ctx.memref(src.element, shape, stride, src.addrspace))
        except CompilationError:  # a view of a dynamic mode may break the static stride rules
            expected = (
                f"a memref of shape {'x'.join(map(dyn_str, shape))} and stride "
                f"{','.join(map(dyn_str, stride))}"
            )
        raise inst.error(
            Status.ir_operand_type_must_match_return_type,
            f"result type must be {expected}, got {r}",
            t,
        )


class ExpandInst(Inst):
    __slots__ = ()

    def verify(self) -> None:
        t = self.operand("operand")
        mt = checks.memref(self, t)
        mode = self.props["expanded_mode"]
        static = list(self.props["static_expand_shape"])
        dyn = self.operand_list("expand_shape")
        if not 0 <= mode < mt.order:
            raise self.error(
                Status.ir_out_of_bounds, f"mode {mode} out of bounds (0 <= mode < {mt.order})", t
            )
        if len(static) < 2:
            raise self.error(
                Status.ir_expand_shape_order_too_small, "expand shape needs 2 modes", t
            )
        if static.count(DYNAMIC) != len(dyn):
            raise self.error(Status.ir_expand_shape_mismatch, "dynamic expand shape mismatch", t)
        for v in dyn:
            checks.index(self, v)
        if any(s <= 0 and s != DYNAMIC for s in static):
            raise self.error(Status.ir_invalid_shape, "expand shape entries must be positive", t)
        ext = mt.shape[mode]
        if DYNAMIC not in static and ext != DYNAMIC and _prod(static) != ext:
            raise self.error(
                Status.ir_invalid_shape, f"expand shape product must equal mode size {ext}", t
            )
        if DYNAMIC in static and ext != DYNAMIC and ext % _prod(s for s in static if s != DYNAMIC):
            raise self.error(
                Status.ir_invalid_shape, f"expand shape does not divide mode size {ext}", t
            )
        _check_view_type(self, mt, *expand_layout(mt, mode, tuple(static)))


def _prod(values) -> int:
    p = 1
    for v in values:
        p *= v
    return p


class FuseInst(Inst):
    __slots__ = ()

    def verify(self) -> None:
        t = self.operand("operand")
        mt = checks.memref(self, t)
        frm, to = self.props["from"], self.props["to"]
        if not 0 <= frm < to < mt.order:
            raise self.error(Status.ir_out_of_bounds, f"cannot fuse modes [{frm},{to}]", t)
        sh, st = mt.shape, mt.stride
        for k in range(frm, to):
            parts = (sh[k], st[k], st[k + 1])
            if DYNAMIC not in parts and st[k] * sh[k] != st[k + 1]:
                raise self.error(
                    Status.ir_invalid_stride,
                    f"modes {k} and {k + 1} cannot be fused: stride x size of mode {k} "
                    f"({st[k]}x{sh[k]} = {st[k] * sh[k]}) differs from stride {st[k + 1]} "
                    f"of mode {k + 1}",
                    t,
                )
        _check_view_type(self, mt, *fuse_layout(mt, frm, to))


class AtomicLoadInst(LoadInst):
    __slots__ = ()


class BarrierInst(Inst):
    __slots__ = ()


class BuiltinInst(Inst):
    """Builtin values; `result_kind` is the integer type the reference assigns."""

    __slots__ = ()
    result_kind = ScalarKind.i32

    def verify(self) -> None:
        r = _result(self)
        if not isinstance(r, NumberType) or r.kind is not self.result_kind:
            status = (
                Status.ir_expected_index
                if self.result_kind is ScalarKind.index
                else Status.ir_expected_i32
            )
            raise self.error(status, f"{self.name} returns {self.result_kind.text}")


# ---- control flow -------------------------------------------------------------------------------


_YIELDABLE = (BooleanType, NumberType, CoopmatrixType)


def _check_yieldable(inst: Inst, types: list[Type]) -> None:
    for ty in types:
        if not isinstance(ty, _YIELDABLE):
            raise inst.error(
                Status.ir_expected_coopmatrix_number_or_boolean,
                f"cannot return values of type {ty}",
            )


class ForInst(Inst):
    __slots__ = ()
    region_kinds = (Exec.mixed,)

    def verify(self) -> None:
        frm, to, step = self.operand("from"), self.operand("to"), self.operand("step")
        ty = checks.integer(self, frm, "loop bound")
        for v in (to, step):
            if v is not None:
                checks.same_type(
                    self, ty, v.type, Status.ir_number_mismatch, "loop range types differ", frm, v
                )
        init = self.operand_list("iter_init")
        types = [r.type for r in self.results]
        _check_yieldable(self, types)
        if len(init) != len(types) or any(v.type is not t for v, t in zip(init, types)):
            raise self.error(
                Status.ir_init_return_type_mismatch,
                "initial values must match the return types",
                *init,
            )
        self.check_attrs()

    def check_attrs(self) -> None:
        unroll = self.attrs.get("unroll") if self.attrs is not None else None
        if unroll is not None and not isinstance(getattr(unroll, "value", None), (bool, int)):
            raise self.error(
                Status.ir_expected_integer_attribute, "unroll must be a boolean or an integer"
            )

    def region_param_types(self) -> list[list[Type]]:
        return [[self.operand("from").type] + [r.type for r in self.results]]


class IfInst(Inst):
    __slots__ = ()
    region_kinds = (Exec.mixed, Exec.mixed)

    def verify(self) -> None:
        checks.boolean(self, self.operand("condition"))
        _check_yieldable(self, [r.type for r in self.results])


class YieldInst(Inst):
    __slots__ = ()


# ---- SPMD: builtins, subgroup operations, cooperative matrices -------------------------------------


class SubgroupBroadcastInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["a"].type

    def verify(self) -> None:
        a, idx = self.operand("a"), self.operand("idx")
        checks.number(self, a)
        checks.i32(self, idx, "subgroup local index")
        checks.same_type(
            self,
            a.type,
            _result(self),
            Status.ir_operand_type_must_match_return_type,
            "result type must match the operand type",
            a,
        )


class SubgroupOperationInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["a"].type

    ordered = False

    def verify(self) -> None:
        a = self.operand("a")
        ty = checks.number(self, a)
        if self.ordered and ty.is_complex:
            raise self.error(
                Status.ir_complex_unsupported, f"{self.name} is not defined on {ty}", a
            )
        checks.same_type(
            self,
            ty,
            _result(self),
            Status.ir_operand_type_must_match_return_type,
            "result type must match the operand type",
            a,
        )


def _coop_result(inst: Inst) -> CoopmatrixType:
    r = _result(inst)
    if not isinstance(r, CoopmatrixType):
        raise inst.error(Status.ir_expected_coopmatrix, "result must have coopmatrix type")
    return r


class CoopApplyInst(Inst):
    __slots__ = ()
    region_kinds = (Exec.spmd,)

    def verify(self) -> None:
        a = self.operand("a")
        ct = checks.coopmatrix(self, a)
        checks.same_type(
            self,
            ct,
            _result(self),
            Status.ir_operand_type_must_match_return_type,
            "result type must match the operand type",
            a,
        )

    def region_param_types(self) -> list[list[Type]]:
        ct = self.operand("a").type
        return [[ct.ctx.i32, ct.ctx.i32, ct.component]]


class CoopMemoryInst(Inst):
    """cooperative_matrix_load/store/atomic_*: a 2-d memref at (pos0, pos1)."""

    __slots__ = ()

    def check_memref(self, component: NumberType) -> MemrefType:
        t = self.operand("operand")
        mt = checks.memref_order(self, t, (2,), Status.ir_expected_memref_order_2, "M")
        checks.index(self, self.operand("pos0"))
        checks.index(self, self.operand("pos1"))
        if component is not mt.element:
            raise self.error(
                Status.ir_number_mismatch,
                f"component type {component} must match element type {mt.element}",
                t,
            )
        return mt


class CoopLoadInst(CoopMemoryInst):
    __slots__ = ()

    def verify(self) -> None:
        self.check_memref(_coop_result(self).component)


class CoopStoreInst(CoopMemoryInst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["val"].type

    def verify(self) -> None:
        val = self.operand("val")
        ct = checks.coopmatrix(self, val)
        mt = self.check_memref(ct.component)
        if self.results:
            checks.same_type(
                self,
                ct,
                _result(self),
                Status.ir_operand_type_must_match_return_type,
                "result type must match the operand type",
                val,
            )
            if self.name != "cooperative_matrix_atomic_add" and mt.element.is_complex:
                raise self.error(
                    Status.ir_complex_unsupported,
                    f"{self.name} is not defined on {mt.element}",
                    val,
                )


class CoopConstructInst(Inst):
    __slots__ = ()

    def verify(self) -> None:
        v = self.operand("number")
        ty = checks.number(self, v)
        ct = _coop_result(self)
        checks.same_type(
            self,
            ty,
            ct.component,
            Status.ir_number_mismatch,
            "number must match the component type",
            v,
        )


class CoopExtractInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return getattr(operands["mat"].type, "component", None)

    def verify(self) -> None:
        m = self.operand("mat")
        ct = checks.coopmatrix(self, m)
        if not 0 <= self.props["index"] < ct.rows * ct.cols:
            raise self.error(
                Status.ir_out_of_bounds, f"index {self.props['index']} out of bounds", m
            )
        checks.same_type(
            self,
            ct.component,
            _result(self),
            Status.ir_number_mismatch,
            "result must have the component type",
            m,
        )


class CoopInsertInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["mat"].type

    def verify(self) -> None:
        v, m = self.operand("val"), self.operand("mat")
        ct = checks.coopmatrix(self, m)
        if not 0 <= self.props["index"] < ct.rows * ct.cols:
            raise self.error(
                Status.ir_out_of_bounds, f"index {self.props['index']} out of bounds", m
            )
        checks.same_type(
            self,
            v.type,
            ct.component,
            Status.ir_number_mismatch,
            "inserted value must have the component type",
            v,
        )
        checks.same_type(
            self,
            ct,
            _result(self),
            Status.ir_operand_type_must_match_return_type,
            "result type must match the matrix type",
            m,
        )


class CoopMulAddInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["c"].type

    def verify(self) -> None:
        A, B, C = self.operand("a"), self.operand("b"), self.operand("c")
        a, b, c = (checks.coopmatrix(self, v) for v in (A, B, C))
        d = _coop_result(self)
        for ty, use, v in (
            (a, MatrixUse.a, A),
            (b, MatrixUse.b, B),
            (c, MatrixUse.acc, C),
            (d, MatrixUse.acc, None),
        ):
            if ty.use is not use:
                raise self.error(
                    Status.ir_invalid_matrix_use,
                    f"expected {use.text}, got {ty.use.text}",
                    *([v] if v else []),
                )
        if a.cols != b.rows:
            raise self.error(
                Status.ir_incompatible_shapes,
                f"columns(A) = {a.cols} must equal rows(B) = {b.rows}",
                A,
                B,
            )
        if c.rows != a.rows or c.cols != b.cols:
            raise self.error(
                Status.ir_incompatible_shapes,
                f"shape(C) = {c.rows}x{c.cols} must equal rows(A) x columns(B) = {a.rows}x{b.cols}",
                A,
                B,
                C,
            )
        if d.shape != c.shape:
            raise self.error(
                Status.ir_incompatible_shapes,
                f"result shape {d.rows}x{d.cols} must equal shape(C) = {c.rows}x{c.cols}",
                C,
            )
        ab = promote(a.component, b.component)
        if ab is None:
            raise self.error(
                Status.ir_forbidden_promotion,
                f"component types {a.component} of A and {b.component} of B have no common "
                "promoted type",
                A,
                B,
            )
        if not ab.promotable_to(c.component):
            raise self.error(
                Status.ir_forbidden_promotion,
                f"cannot promote {ab} (promoted component type of A and B) to {c.component} "
                "(component type of C)",
                A,
                B,
                C,
            )
        if (c.component.kind.family, d.component.kind.family) in _CAST_FORBIDDEN:
            raise self.error(
                Status.ir_forbidden_cast, f"cannot cast {c.component} to {d.component}", C
            )


class CoopPrefetchInst(Inst):
    __slots__ = ()

    def verify(self) -> None:
        t = self.operand("operand")
        checks.memref_order(self, t, (2,), Status.ir_expected_memref_order_2, "M")
        checks.index(self, self.operand("pos0"))
        checks.index(self, self.operand("pos1"))
        if self.props["cache_level"] < 0:
            raise self.error(Status.ir_out_of_bounds, "cache level must be non-negative", t)
        if self.props["rows"] <= 0 or self.props["cols"] <= 0:
            raise self.error(Status.ir_invalid_shape, "prefetch size must be positive", t)


class CoopReduceInst(Inst):
    __slots__ = ()

    def verify(self) -> None:
        a = self.operand("a")
        at = checks.coopmatrix(self, a)
        r = _coop_result(self)
        if r.component is not at.component or r.use is not at.use:
            raise self.error(
                Status.ir_operand_type_must_match_return_type,
                "component type and use must match the operand's",
                a,
            )
        shape = (at.rows, 1) if self.props["mode"] is ReduceMode.row else (1, at.cols)
        if r.shape != shape:
            raise self.error(
                Status.ir_invalid_shape, f"result shape must be {shape[0]}x{shape[1]}", a
            )
        if self.name != "cooperative_matrix_reduce_add" and at.component.is_complex:
            raise self.error(
                Status.ir_complex_unsupported, f"{self.name} is not defined on {at.component}", a
            )


class CoopScaleInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["b"].type

    def verify(self) -> None:
        s, m = self.operand("a"), self.operand("b")
        ct = checks.coopmatrix(self, m)
        checks.same_type(
            self,
            s.type,
            ct.component,
            Status.ir_number_mismatch,
            "scalar must have the component type",
            s,
            m,
        )
        checks.same_type(
            self,
            ct,
            _result(self),
            Status.ir_operand_type_must_match_return_type,
            "result type must match the matrix type",
            m,
        )


# ---- the table ------------------------------------------------------------------------------------

R = "result"
_CM = "cooperative_matrix_"
_INT_FAMILIES = frozenset({"int"})
_NUM = frozenset({"int", "float", "complex"})
_REAL = frozenset({"int", "float"})
_LOGIC = frozenset({"bool", "int"})

SPECS: list[tuple[type[Inst], InstSpec, dict[str, Any]]] = []


def _row(base: type[Inst], spec: InstSpec, **class_attrs: Any) -> None:
    SPECS.append((base, spec, class_attrs))


def _blas(
    name: str,
    base: type[Inst],
    props: tuple[Prop, ...],
    operands: tuple[str, ...],
    fmt: str,
    writes: str,
) -> None:
    reads = tuple(o for o in operands if o in ("A", "B") and o != writes)
    _row(
        base,
        InstSpec(
            name,
            props,
            operands,
            exec=Exec.collective,
            fmt=fmt,
            side_effects=True,
            reads=reads + (writes,),
            writes=(writes,),
        ),
    )


_A2 = ("alpha", "A", "beta", "B")
_A3 = ("alpha", "A", "B", "beta", "C")
_blas("axpby", AxpbyInst, (ATOMIC, TRANS_A), _A2, "$alpha , $A , $beta , $B", "B")
_blas(
    "cumsum",
    CumsumInst,
    (ATOMIC, Prop("mode", "int", 0)),
    _A2,
    "$alpha , $A , #mode , $beta , $B",
    "B",
)
_blas("sum", SumInst, (ATOMIC, TRANS_A), _A2, "$alpha , $A , $beta , $B", "B")
_blas("gemm", GemmInst, (ATOMIC, TRANS_A, TRANS_B), _A3, "$alpha , $A , $B , $beta , $C", "C")
_blas("gemv", GemvInst, (ATOMIC, TRANS_A), _A3, "$alpha , $A , $B , $beta , $C", "C")
_blas("ger", GerInst, (ATOMIC,), _A3, "$alpha , $A , $B , $beta , $C", "C")
_blas("hadamard", HadamardInst, (ATOMIC,), _A3, "$alpha , $A , $B , $beta , $C", "C")

_row(
    AllocaInst,
    InstSpec("alloca", result=R, exec=Exec.collective, fmt="attrs? : type", side_effects=True),
)
_row(
    ForeachInst,
    InstSpec(
        "foreach",
        operands=("from*", "to*"),
        regions=("body",),
        exec=Exec.collective,
        side_effects=True,
    ),
)
_row(
    ForeachTileInst,
    InstSpec(
        "foreach_tile",
        (Prop("tile_shape", "ints", ()),),
        ("from*", "to*"),
        regions=("body",),
        exec=Exec.collective,
        side_effects=True,
    ),
)
_row(ParallelInst, InstSpec("parallel", regions=("body",), exec=Exec.collective, side_effects=True))
_row(
    LifetimeStopInst,
    InstSpec(
        "lifetime_stop",
        operands=("object",),
        exec=Exec.collective,
        fmt="$object",
        side_effects=True,
    ),
)

for _name, _allowed in (
    ("add", _NUM),
    ("sub", _NUM),
    ("mul", _NUM),
    ("div", _NUM),
    ("rem", _REAL),
    ("max", _REAL),
    ("min", _REAL),
    ("shl", _INT_FAMILIES),
    ("shr", _INT_FAMILIES),
    ("and", _LOGIC),
    ("or", _LOGIC),
    ("xor", _LOGIC),
):
    _row(
        ArithBinaryInst,
        InstSpec(
            _name,
            operands=("a", "b"),
            result=R,
            fmt="$a , $b : type",
            builder_name=_name + "_" if _name in ("and", "or") else "",
        ),
        allowed=_allowed,
    )

for _name, _allowed, _to_comp in (
    ("abs", _NUM, True),
    ("neg", _NUM, False),
    ("not", _LOGIC, False),
    ("conj", frozenset({"complex"}), False),
    ("im", frozenset({"complex"}), True),
    ("re", frozenset({"complex"}), True),
):
    _row(
        ArithUnaryInst,
        InstSpec(
            _name,
            operands=("a",),
            result=R,
            fmt="$a : type",
            builder_name="not_" if _name == "not" else "",
        ),
        allowed=_allowed,
        to_component=_to_comp,
    )

_FLOAT = frozenset({"float"})
_FLOAT_COMPLEX = frozenset({"float", "complex"})
for _name in ("cos", "sin", "exp", "exp2", "log", "log2"):
    for _native in ("", "native_"):
        _allowed = _FLOAT_COMPLEX if _name.startswith("exp") else _FLOAT
        _row(
            MathInst,
            InstSpec(_native + _name, operands=("a",), result=R, fmt="$a : type"),
            allowed=_allowed,
        )

for _name, _ordered in (
    ("equal", False),
    ("not_equal", False),
    ("greater_than", True),
    ("greater_than_equal", True),
    ("less_than", True),
    ("less_than_equal", True),
):
    _row(
        CompareInst,
        InstSpec(_name, operands=("a", "b"), result=R, fmt="$a , $b : type"),
        ordered=_ordered,
    )

_row(AssociatedInst, InstSpec("associated", operands=("operand",), result=R, fmt="$operand : type"))
_MEM_IDX = ("operand", "index_list*")
_row(
    AtomicLoadInst,
    InstSpec(
        "atomic_load",
        (SCOPE, SEMANTICS),
        _MEM_IDX,
        R,
        fmt="$operand [ $index_list* ] : type",
        side_effects=True,
        reads=("operand",),
    ),
)
_row(
    StoreInst,
    InstSpec(
        "atomic_store",
        (SCOPE, SEMANTICS),
        ("val",) + _MEM_IDX,
        fmt="$val , $operand [ $index_list* ]",
        side_effects=True,
        writes=("operand",),
    ),
)
for _name in ("atomic_add", "atomic_max", "atomic_min"):
    _row(
        StoreInst,
        InstSpec(
            _name,
            (SCOPE, SEMANTICS),
            ("val",) + _MEM_IDX,
            R,
            fmt="$val , $operand [ $index_list* ] : type",
            side_effects=True,
            reads=("operand",),
            writes=("operand",),
        ),
    )
_row(
    BarrierInst, InstSpec("barrier", (Prop("fence_flags", "fence", 0),), fmt="", side_effects=True)
)
for _name, _kind, _exec, _has_mode in (
    ("group_id", ScalarKind.index, Exec.mixed, True),
    ("num_groups", ScalarKind.index, Exec.mixed, True),
    ("num_subgroups", ScalarKind.i32, Exec.mixed, True),
    ("subgroup_size", ScalarKind.i32, Exec.mixed, False),
    ("subgroup_id", ScalarKind.i32, Exec.spmd, True),
    ("subgroup_linear_id", ScalarKind.i32, Exec.spmd, False),
    ("subgroup_local_id", ScalarKind.i32, Exec.spmd, False),
):
    _row(
        BuiltinInst,
        InstSpec(_name, (COMP3,) if _has_mode else (), result=R, exec=_exec, fmt=": type"),
        result_kind=_kind,
    )
_row(CastInst, InstSpec("cast", operands=("a",), result=R, fmt="$a : type"))
_row(ConstantInst, InstSpec("constant", (Prop("value", "value", None),), result=R))
_row(
    ExpandInst,
    InstSpec(
        "expand",
        (Prop("expanded_mode", "int", 0), Prop("static_expand_shape", "ints", ())),
        ("operand", "expand_shape*"),
        R,
    ),
)
_row(
    FuseInst,
    InstSpec(
        "fuse",
        (Prop("from", "int", 0), Prop("to", "int", 0)),
        ("operand",),
        R,
        fmt="$operand [ #from , #to ] : type",
    ),
)
_row(
    ForInst,
    InstSpec(
        "for",
        operands=("from", "to", "step?", "iter_init*"),
        result="results*",
        regions=("body",),
        builder_name="for_",
    ),
)
_row(
    IfInst,
    InstSpec(
        "if",
        operands=("condition",),
        result="results*",
        regions=("then", "otherwise"),
        builder_name="if_",
    ),
)
_row(
    LoadInst,
    InstSpec(
        "load",
        operands=_MEM_IDX,
        result=R,
        fmt="$operand [ $index_list* ] : type",
        reads=("operand",),
    ),
)
_row(
    SizeInst,
    InstSpec("size", (Prop("mode", "int", 0),), ("operand",), R, fmt="$operand [ #mode ] : type"),
)
_row(
    SubviewInst,
    InstSpec(
        "subview",
        (Prop("static_offsets", "ints", ()), Prop("static_sizes", "ints", ())),
        ("operand", "offsets*", "sizes*"),
        R,
    ),
)
_row(
    StoreInst,
    InstSpec(
        "store",
        operands=("val",) + _MEM_IDX,
        fmt="$val , $operand [ $index_list* ]",
        side_effects=True,
        writes=("operand",),
    ),
)
_row(
    YieldInst,
    InstSpec("yield", operands=("yielded_vals*",), fmt="( $yielded_vals* )", side_effects=True),
)

_row(
    SubgroupBroadcastInst,
    InstSpec(
        "subgroup_broadcast",
        operands=("a", "idx"),
        result=R,
        exec=Exec.spmd,
        fmt="$a , $idx : type",
    ),
)
for _kind in ("exclusive_scan", "inclusive_scan", "reduce"):
    for _opn in ("add", "max", "min"):
        _row(
            SubgroupOperationInst,
            InstSpec(
                f"subgroup_{_kind}_{_opn}",
                operands=("a",),
                result=R,
                exec=Exec.spmd,
                fmt="$a : type",
            ),
            ordered=_opn != "add",
        )

_COOP_POS = ("operand", "pos0", "pos1")
_row(
    CoopApplyInst,
    InstSpec(_CM + "apply", operands=("a",), result=R, regions=("body",), exec=Exec.spmd),
)
_row(
    CoopLoadInst,
    InstSpec(
        _CM + "load",
        (TRANS_A, CHECKED),
        _COOP_POS,
        R,
        exec=Exec.spmd,
        fmt="$operand [ $pos0 , $pos1 ] : type",
        reads=("operand",),
    ),
)
_row(
    CoopLoadInst,
    InstSpec(
        _CM + "atomic_load",
        (TRANS_A, CHECKED, SCOPE, SEMANTICS),
        _COOP_POS,
        R,
        exec=Exec.spmd,
        fmt="$operand [ $pos0 , $pos1 ] : type",
        side_effects=True,
        reads=("operand",),
    ),
)
_row(
    CoopStoreInst,
    InstSpec(
        _CM + "store",
        (TRANS_A, CHECKED),
        ("val",) + _COOP_POS,
        exec=Exec.spmd,
        fmt="$val , $operand [ $pos0 , $pos1 ]",
        side_effects=True,
        writes=("operand",),
    ),
)
_row(
    CoopStoreInst,
    InstSpec(
        _CM + "atomic_store",
        (TRANS_A, CHECKED, SCOPE, SEMANTICS),
        ("val",) + _COOP_POS,
        exec=Exec.spmd,
        fmt="$val , $operand [ $pos0 , $pos1 ]",
        side_effects=True,
        writes=("operand",),
    ),
)
for _opn in ("add", "max", "min"):
    _row(
        CoopStoreInst,
        InstSpec(
            _CM + "atomic_" + _opn,
            (TRANS_A, CHECKED, SCOPE, SEMANTICS),
            ("val",) + _COOP_POS,
            R,
            exec=Exec.spmd,
            fmt="$val , $operand [ $pos0 , $pos1 ] : type",
            side_effects=True,
            reads=("operand",),
            writes=("operand",),
        ),
    )
_row(
    CoopConstructInst,
    InstSpec(
        _CM + "construct", operands=("number",), result=R, exec=Exec.spmd, fmt="$number : type"
    ),
)
_row(
    CoopExtractInst,
    InstSpec(
        _CM + "extract",
        (Prop("index", "int", 0),),
        ("mat",),
        R,
        exec=Exec.spmd,
        fmt="$mat [ #index ] : type",
    ),
)
_row(
    CoopInsertInst,
    InstSpec(
        _CM + "insert",
        (Prop("index", "int", 0),),
        ("val", "mat"),
        R,
        exec=Exec.spmd,
        fmt="$val , $mat [ #index ] : type",
    ),
)
_row(
    CoopMulAddInst,
    InstSpec(
        _CM + "mul_add",
        operands=("a", "b", "c"),
        result=R,
        exec=Exec.spmd,
        fmt="$a , $b , $c : type",
    ),
)
_row(
    CoopPrefetchInst,
    InstSpec(
        _CM + "prefetch",
        (Prop("cache_level", "int", 0), Prop("rows", "int", 0), Prop("cols", "int", 0)),
        _COOP_POS,
        exec=Exec.spmd,
        side_effects=True,
        fmt="#cache_level , $operand [ $pos0 , $pos1 ] , #rows , #cols",
    ),
)
for _opn in ("add", "max", "min"):
    _row(
        CoopReduceInst,
        InstSpec(
            _CM + "reduce_" + _opn,
            (Prop("mode", ReduceMode, None),),
            ("a",),
            R,
            exec=Exec.spmd,
            fmt="$a : type",
        ),
    )
_row(
    CoopScaleInst,
    InstSpec(_CM + "scale", operands=("a", "b"), result=R, exec=Exec.spmd, fmt="$a , $b : type"),
)


def _class_name(mnemonic: str) -> str:
    return "".join(p.capitalize() for p in mnemonic.split("_")) + "Inst"


INSTRUCTIONS: dict[str, type[Inst]] = {}
"""Mnemonic → leaf instruction class."""


def register(base: type[Inst], spec: InstSpec, **class_attrs: Any) -> type[Inst]:
    """Makes the leaf class of a table row and enters it in INSTRUCTIONS."""
    cls = type(
        _class_name(spec.mnemonic),
        (base,),
        {
            "__slots__": (),
            "spec": spec,
            "name": spec.mnemonic,
            "variadic": frozenset(o[:-1] for o in spec.operands if o.endswith("*")),
            **class_attrs,
        },
    )
    INSTRUCTIONS[spec.mnemonic] = cls
    return cls


for _base, _spec, _attrs in SPECS:
    register(_base, _spec, **_attrs)

# The language extensions' rows register themselves (whichever of the two modules loads first).
from . import extensions as _extensions  # noqa: E402,F401
