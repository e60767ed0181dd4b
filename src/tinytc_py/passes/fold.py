"""Constant folding shared by constant-propagation and the lowerings that fold index arithmetic
on the spot (lower-foreach): the constant a value is known to hold, and the folding of casts.
The rules of the arithmetic, math and comparison instructions belong to their rows
(ir/ops/folds.py, the class attribute `folds`); a pass asks the instruction for them.
"""

from __future__ import annotations

import math

from ..ir.inst import Inst
from ..ir.ops.arith import ConstantInst
from ..ir.ops.folds import Scalar, int_to_float, to_float
from ..ir.ops.memory import SizeInst
from ..ir.types import (
    DYNAMIC,
    BooleanType,
    MemrefType,
    NumberType,
    Type,
    element_type,
    wrap,
)
from ..ir.values import Value

# ---- constants of values ----------------------------------------------------------------------


def known(v: Value) -> Scalar | None:
    """The constant a value is known to hold (normalised to its type): the value of a
    `constant` (the splat value for a coopmatrix), or the size of a static memref mode or group."""
    d = v.defining_inst
    if d is None:
        return None
    if isinstance(d, SizeInst):
        return _static_size(d)
    if not isinstance(d, ConstantInst):
        return None
    return normalize(d.props["value"], element_type(v.type))


def _static_size(inst: Inst) -> int | None:
    ty = inst.operand("operand").type
    extent = ty.shape[inst.props["mode"]] if isinstance(ty, MemrefType) else ty.size
    return None if extent == DYNAMIC else extent


def normalize(value: Scalar, ty: Type) -> Scalar:
    """A constant as the device holds it: integers wrapped to signed, floats rounded."""
    if isinstance(ty, BooleanType) or not isinstance(ty, NumberType):
        return value
    if ty.is_integer:
        return wrap(value, ty)
    if ty.is_float:
        return to_float(value, ty)
    comp = ty.component_type
    return (to_float(value[0], comp), to_float(value[1], comp))


# ---- casts -------------------------------------------------------------------------------------


def _float_to_int(a: float, dst: NumberType) -> int | None:
    if math.isnan(a) or math.isinf(a):
        return None
    t = math.trunc(a)
    return t if t == wrap(t, dst) else None  # out of range: undefined


def _to_real(a: Scalar, src: NumberType, dst: NumberType) -> Scalar | None:
    if src.is_integer:
        return wrap(a, dst) if dst.is_integer else int_to_float(a, dst)
    if dst.is_integer:
        return _float_to_int(a, dst)
    return to_float(a, dst)


def cast(src: Type, dst: Type, a: Scalar) -> Scalar | None:
    """`cast a : dst` of a constant of the scalar type `src` (complex to real is invalid IR)."""
    if not isinstance(src, NumberType) or not isinstance(dst, NumberType):
        return None
    if not dst.is_complex:
        return None if src.is_complex else _to_real(a, src, dst)
    comp = dst.component_type
    if src.is_complex:
        return (to_float(a[0], comp), to_float(a[1], comp))
    re = _to_real(a, src, comp)
    return None if re is None else (re, 0.0)
