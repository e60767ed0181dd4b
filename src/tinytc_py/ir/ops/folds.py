"""The constant-folding rules of the arithmetic instructions (arith.py): each row of an
arithmetic, math or comparison instruction carries its rules here as the class attribute
`folds` (a BinaryFolds, UnaryFolds, MathFolds or CompareFolds), which constant-propagation and
the lowerings that fold index arithmetic on the spot (passes/fold.py, constant_propagation.py,
lower_foreach.py) ask instead of tables keyed by mnemonics.

Constants are Python values: bool, int, float, or (re, im) for complex numbers. A rule takes the
scalar (component) type and returns None where the result must not be folded (division by
zero, shifts by at least the width, undefined conversions).

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
so the folded value may differ from what the device would compute by that much. The math
extensions (sqrt, tanh, ...) have no rules and are not folded.

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

from ..types import BooleanType, NumberType, ScalarKind, Type, as_number, int_bits, wrap

Scalar = bool | int | float | tuple[float, float]
Complex = tuple[float, float]

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


def family(ty: Type) -> str:
    """ "bool", or the number type's family ("int", "float", "complex")."""
    return "bool" if isinstance(ty, BooleanType) else as_number(ty).kind.family


def _rounded(fn: Callable[[float, float], float | None], ty: NumberType, a: float, b: float):
    """fn computed exactly in double precision, rounded once to `ty` (None stays None)."""
    r = fn(a, b)
    return None if r is None else to_float(r, ty)


# ---- binary instructions: evaluation ------------------------------------------------------------


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def int_div(a: int, b: int, ty: NumberType) -> int | None:
    if b == 0:
        return None
    q = _trunc_div(a, b)
    return q if q == wrap(q, ty) else None  # INT_MIN / -1 overflows: undefined


def int_rem(a: int, b: int, ty: NumberType) -> int | None:
    return None if b == 0 else a - b * _trunc_div(a, b)


def shift(op: Callable[[int, int], int]) -> Callable[[int, int, NumberType], int | None]:
    def rule(a: int, b: int, ty: NumberType) -> int | None:
        return wrap(op(a, b), ty) if 0 <= b < int_bits(ty) else None

    return rule


def wrapped(op: Callable[[int, int], int]) -> Callable[[int, int, NumberType], int]:
    return lambda a, b, ty: wrap(op(a, b), ty)


def fdiv(a: float, b: float) -> float | None:
    return None if b == 0 else a / b


def frem(a: float, b: float) -> float | None:
    if b == 0 or math.isinf(a):
        return None
    return math.fmod(a, b)


def fminmax(pick: Callable[[float, float], float]) -> Callable[[float, float], float | None]:
    def fn(a: float, b: float) -> float | None:
        if math.isnan(a) or math.isnan(b):
            return b if math.isnan(a) else a
        if a == b == 0 and math.copysign(1, a) != math.copysign(1, b):
            return None  # fmin/fmax of -0 and +0 may return either
        return pick(a, b)

    return fn


def componentwise(fn: Callable[[float, float], float]) -> Callable[..., Complex | None]:
    """Complex add / sub: both parts, each rounded to the component type."""

    def rule(ty: NumberType, a: Complex, b: Complex) -> Complex | None:
        comp = ty.component_type
        return (_rounded(fn, comp, a[0], b[0]), _rounded(fn, comp, a[1], b[1]))

    return rule


def complex_mul(ty: NumberType, a: Complex, b: Complex) -> Complex | None:
    comp = ty.component_type

    def f(fn: Callable[[float, float], float | None], x: float, y: float) -> Any:
        return _rounded(fn, comp, x, y)

    (ar, ai), (br, bi) = a, b
    if ai == 0 or bi == 0:
        # a real factor (imaginary part ±0) scales the other operand, as the conversion does
        (xr, xi), s = (b, ar) if ai == 0 else (a, br)
        return (f(operator.mul, xr, s), f(operator.mul, xi, s))
    return (
        f(operator.sub, f(operator.mul, ar, br), f(operator.mul, ai, bi)),
        f(operator.add, f(operator.mul, ar, bi), f(operator.mul, ai, br)),
    )


def complex_div(ty: NumberType, a: Complex, b: Complex) -> Complex | None:
    comp = ty.component_type

    def f(fn: Callable[[float, float], float | None], x: float, y: float) -> Any:
        return _rounded(fn, comp, x, y)

    (ar, ai), (br, bi) = a, b
    if bi == 0:
        return None if br == 0 else (f(fdiv, ar, br), f(fdiv, ai, br))
    den = f(operator.add, f(operator.mul, br, br), f(operator.mul, bi, bi))
    if den == 0:
        return None
    return (
        f(fdiv, f(operator.add, f(operator.mul, ar, br), f(operator.mul, ai, bi)), den),
        f(fdiv, f(operator.sub, f(operator.mul, ai, br), f(operator.mul, ar, bi)), den),
    )


# ---- binary instructions: algebraic identities ----------------------------------------------------


class Rewrite:
    """How to replace `op a, b`: by operand `operand` (kind "operand"), by a constant `value`
    (kind "constant"), or by `neg` / `not` of operand `operand` (kind "neg" / "not").
    A plain class, not a dataclass: a dataclass's generated __init__ runs interpreted even in
    the compiled module, and the lowerings fold index arithmetic per instruction they make."""

    __slots__ = ("kind", "operand", "value")

    def __init__(self, kind: str, operand: int = 0, value: Scalar | None = None) -> None:
        self.kind = kind
        self.operand = operand
        self.value = value

    def __repr__(self) -> str:
        return f"Rewrite({self.kind!r}, {self.operand}, {self.value!r})"


Identity = Callable[[Scalar | None, Scalar | None, Type, bool], Rewrite | None]
"""(known a or None, known b or None, scalar type, unsafe-fp-math) -> the rewrite or None."""


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


def add_identity(ca: Scalar | None, cb: Scalar | None, ty: Type, unsafe: bool) -> Rewrite | None:
    """x+0 and 0+x (floats: the exact signs of zero, any zero with unsafe-fp-math)."""
    if _keeps(cb, ty, unsafe, adding=True):
        return Rewrite("operand", 0)
    return Rewrite("operand", 1) if _keeps(ca, ty, unsafe, adding=True) else None


def sub_identity(ca: Scalar | None, cb: Scalar | None, ty: Type, unsafe: bool) -> Rewrite | None:
    """x-0 (floats: +0.0, any zero with unsafe-fp-math)."""
    return Rewrite("operand", 0) if _keeps(cb, ty, unsafe, adding=False) else None


def mul_identity(ca: Scalar | None, cb: Scalar | None, ty: Type, unsafe: bool) -> Rewrite | None:
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


def div_identity(ca: Scalar | None, cb: Scalar | None, ty: Type, unsafe: bool) -> Rewrite | None:
    """x/1."""
    return Rewrite("operand", 0) if _is(cb, 1) else None


def rem_identity(ca: Scalar | None, cb: Scalar | None, ty: Type, unsafe: bool) -> Rewrite | None:
    """x%1 -> 0 (integers)."""
    return Rewrite("constant", value=0) if as_number(ty).is_integer and _is(cb, 1) else None


def shift_identity(ca: Scalar | None, cb: Scalar | None, ty: Type, unsafe: bool):
    """x << 0 is x; 0 << x is 0 (also for a shift by the width or more, whose result is
    undefined: 0 is one of its values)."""
    if _is(cb, 0):
        return Rewrite("operand", 0)
    return Rewrite("constant", value=0) if _is(ca, 0) else None


def logic_identity(on_zero: str, on_ones: str) -> Identity:
    """and/or/xor with a known operand c: what c = 0 / false and c = all ones (-1) / true give,
    "constant" (c itself), "operand" (the other operand) or "not" (not of the other operand)."""

    def known(c: Scalar, ty: Type, other: int) -> Rewrite | None:
        if not c:
            kind = on_zero
        elif c != (True if isinstance(ty, BooleanType) else -1):
            return None
        else:
            kind = on_ones
        return Rewrite("constant", value=c) if kind == "constant" else Rewrite(kind, other)

    def rule(ca: Scalar | None, cb: Scalar | None, ty: Type, unsafe: bool) -> Rewrite | None:
        for const, other in ((cb, 0), (ca, 1)):
            if const is not None:
                found = known(const, ty, other)
                if found is not None:
                    return found
        return None

    return rule


@dataclass(frozen=True)
class BinaryFolds:
    """The folding rules of a binary instruction: its value on constants per type family (None:
    not folded for that family) and its identities with one known operand."""

    boolean: Callable[[bool, bool], bool] | None = None
    integer: Callable[[int, int, NumberType], int | None] | None = None
    real: Callable[[float, float], float | None] | None = None  # exact; rounded to the type
    complex: Callable[[NumberType, Complex, Complex], Complex | None] | None = None
    identity: Identity | None = None
    # an integer division by a known zero is an error in the program (div, rem)
    divides: bool = False

    def evaluate(self, ty: Type, a: Any, b: Any) -> Scalar | None:
        """`op a, b` on constants of the scalar type `ty` (None: do not fold)."""
        fam = family(ty)
        if fam == "bool":
            return None if self.boolean is None else self.boolean(a, b)
        if fam == "int":
            return None if self.integer is None else self.integer(a, b, as_number(ty))
        if fam == "float":
            return None if self.real is None else _rounded(self.real, as_number(ty), a, b)
        return None if self.complex is None else self.complex(as_number(ty), a, b)

    def simplify(
        self, ty: Type, ca: Scalar | None, cb: Scalar | None, unsafe_fp_math: bool = False
    ) -> Rewrite | None:
        """The identity that applies to `op a, b` (scalar type `ty`) when only some operands
        are known."""
        return None if self.identity is None else self.identity(ca, cb, ty, unsafe_fp_math)


# ---- unary instructions ------------------------------------------------------------------------


@dataclass(frozen=True)
class UnaryFolds:
    """The value of a unary instruction on a constant per type family (None: not folded)."""

    boolean: Callable[[bool], bool] | None = None
    integer: Callable[[int, NumberType], int] | None = None
    real: Callable[[float], float] | None = None
    complex: Callable[[Complex, NumberType], Scalar] | None = None

    def evaluate(self, ty: Type, a: Any) -> Scalar | None:
        """`op a` on a constant of the operand's scalar type `ty`."""
        fam = family(ty)
        if fam == "bool":
            return None if self.boolean is None else self.boolean(a)
        if fam == "int":
            return None if self.integer is None else self.integer(a, as_number(ty))
        if fam == "float":
            return None if self.real is None else self.real(a)
        return None if self.complex is None else self.complex(a, as_number(ty))


def complex_abs(a: Complex, ty: NumberType) -> float:
    return to_float(math.hypot(a[0], a[1]), ty.component_type)


# ---- math instructions -------------------------------------------------------------------------


def ieee(fn: Callable[[float], float]) -> Callable[[float], float]:
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


def complex_exp(z: complex) -> complex | None:
    try:
        return cmath.exp(z)
    except OverflowError:
        return None


def complex_exp2(z: complex) -> complex | None:
    return complex_exp(z * math.log(2.0))


@dataclass(frozen=True)
class MathFolds:
    """The C math library function of a math instruction for real and for complex operands
    (None: not folded); the native_ forms share their precise form's rules."""

    real: Callable[[float], float] | None = None
    complex: Callable[[complex], complex | None] | None = None

    def evaluate(self, ty: Type, a: Any) -> Scalar | None:
        """`op a` on a constant of the scalar type `ty`: IEEE results (log of a negative
        number is NaN, exp overflows to inf) rounded to `ty`."""
        if not isinstance(ty, NumberType) or ty.is_integer:
            return None
        if ty.is_float:
            return None if self.real is None else to_float(self.real(float(a)), ty)
        z = None if self.complex is None else self.complex(complex(*a))
        if z is None:
            return None
        comp = ty.component_type
        return (to_float(z.real, comp), to_float(z.imag, comp))


# ---- comparisons -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompareFolds:
    """A comparison of constants: signed for integers, ordered for floats except not_equal
    (unordered); on complex numbers only (not_)equal, on both parts."""

    real: Callable[[Any, Any], bool]
    complex: Callable[[Complex, Complex], bool] | None = None

    def evaluate(self, ty: Type, a: Any, b: Any) -> bool | None:
        if isinstance(ty, NumberType) and ty.is_complex:
            return None if self.complex is None else self.complex(a, b)
        return self.real(a, b)
