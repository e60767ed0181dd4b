"""Arithmetic instructions over every type the language allows, with boundary values.

binary: add sub mul div on every number type; rem min max on integers and floats; shl shr on
integers; and or xor on integers and bool. unary: abs neg on every number type, not on integers
and bool, conj im re on complex types. Every case is computed on the CPU OpenCL device (one
program per (family, type), many operand pairs per launch) and compared with NumPy or exact
Python integer arithmetic.

Integer arithmetic wraps around (two's complement). Undefined cases are not executed: division
by zero, INT_MIN / -1 (and INT_MIN rem -1), shifts by the bit width or more (SPIR-V leaves the
result undefined).
"""

from __future__ import annotations

import numpy as np
import pytest

from .support import (
    COMPLEX_TYPES,
    COMPONENT,
    FLOAT_TYPES,
    INT_TYPES,
    NP_DTYPE,
    as_float64,
    bf16_bits,
    bf16_value,
    run_ops,
)

pytestmark = pytest.mark.timeout(120, method="thread")


def int_values(ty: str) -> np.ndarray:
    info = np.iinfo(NP_DTYPE[ty])
    vals = [info.min, info.min + 1, -100, -7, -2, -1, 0, 1, 2, 7, 100, info.max - 1, info.max]
    return np.array(vals, dtype=NP_DTYPE[ty])


def grid(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All ordered pairs of `values`."""
    return np.repeat(values, len(values)), np.tile(values, len(values))


def wrap(values, ty: str) -> np.ndarray:
    """Python integers reduced to the two's complement range of `ty`."""
    bits = 8 * np.dtype(NP_DTYPE[ty]).itemsize
    half = 1 << (bits - 1)
    return np.array([(int(v) + half) % (2 * half) - half for v in values], dtype=NP_DTYPE[ty])


def exact(fn, a, b, ty: str) -> np.ndarray:
    return wrap([fn(int(x), int(y)) for x, y in zip(a, b)], ty)


def trunc_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def trunc_rem(x: int, y: int) -> int:
    return x - y * trunc_div(x, y)


# ---- integers ----------------------------------------------------------------------------------

INT_BINARY = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "min": min,
    "max": max,
    "and": lambda x, y: x & y,
    "or": lambda x, y: x | y,
    "xor": lambda x, y: x ^ y,
}


@pytest.mark.parametrize("ty", INT_TYPES)
def test_int_binary_wraparound(ty):
    """add/sub/mul wrap around at INT_MIN/INT_MAX; min/max are signed; bitwise ops."""
    a, b = grid(int_values(ty))
    c = run_ops(ty, [f"{op} %x, %y" for op in INT_BINARY], [a, b])
    for k, (name, fn) in enumerate(INT_BINARY.items()):
        np.testing.assert_array_equal(c[:, k], exact(fn, a, b, ty), err_msg=f"{name} {ty}")


@pytest.mark.parametrize("ty", INT_TYPES)
def test_int_div_rem_truncate_toward_zero(ty):
    """div rounds toward zero, rem takes the sign of the dividend (C semantics)."""
    a, b = grid(int_values(ty))
    ok = (b != 0) & ~((a == np.iinfo(a.dtype).min) & (b == -1))  # the rest is undefined
    a, b = a[ok], b[ok]
    c = run_ops(ty, ["div %x, %y", "rem %x, %y"], [a, b])
    np.testing.assert_array_equal(c[:, 0], exact(trunc_div, a, b, ty), err_msg="div")
    np.testing.assert_array_equal(c[:, 1], exact(trunc_rem, a, b, ty), err_msg="rem")


@pytest.mark.parametrize("ty", INT_TYPES)
def test_int_shifts(ty):
    """shl is logical (bits shifted out are lost), shr arithmetic; amounts 0 .. width-1."""
    bits = 8 * np.dtype(NP_DTYPE[ty]).itemsize
    vals = int_values(ty)
    a = np.repeat(vals, bits)
    b = np.tile(np.arange(bits), len(vals)).astype(NP_DTYPE[ty])
    c = run_ops(ty, ["shl %x, %y", "shr %x, %y"], [a, b])
    np.testing.assert_array_equal(c[:, 0], exact(lambda x, y: x << y, a, b, ty), err_msg="shl")
    np.testing.assert_array_equal(c[:, 1], exact(lambda x, y: x >> y, a, b, ty), err_msg="shr")


@pytest.mark.parametrize("ty", INT_TYPES)
def test_int_unary(ty):
    """abs(INT_MIN) and neg(INT_MIN) wrap to INT_MIN; not is the bitwise complement."""
    a = int_values(ty)
    c = run_ops(ty, ["abs %x", "neg %x", "not %x"], [a])
    np.testing.assert_array_equal(c[:, 0], wrap([abs(int(x)) for x in a], ty), err_msg="abs")
    np.testing.assert_array_equal(c[:, 1], wrap([-int(x) for x in a], ty), err_msg="neg")
    np.testing.assert_array_equal(c[:, 2], wrap([~int(x) for x in a], ty), err_msg="not")


def test_bool_logic():
    """and/or/xor/not on bool (operands from comparisons), every combination."""
    p, q = grid(np.array([0, 1], dtype=np.int32))
    pre = ["%zero = constant 0 : i32", "%p = not_equal %x, %zero : bool"]
    pre += ["%q = not_equal %y, %zero : bool"]
    ops = ["and %p, %q", "or %p, %q", "xor %p, %q", "not %p", "not %q"]
    c = run_ops("i32", ops, [p, q], rty="bool", pre=pre)
    P, Q = p.astype(bool), q.astype(bool)
    for k, want in enumerate((P & Q, P | Q, P ^ Q, ~P, ~Q)):
        np.testing.assert_array_equal(c[:, k], want.astype(np.int32), err_msg=ops[k])


# ---- floating point ----------------------------------------------------------------------------


def float_values(ty: str) -> np.ndarray:
    """Specials, ordinary values and the extremes of the type (bf16: bits)."""
    big = {"bf16": 3.3895313892515355e38, "f16": 65504.0, "f32": 3.4028235e38, "f64": 1.7e308}
    small = {"bf16": 1.1754943508222875e-38, "f16": 6.103515625e-05, "f32": 1.1754944e-38}
    vals = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -3.75, 1 / 3, 0.00390625]
    vals += [1.0078125, big[ty], -big[ty], small.get(ty, 2.2250738585072014e-308)]
    if ty == "bf16":
        return bf16_bits(np.array(vals, np.float32))
    return np.array(vals, dtype=NP_DTYPE[ty])


FLOAT_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "rem": np.fmod,
    "min": np.fmin,  # OpenCL fmin/fmax: a NaN operand gives the other operand
    "max": np.fmax,
}


def assert_same_float(got, want, ty: str, err_msg: str, signed_zero: bool = True) -> None:
    """Equal values (nan == nan), and equal signs of zeros if `signed_zero`."""
    g, w = as_float64(got, ty), as_float64(want, ty)
    np.testing.assert_array_equal(g, w, err_msg=err_msg)
    if signed_zero:
        zero = w == 0
        np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(w[zero]), err_msg=err_msg)


@pytest.mark.parametrize("ty", ["f16", "f32", "f64"])
def test_float_binary_specials(ty):
    """IEEE results are exact: nan/inf/-0.0 propagate; rem is fmod (sign of the dividend);
    min/max with one NaN give the other operand."""
    a, b = grid(float_values(ty))
    c = run_ops(ty, [f"{op} %x, %y" for op in FLOAT_BINARY], [a, b])
    with np.errstate(all="ignore"):
        for k, (name, fn) in enumerate(FLOAT_BINARY.items()):
            # fmin/fmax of +0 and -0 may return either zero
            signed = name not in ("min", "max")
            assert_same_float(c[:, k], fn(a, b), ty, f"{name} {ty}", signed)


def test_bf16_binary_rounding():
    """bf16 arithmetic happens in f32 and is rounded to nearest even: 1 + 2^-8 is a tie and
    gives 1, 1.0078125 + 2^-8 a tie that rounds up to 1.015625; overflow gives inf."""
    a, b = grid(float_values("bf16"))
    c = run_ops("bf16", [f"{op} %x, %y" for op in FLOAT_BINARY], [a, b])
    x, y = bf16_value(a), bf16_value(b)
    with np.errstate(all="ignore"):
        for k, (name, fn) in enumerate(FLOAT_BINARY.items()):
            want = bf16_bits(fn(x, y).astype(np.float32))
            assert_same_float(c[:, k], want, "bf16", name, name not in ("min", "max"))
    one = np.flatnonzero((x == 1.0) & (y == 0.00390625))
    assert bf16_value(c[one, 0]) == [1.0]
    up = np.flatnonzero((x == 1.0078125) & (y == 0.00390625))
    assert bf16_value(c[up, 0]) == [1.015625]


@pytest.mark.parametrize("ty", FLOAT_TYPES)
def test_float_unary(ty):
    """abs clears and neg flips the sign bit, also of zeros, infinities and NaN."""
    a = float_values(ty)
    c = run_ops(ty, ["abs %x", "neg %x"], [a])
    x = as_float64(a, ty)
    g0, g1 = as_float64(c[:, 0], ty), as_float64(c[:, 1], ty)
    np.testing.assert_array_equal(g0, np.abs(x), err_msg="abs")
    np.testing.assert_array_equal(g1, -x, err_msg="neg")
    np.testing.assert_array_equal(np.signbit(g0), np.zeros(len(x), bool), err_msg="abs sign")
    num = ~np.isnan(x)
    np.testing.assert_array_equal(np.signbit(g1[num]), ~np.signbit(x[num]), err_msg="neg sign")


# ---- complex -----------------------------------------------------------------------------------


def complex_values(ty: str) -> np.ndarray:
    rng = np.random.default_rng(7)
    z = rng.uniform(-4, 4, 12) + 1j * rng.uniform(-4, 4, 12)
    special = [0, 1, -1, 1j, -1j, 2.5 - 0.5j, 1e-3 + 1e3j, 1e3 - 1e-3j]
    return np.concatenate([special, z]).astype(NP_DTYPE[ty])


def assert_complex_close(got, want, ty: str, eps_factor: float, err_msg: str) -> None:
    """Norm-wise relative error |got - want| <= eps_factor * eps * |want|."""
    eps = np.finfo(NP_DTYPE[ty]).eps
    err = np.abs(got.astype(np.complex128) - want)
    bad = np.flatnonzero(~(err <= eps_factor * eps * np.abs(want)))
    assert bad.size == 0, f"{err_msg}: got {got[bad[:4]]} want {want[bad[:4]]}"


def complex_specials(ty: str) -> np.ndarray:
    z = np.zeros(4, NP_DTYPE[ty])
    z.real, z.imag = [np.inf, np.nan, -0.0, 1.0], [1.0, 0.0, -0.0, -np.inf]
    return z


@pytest.mark.parametrize("ty", COMPLEX_TYPES)
def test_complex_binary(ty):
    """add/sub are exact component-wise (also with inf, nan, -0.0); mul/div of finite values
    are within a few eps of the exact result (norm-wise)."""
    a, b = grid(np.concatenate([complex_values(ty), complex_specials(ty)]))
    c = run_ops(ty, ["add %x, %y", "sub %x, %y", "mul %x, %y", "div %x, %y"], [a, b])
    with np.errstate(invalid="ignore"):  # inf - inf
        sums = (a + b, a - b)
    for k, want in enumerate(sums):
        np.testing.assert_array_equal(c[:, k], want, err_msg=f"{k}")
        comp = want.real.dtype
        np.testing.assert_array_equal(np.signbit(c[:, k].view(comp)), np.signbit(want.view(comp)))
    fin = np.isfinite(a) & np.isfinite(b)
    A, B = a[fin].astype(np.complex128), b[fin].astype(np.complex128)
    assert_complex_close(c[fin, 2], A * B, ty, 4, "mul")
    nz = B != 0
    assert_complex_close(c[fin, 3][nz], A[nz] / B[nz], ty, 8, "div")


@pytest.mark.parametrize("ty", COMPLEX_TYPES)
def test_complex_mul_div_known_zero_parts(ty):
    """Operands with a real or imaginary part known to be 0 (constants, real-to-complex casts),
    for which the converter may take shortcuts, give the same results."""
    comp = COMPONENT[ty]
    pre = [
        f"%ci = constant [0.0, 2.0] : {ty}",
        f"%cr = constant [-1.5, 0.0] : {ty}",
        f"%re = re %x : {comp}",
        f"%xr = cast %re : {ty}",
    ]
    ops = ["mul %x, %ci", "mul %ci, %x", "mul %x, %cr", "mul %cr, %x", "mul %xr, %y"]
    ops += ["mul %y, %xr", "mul %xr, %xr", "div %x, %ci", "div %x, %cr", "div %xr, %y"]
    ops += ["div %ci, %y", "add %xr, %ci"]
    a = complex_values(ty)
    b = np.roll(a, 3)
    b[b == 0] = 1
    c = run_ops(ty, ops, [a, b], pre=pre)
    x, y = a.astype(np.complex128), b.astype(np.complex128)
    ci, cr, xr = 2j, -1.5, x.real + 0j
    wants = [x * ci, ci * x, x * cr, cr * x, xr * y, y * xr, xr * xr, x / ci, x / cr, xr / y]
    wants += [ci / y, xr + ci]
    for k, want in enumerate(wants):
        assert_complex_close(c[:, k], want, ty, 8, ops[k])


@pytest.mark.parametrize("ty", COMPLEX_TYPES)
def test_complex_unary(ty):
    """neg/conj flip signs; re/im extract; abs = hypot(re, im) in the component type, which
    must not overflow for magnitudes near the type's largest value."""
    z = complex_values(ty)
    big = np.finfo(NP_DTYPE[COMPONENT[ty]]).max / 4
    z = np.concatenate(
        [z, np.array([complex(big, big), complex(np.nan, 1), complex(-0.0, 0.0)], z.dtype)]
    )
    c = run_ops(ty, ["neg %x", "conj %x"], [z])
    np.testing.assert_array_equal(c[:, 0], -z, err_msg="neg")
    np.testing.assert_array_equal(c[:, 1], np.conj(z), err_msg="conj")
    np.testing.assert_array_equal(np.signbit(c[-1:, 0].real), [False], err_msg="neg -0.0")
    np.testing.assert_array_equal(np.signbit(c[-1:, 1].imag), [True], err_msg="conj 0.0")
    r = run_ops(ty, ["re %x", "im %x", "abs %x"], [z], rty=COMPONENT[ty])
    np.testing.assert_array_equal(r[:, 0], z.real, err_msg="re")
    np.testing.assert_array_equal(r[:, 1], z.imag, err_msg="im")
    eps = np.finfo(NP_DTYPE[COMPONENT[ty]]).eps
    np.testing.assert_allclose(r[:, 2], np.abs(z.astype(np.complex128)), rtol=4 * eps)
