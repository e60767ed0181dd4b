"""Memory: alloca / lifetime_stop, load / store and their atomic forms, and the memref views
(subview, expand, fuse, size, associated) with the layout arithmetic the views share with the
legacy syntax."""

from __future__ import annotations

from typing import Any

from ...errors import CompilationError, Status
from .. import checks
from ..enums import ResultUniformity, Syntax
from ..inst import Exec, Inst, InstSpec, Prop
from ..types import (
    DYNAMIC,
    BooleanType,
    MemrefType,
    NumberType,
    ScalarKind,
    Type,
    canonical_stride,
    dyn_str,
)
from .common import (
    SCOPE,
    SEMANTICS,
    R,
    Row,
    result_type,
)


class AllocaInst(Inst):
    __slots__ = ()

    def verify(self) -> None:
        ty = result_type(self)
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


class LifetimeStopInst(Inst):
    __slots__ = ()

    def verify(self) -> None:
        obj = self.required("object")
        if not isinstance(obj.defining_inst, AllocaInst):
            raise self.error(
                Status.ir_expected_memref, "lifetime_stop needs a value returned by alloca", obj
            )


class AssociatedInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return next(iter(operands.values())).type.ctx.bool

    def verify(self) -> None:
        checks.memref_or_group(self, self.required("operand"))
        if not isinstance(result_type(self), BooleanType):
            raise self.error(Status.ir_expected_boolean, "associated returns bool")


class LoadInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        ty = operands["operand"].type
        return ty.element if isinstance(ty, MemrefType) else getattr(ty, "memref", None)

    def verify(self) -> None:
        t = self.required("operand")
        ty = checks.index_list(self, t, self.operand_list("index_list"))
        expected = ty.element if isinstance(ty, MemrefType) else ty.memref
        result = result_type(self)
        if result is not expected:  # (the Status member on the error path only: arith.py)
            checks.same_type(
                self,
                expected,
                result,
                Status.ir_operand_type_must_match_return_type,
                "result type must match the element type",
                t,
            )


class AtomicLoadInst(LoadInst):
    __slots__ = ()


class ElementStoreInst(Inst):
    """store / atomic_store / atomic_add|min|max: value, memref, indices (result if update)."""

    __slots__ = ()
    is_family = True

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["val"].type

    def verify(self) -> None:
        val, t = self.required("val"), self.required("operand")
        mt = checks.memref(self, t)
        checks.index_list(self, t, self.operand_list("index_list"))
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
                result_type(self),
                mt.element,
                Status.ir_operand_type_must_match_return_type,
                "result type must match the element type",
                t,
            )
        if self.name in ("atomic_min", "atomic_max") and mt.element.is_complex:
            raise self.error(
                Status.ir_complex_unsupported, f"{self.name} is not defined on {mt.element}", val
            )


class AtomicStoreInst(ElementStoreInst):
    """atomic_store: a store with memory scope and semantics."""

    __slots__ = ()


class AtomicUpdateInst(ElementStoreInst):
    """atomic_add / atomic_max / atomic_min: update in place, result is the old value."""

    __slots__ = ()
    is_family = True


class SizeInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["operand"].type.ctx.index

    def verify(self) -> None:
        t = self.required("operand")
        ty = checks.memref_or_group(self, t)
        order = ty.order if isinstance(ty, MemrefType) else 1
        if not 0 <= self.props["mode"] < order:
            raise self.error(
                Status.ir_out_of_bounds,
                f"mode {self.props['mode']} out of bounds (0 <= mode < {order})",
                t,
            )
        r = result_type(self)
        if not (isinstance(r, NumberType) and r.kind is ScalarKind.index):
            raise self.error(Status.ir_expected_index, "size returns index")


class SubviewInst(Inst):
    """Static offsets/sizes use DYNAMIC where the next dynamic operand gives the value."""

    __slots__ = ()

    def verify(self) -> None:
        t = self.required("operand")
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
        # unpacked here, not with `*`: a starred call is a generic call in the compiled module
        shape, stride = subview_layout(mt, sizes)
        _check_view_type(self, mt, shape, stride)


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
    r = result_type(inst)
    t = inst.required("operand")
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
        t = self.required("operand")
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
        t = self.required("operand")
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


# ---- the table rows ------------------------------------------------------------------------------

_MEM_IDX = ("operand", "index_list*")


def _atomic_update(mnemonic: str) -> Row:
    spec = InstSpec(
        mnemonic,
        (SCOPE, SEMANTICS),
        ("val",) + _MEM_IDX,
        R,
        fmt="$val , $operand [ $index_list* ] : type",
        side_effects=True,
        reads=("operand",),
        writes=("operand",),
        uniformity=ResultUniformity.varying,  # each work-item gets a different old value
    )
    return (AtomicUpdateInst, spec, {})


ROWS: list[Row] = [
    (
        AllocaInst,
        InstSpec("alloca", result=R, exec=Exec.collective, fmt="attrs? : type", side_effects=True),
        {},
    ),
    (
        LifetimeStopInst,
        InstSpec(
            "lifetime_stop",
            operands=("object",),
            exec=Exec.collective,
            fmt="$object",
            side_effects=True,
        ),
        {},
    ),
    (
        AssociatedInst,
        InstSpec("associated", operands=("operand",), result=R, fmt="$operand : type"),
        {},
    ),
    (
        AtomicLoadInst,
        InstSpec(
            "atomic_load",
            (SCOPE, SEMANTICS),
            _MEM_IDX,
            R,
            fmt="$operand [ $index_list* ] : type",
            side_effects=True,
            reads=("operand",),
            # each work-item's atomic access may observe a different concurrent write
            uniformity=ResultUniformity.varying,
        ),
        {},
    ),
    (
        AtomicStoreInst,
        InstSpec(
            "atomic_store",
            (SCOPE, SEMANTICS),
            ("val",) + _MEM_IDX,
            fmt="$val , $operand [ $index_list* ]",
            side_effects=True,
            writes=("operand",),
        ),
        {},
    ),
    _atomic_update("atomic_add"),
    _atomic_update("atomic_max"),
    _atomic_update("atomic_min"),
    (
        ExpandInst,
        InstSpec(
            "expand",
            (Prop("expanded_mode", "int", 0), Prop("static_expand_shape", "ints", ())),
            ("operand", "expand_shape*"),
            R,
            syntax=Syntax.expand,
        ),
        {},
    ),
    (
        FuseInst,
        InstSpec(
            "fuse",
            (Prop("from", "int", 0), Prop("to", "int", 0)),
            ("operand",),
            R,
            fmt="$operand [ #from , #to ] : type",
        ),
        {},
    ),
    (
        LoadInst,
        InstSpec(
            "load",
            operands=_MEM_IDX,
            result=R,
            fmt="$operand [ $index_list* ] : type",
            reads=("operand",),
        ),
        {},
    ),
    (
        SizeInst,
        InstSpec(
            "size", (Prop("mode", "int", 0),), ("operand",), R, fmt="$operand [ #mode ] : type"
        ),
        {},
    ),
    (
        SubviewInst,
        InstSpec(
            "subview",
            (Prop("static_offsets", "ints", ()), Prop("static_sizes", "ints", ())),
            ("operand", "offsets*", "sizes*"),
            R,
            syntax=Syntax.subview,
        ),
        {},
    ),
    (
        ElementStoreInst,
        InstSpec(
            "store",
            operands=("val",) + _MEM_IDX,
            fmt="$val , $operand [ $index_list* ]",
            side_effects=True,
            writes=("operand",),
        ),
        {},
    ),
]
