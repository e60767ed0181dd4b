"""Constant folding rules, shared by constant-propagation and the lowerings that fold index
arithmetic on the spot (lower-foreach): evaluation of arithmetic, casts and comparisons on
constants with the device's semantics, and the algebraic identities (x+0, x*1, ...).

Constants are Python values: bool, int, float, or (re, im) for complex numbers. The functions
take the scalar (component) type and return None where the result must not be folded (division
by zero, shifts by at least the width, undefined conversions).

Semantics mirror the SPIR-V conversion: integers are two's complement and wrap around at their
width; div and rem truncate toward zero (the sign of rem follows the dividend); shr is
arithmetic. Floating-point operations are computed in double precision and rounded once to the
type (f32 via numpy.float32, f16 via numpy.float16), which gives the correctly rounded IEEE
result; bf16 computes in f32 and rounds to nearest even, as the conversion through f32 does.
min/max on floats are OpenCL's fmin/fmax (a NaN operand yields the other operand; -0 and +0
are not folded, fmin/fmax may return either). Complex multiplication and division use the
conversion's formulas with each step rounded to the component type: a factor or divisor whose
imaginary part is zero scales the other operand's parts, otherwise the full formulas. Integer
to float conversion rounds the exact integer once.

Math functions (cos, sin, exp, exp2, log, log2, their native_ forms, complex exp/exp2 and the
modulus `abs` of a complex number) are evaluated with the C math library in double precision and
rounded to the type, which is the correctly rounded result in all but rare cases (upstream folds
fewer of them, some in the type's own precision).
The device's own functions have an error bound of a few ulp (native_: implementation-defined),
so the folded value may differ from what the device would compute by that much.

The identities on floating-point (and complex) numbers are folded only where they are exact in
IEEE arithmetic: x + -0.0, x - +0.0, x*1, x*-1 (-> neg x) and x/1. Under unsafe-fp-math, which
ignores the sign of zero, NaN and infinities, also x + +0.0, x - -0.0 and x*0 -> 0 (upstream
folds x + +0.0 and x - -0.0 always, which turns -0.0 + 0.0 into -0.0; IEEE gives +0.0).
A NaN keeps being a NaN, only its sign bit or payload may differ (IEEE does not specify them
for arithmetic results). Integer identities are exact in two's complement and always folded.
"""

from __future__ import annotations

import cmath
import math
import operator
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir.inst import Inst
from ..ir.types import (
    DYNAMIC,
    BooleanType,
    MemrefType,
    NumberType,
    ScalarKind,
    Type,
    as_number,
    element_type,
    int_bits,
    wrap,
)
from ..ir.values import Value

Scalar = bool | int | float | tuple[float, float]

# ---- constants of values ----------------------------------------------------------------------


def known(v: Value) -> Scalar | None:
    """The constant a value is known to hold (normalised to its type): the value of a
    `constant` (the splat value for a coopmatrix), or the size of a static memref mode or group."""
    d = v.defining_inst
    if d is None:
        return None
    if d.name == "size":
        return _static_size(d)
    if d.name != "constant":
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


# ---- number formats ---------------------------------------------------------------------------


def _bf16(x: float) -> float:
    """Round to bf16 through f32 (both round to nearest even; NaN stays NaN)."""
    with np.errstate(all="ignore"):
        bits = int(np.float32(x).view(np.uint32))
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:
        return float(np.uint32(bits).view(np.float32))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return float(np.uint32(bits).view(np.float32))


_F32 = struct.Struct("<f")


def _f32(x: float) -> float:
    """x rounded to f32 by C's double-to-float conversion (what numpy.float32 does, without
    numpy's error-state context, which took most of the time of folding an f32 constant);
    struct refuses a value that rounds to infinity, and infinity is the result."""
    try:
        return _F32.unpack(_F32.pack(float(x)))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def to_float(x: float, ty: NumberType) -> float:
    """x rounded to the precision of the floating-point type `ty`."""
    kind = ty.kind
    if kind is ScalarKind.f64:
        return float(x)
    if kind is ScalarKind.f32:
        return _f32(x)
    if kind is ScalarKind.bf16:
        return _bf16(x)
    with np.errstate(all="ignore"):
        return float(np.float16(x))


_MANTISSA = {ScalarKind.f16: 11, ScalarKind.f32: 24, ScalarKind.f64: 53, ScalarKind.bf16: 24}


def int_to_float(a: int, ty: NumberType) -> float:
    """ConvertSToF: the integer rounded once to nearest even (bf16: via f32, as converted)."""
    p = _MANTISSA[ty.kind]
    mag = abs(a)
    shift = mag.bit_length() - p
    if shift > 0:
        q, r = divmod(mag, 1 << shift)
        half = 1 << (shift - 1)
        if r > half or (r == half and q & 1):
            q += 1
        mag = q << shift
    return to_float(float(-mag if a < 0 else mag), ty)


# ---- evaluation -------------------------------------------------------------------------------


def _family(ty: Type) -> str:
    return "bool" if isinstance(ty, BooleanType) else as_number(ty).kind.family


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _int_div(a: int, b: int, ty: NumberType) -> int | None:
    if b == 0:
        return None
    q = _trunc_div(a, b)
    return q if q == wrap(q, ty) else None  # INT_MIN / -1 overflows: undefined


def _int_rem(a: int, b: int, ty: NumberType) -> int | None:
    return None if b == 0 else a - b * _trunc_div(a, b)


def _shift(op: Callable[[int, int], int]) -> Callable[[int, int, NumberType], int | None]:
    def shift(a: int, b: int, ty: NumberType) -> int | None:
        return wrap(op(a, b), ty) if 0 <= b < int_bits(ty) else None

    return shift


def _wrapped(op: Callable[[int, int], int]) -> Callable[[int, int, NumberType], int]:
    return lambda a, b, ty: wrap(op(a, b), ty)


_INT_BINARY: dict[str, Callable[[int, int, NumberType], int | None]] = {
    "add": _wrapped(operator.add),
    "sub": _wrapped(operator.sub),
    "mul": _wrapped(operator.mul),
    "div": _int_div,
    "rem": _int_rem,
    "min": lambda a, b, ty: min(a, b),
    "max": lambda a, b, ty: max(a, b),
    "shl": _shift(operator.lshift),
    "shr": _shift(operator.rshift),
    "and": _wrapped(operator.and_),
    "or": _wrapped(operator.or_),
    "xor": _wrapped(operator.xor),
}

_BOOL_BINARY: dict[str, Callable[[bool, bool], bool]] = {
    "and": lambda a, b: a and b,
    "or": lambda a, b: a or b,
    "xor": operator.ne,
}


def _fdiv(a: float, b: float) -> float | None:
    return None if b == 0 else a / b


def _frem(a: float, b: float) -> float | None:
    if b == 0 or math.isinf(a):
        return None
    return math.fmod(a, b)


def _fminmax(pick: Callable[[float, float], float]) -> Callable[[float, float], float | None]:
    def fn(a: float, b: float) -> float | None:
        if math.isnan(a) or math.isnan(b):
            return b if math.isnan(a) else a
        if a == b == 0 and math.copysign(1, a) != math.copysign(1, b):
            return None  # fmin/fmax of -0 and +0 may return either
        return pick(a, b)

    return fn


# Exact operations in double precision; rounding once to the type gives the correctly rounded
# result for every narrower type (double has more than twice their precision plus two bits).
_FLOAT_BINARY: dict[str, Callable[[float, float], float | None]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": _fdiv,
    "rem": _frem,
    "min": _fminmax(min),
    "max": _fminmax(max),
}


def _float_binary(op: str, ty: NumberType, a: float, b: float) -> float | None:
    fn = _FLOAT_BINARY.get(op)
    if fn is None:
        return None
    r = fn(a, b)
    return None if r is None else to_float(r, ty)


def _complex_binary(op: str, ty: NumberType, a: tuple, b: tuple) -> tuple | None:
    comp = ty.component_type

    def f(name: str, x: float, y: float) -> float:
        return _float_binary(name, comp, x, y)

    (ar, ai), (br, bi) = a, b
    if op in ("add", "sub"):
        return (f(op, ar, br), f(op, ai, bi))
    if op == "mul" and (ai == 0 or bi == 0):
        # a real factor (imaginary part ±0) scales the other operand, as the conversion does
        (xr, xi), s = (b, ar) if ai == 0 else (a, br)
        return (f("mul", xr, s), f("mul", xi, s))
    if op == "div" and bi == 0:
        return None if br == 0 else (f("div", ar, br), f("div", ai, br))
    if op == "mul":
        return (
            f("sub", f("mul", ar, br), f("mul", ai, bi)),
            f("add", f("mul", ar, bi), f("mul", ai, br)),
        )
    if op != "div":
        return None
    den = f("add", f("mul", br, br), f("mul", bi, bi))
    if den == 0:
        return None
    return (
        f("div", f("add", f("mul", ar, br), f("mul", ai, bi)), den),
        f("div", f("sub", f("mul", ai, br), f("mul", ar, bi)), den),
    )


def binary(op: str, ty: Type, a: Scalar, b: Scalar) -> Scalar | None:
    """`op a, b` on constants of the scalar type `ty` (None: do not fold)."""
    family = _family(ty)
    if family == "bool":
        fn = _BOOL_BINARY.get(op)
        return None if fn is None else fn(a, b)
    if family == "int":
        fn = _INT_BINARY.get(op)
        return None if fn is None else fn(a, b, ty)
    if family == "float":
        return _float_binary(op, ty, a, b)
    return _complex_binary(op, ty, a, b)


def _unary_int(op: str, ty: NumberType, a: int) -> int | None:
    if op == "abs":
        return wrap(abs(a), ty)
    if op == "neg":
        return wrap(-a, ty)
    return wrap(~a, ty) if op == "not" else None


def _unary_complex(op: str, ty: NumberType, a: tuple) -> Scalar | None:
    re, im = a
    if op == "abs":
        return to_float(math.hypot(re, im), ty.component_type)
    results = {"neg": (-re, -im), "conj": (re, -im), "re": re, "im": im}
    return results.get(op)


def unary(op: str, ty: Type, a: Scalar) -> Scalar | None:
    """`op a` on a constant of the operand's scalar type `ty`."""
    family = _family(ty)
    if family == "bool":
        return (not a) if op == "not" else None
    if family == "int":
        return _unary_int(op, ty, a)
    if family == "float":
        return {"abs": abs(a), "neg": -a}.get(op)
    return _unary_complex(op, ty, a)


def _ieee(fn: Callable[[float], float]) -> Callable[[float], float]:
    """`fn` from the C math library with IEEE results where Python raises: overflow is inf, a
    pole (log of 0) is -inf, any other domain error (log of -1, cos of inf) is NaN."""

    def call(x: float) -> float:
        try:
            return fn(x)
        except OverflowError:
            return math.inf
        except ValueError:
            return -math.inf if x == 0 else math.nan

    return call


_REAL_MATH: dict[str, Callable[[float], float]] = {
    name: _ieee(getattr(math, name)) for name in ("cos", "sin", "exp", "exp2", "log", "log2")
}


def _complex_exp(z: complex) -> complex | None:
    try:
        return cmath.exp(z)
    except OverflowError:
        return None


_COMPLEX_MATH: dict[str, Callable[[complex], complex | None]] = {
    "exp": _complex_exp,
    "exp2": lambda z: _complex_exp(z * math.log(2.0)),
}


def math_unary(op: str, ty: Type, a: Scalar) -> Scalar | None:
    """`op a` of a math instruction (cos, native_exp, ...) on a constant of the scalar type
    `ty`: IEEE results (log of a negative number is NaN, exp overflows to inf) rounded to `ty`.
    The math extensions (sqrt, tanh, ...) are not folded."""
    name = op.removeprefix("native_")
    if not isinstance(ty, NumberType) or ty.is_integer:
        return None
    if ty.is_float:
        real = _REAL_MATH.get(name)
        if real is None:
            return None
        return to_float(real(float(a)), ty)
    fn = _COMPLEX_MATH.get(name)
    z = None if fn is None else fn(complex(*a))
    if z is None:
        return None
    comp = ty.component_type
    return (to_float(z.real, comp), to_float(z.imag, comp))


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


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "equal": operator.eq,
    "not_equal": operator.ne,
    "greater_than": operator.gt,
    "greater_than_equal": operator.ge,
    "less_than": operator.lt,
    "less_than_equal": operator.le,
}


def compare(op: str, ty: Type, a: Scalar, b: Scalar) -> bool | None:
    """Comparison of constants: signed for integers; ordered for floats except not_equal
    (unordered); complex numbers compare both parts."""
    fn = _COMPARE.get(op)
    if fn is None:
        return None
    if isinstance(ty, NumberType) and ty.is_complex:
        if op == "equal":
            return a[0] == b[0] and a[1] == b[1]
        return a[0] != b[0] or a[1] != b[1] if op == "not_equal" else None
    return fn(a, b)


# ---- algebraic identities ---------------------------------------------------------------------


@dataclass(frozen=True)
class Rewrite:
    """How to replace `op a, b`: by operand `operand` (kind "operand"), by a constant `value`
    (kind "constant"), or by `neg` / `not` of operand `operand` (kind "neg" / "not")."""

    kind: str
    operand: int = 0
    value: Scalar | None = None


def _is(c: Scalar | None, x: int) -> bool:
    """c equals the integer x (as an int, a float, or a complex with zero imaginary part; a zero
    of either sign equals 0)."""
    if c is None or isinstance(c, bool):
        return False
    if isinstance(c, tuple):
        return c[0] == x and c[1] == 0
    return c == x


def _zero_of_sign(c: Scalar | None, negative: bool) -> bool:
    """c is a floating-point zero with the given sign (for a complex number: both parts)."""
    parts = c if isinstance(c, tuple) else (c,)
    return all(p == 0 and (math.copysign(1.0, p) < 0) == negative for p in parts)


def _zero(ty: NumberType) -> Scalar:
    if ty.is_integer:
        return 0
    return (0.0, 0.0) if ty.is_complex else 0.0


def _keeps(c: Scalar | None, ty: Type, unsafe: bool, adding: bool) -> bool:
    """Adding c (adding False: subtracting c) leaves every x as it is: 0 for integers; for
    floating point only -0.0 added or +0.0 subtracted, since -0.0 + +0.0 is +0.0 (any zero with
    unsafe-fp-math, which ignores the sign of zero)."""
    if not _is(c, 0):
        return False
    return as_number(ty).is_integer or unsafe or _zero_of_sign(c, negative=adding)


def _add(ca: Scalar | None, cb: Scalar | None, ty: Type, unsafe: bool) -> Rewrite | None:
    if _keeps(cb, ty, unsafe, adding=True):
        return Rewrite("operand", 0)
    return Rewrite("operand", 1) if _keeps(ca, ty, unsafe, adding=True) else None


def _sub(ca: Scalar | None, cb: Scalar | None, ty: Type, unsafe: bool) -> Rewrite | None:
    return Rewrite("operand", 0) if _keeps(cb, ty, unsafe, adding=False) else None


def _mul(ca: Scalar | None, cb: Scalar | None, ty: Type, unsafe: bool) -> Rewrite | None:
    """x*1 -> x and x*-1 -> neg x are exact (a complex factor (±1, ±0) scales both parts, as
    the conversion computes it); x*0 is not 0 for x = inf or NaN, nor +0 for negative x."""
    for const, other in ((cb, 0), (ca, 1)):
        if _is(const, 1):
            return Rewrite("operand", other)
        if _is(const, -1):
            return Rewrite("neg", other)
        if _is(const, 0) and (as_number(ty).is_integer or unsafe):
            return Rewrite("constant", value=_zero(as_number(ty)))
    return None


def _div(ca: Scalar | None, cb: Scalar | None, ty: Type, unsafe: bool) -> Rewrite | None:
    return Rewrite("operand", 0) if _is(cb, 1) else None


def _rem(ca: Scalar | None, cb: Scalar | None, ty: Type, unsafe: bool) -> Rewrite | None:
    return Rewrite("constant", value=0) if as_number(ty).is_integer and _is(cb, 1) else None


def _shift_identity(ca: Scalar | None, cb: Scalar | None, ty: Type, unsafe: bool):
    """x << 0 is x; 0 << x is 0 (also for a shift by the width or more, whose result is
    undefined: 0 is one of its values)."""
    if _is(cb, 0):
        return Rewrite("operand", 0)
    return Rewrite("constant", value=0) if _is(ca, 0) else None


def _logic(op: str, c: Scalar, ty: Type, other: int) -> Rewrite | None:
    """and/or/xor with a known operand c: 0 / false or all ones (-1) / true."""
    if not c:
        return Rewrite("constant", value=c) if op == "and" else Rewrite("operand", other)
    if c != (True if isinstance(ty, BooleanType) else -1):
        return None
    if op == "and":
        return Rewrite("operand", other)
    return Rewrite("constant", value=c) if op == "or" else Rewrite("not", other)


def _logic_rule(op: str):
    def rule(ca: Scalar | None, cb: Scalar | None, ty: Type, unsafe: bool) -> Rewrite | None:
        for const, other in ((cb, 0), (ca, 1)):
            if const is not None:
                found = _logic(op, const, ty, other)
                if found is not None:
                    return found
        return None

    return rule


_IDENTITIES = {
    "add": _add,
    "sub": _sub,
    "mul": _mul,
    "div": _div,
    "rem": _rem,
    "shl": _shift_identity,
    "shr": _shift_identity,
    "and": _logic_rule("and"),
    "or": _logic_rule("or"),
    "xor": _logic_rule("xor"),
}


def simplify(
    op: str, ty: Type, ca: Scalar | None, cb: Scalar | None, unsafe_fp_math: bool = False
) -> Rewrite | None:
    """The identity that applies to `op a, b` (scalar type `ty`) when only some operands are
    known: x+0, 0+x, x-0 (floats: the exact signs of zero, any zero with unsafe-fp-math), x*1,
    1*x, x*-1 -> neg, x*0 (integers; floats with unsafe-fp-math), x/1, x%1 -> 0 (integers),
    shifts by 0 and of 0, and/or/xor with 0 / all ones / false / true."""
    rule = _IDENTITIES.get(op)
    return None if rule is None else rule(ca, cb, ty, unsafe_fp_math)
