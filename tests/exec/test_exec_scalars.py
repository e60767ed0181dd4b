"""`constant` of every type and scalar kernel parameters of every type, on the CPU OpenCL device.

Constants: a floating literal is a double (C syntax, hex floats, inf, nan) rounded once to the
type, to nearest even: too large gives inf, too small a subnormal or signed zero. bf16 constants
are rounded directly from the double, not through f32 (which would round twice). Integer
literals range over -2^63+1 .. 2^63-1 (tensor-language reference).

Parameters are passed by value (docs/design.md §B1.1): i8..i64 and index as 1/2/4/8-byte integers,
bf16 as its 16 bits (np.uint16, or a number that the host rounds like a constant), f16/f32/f64,
c32/c64 as (re, im) pairs. Each parameter is stored unchanged and compared bit for bit.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from tinytc_py.errors import Status, TinytcError

from .support import (
    COMPLEX_TYPES,
    FLOAT_TYPES,
    INT_TYPES,
    NP_DTYPE,
    NUMBER_TYPES,
    as_float64,
    bf16_value,
    build,
    store_lines,
)

pytestmark = pytest.mark.timeout(120, method="thread")

HEADER = "attributes {subgroup_size=4, work_group_size=[4,1]}"


@functools.cache
def bf16_table() -> tuple[np.ndarray, np.ndarray]:
    """(bits, float64 values) of every non-negative finite bf16, in increasing order."""
    bits = np.arange(0x7F80, dtype=np.uint16)
    return bits, bf16_value(bits).astype(np.float64)


def bf16_nearest(x: float) -> int:
    """x rounded to the nearest bf16 bits by search in the table of all bf16 values (an
    independent reference for the compiler's rounding); ties go to the even bit pattern."""
    if math.isnan(x):
        return -1  # any NaN
    sign = 0x8000 if math.copysign(1.0, x) < 0 else 0
    bits, vals = bf16_table()
    a = abs(x)
    # the first value above the largest one, 2^128, acts as the rounding neighbour of inf
    k = int(np.searchsorted(vals, a))
    if k == len(vals):
        lo, hi, hi_val = len(vals) - 1, 0x7F80, 2.0**128
    else:
        lo, hi, hi_val = max(k - 1, 0), k, vals[k]
    if a == hi_val:
        return sign | int(hi)
    d_lo, d_hi = a - vals[lo], hi_val - a
    pick = lo if d_lo < d_hi or (d_lo == d_hi and lo % 2 == 0) else hi
    return sign | int(pick)


# ---- constants ---------------------------------------------------------------------------------

FLOAT_LITERALS = [
    "0.0", "-0.0", "+1.5", "-2.25", "0.1", "1e-3", "2.", "0x1.8p1", "-0x1p-149", "inf",
    "-inf", "nan", "-nan", "65504.0", "65519.99", "65520.0", "1e39", "-1e39", "1e308",
    "3.3895313892515355e+38", "3.3961e38", "3.39618e38", "1.00390625", "1.00390625000001",
    "1.01171875", "1e-40", "9.2e-41", "1.0e-7", "5.9e-8", "4.9e-324", "1.0000001",
]  # fmt: skip


def literal_value(text: str) -> float:
    return float.fromhex(text) if "0x" in text else float(text)


def run_constants(ty: str, literals: list[str], out_ty: str | None = None) -> np.ndarray:
    """Store `constant literal : ty` for every literal into element k of a memref."""
    out_ty = out_ty or ty
    lines = []
    for k, lit in enumerate(literals):
        lines.append(f"%r{k} = constant {lit} : {ty}")
        lines += store_lines(k, f"%r{k}", ty, "%out", at=f"%k{k}")
    body = "\n".join("    " + line for line in lines)
    src = f"func @consts(%out: memref<{out_ty}x{len(literals)}>) {HEADER} {{\n{body}\n}}\n"
    out = np.zeros(len(literals), NP_DTYPE[out_ty])
    build(src).kernel("consts")(out)
    return out


@pytest.mark.parametrize("ty", INT_TYPES)
def test_constant_int(ty):
    info = np.iinfo(NP_DTYPE[ty])
    lo = max(int(info.min), -(2**63) + 1)
    vals = [lo, lo + 1, -1, 0, 1, 42, int(info.max) - 1, int(info.max)]
    out = run_constants(ty, [str(v) for v in vals] + ["+7"])
    np.testing.assert_array_equal(out, np.array(vals + [7], NP_DTYPE[ty]))


@pytest.mark.parametrize("ty", FLOAT_TYPES)
def test_constant_float(ty):
    out = run_constants(ty, FLOAT_LITERALS)
    vals = [literal_value(t) for t in FLOAT_LITERALS]
    if ty == "bf16":
        want = [bf16_nearest(v) for v in vals]
        for lit, got, w in zip(FLOAT_LITERALS, out, want):
            if w < 0:
                assert np.isnan(bf16_value(got)), lit
            else:
                assert int(got) == w, f"{lit}: {int(got):#06x} != {w:#06x}"
        return
    with np.errstate(over="ignore"):
        want = np.array(vals).astype(NP_DTYPE[ty])  # one correct rounding from double
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(want))  # -0.0, -nan, -inf


def test_constant_float_spot_checks():
    """The boundary cases in FLOAT_LITERALS, spelled out."""
    h = run_constants("f16", FLOAT_LITERALS).astype(np.float64)
    b = as_float64(run_constants("bf16", FLOAT_LITERALS), "bf16")
    f = run_constants("f32", FLOAT_LITERALS).astype(np.float64)
    at = FLOAT_LITERALS.index
    assert h[at("65519.99")] == 65504.0 and h[at("65520.0")] == np.inf
    assert h[at("5.9e-8")] == 2.0**-24  # f16 subnormal
    assert f[at("1e39")] == np.inf and f[at("-0x1p-149")] == -(2.0**-149)
    assert b[at("1e39")] == np.inf and b[at("3.3961e38")] == 3.3895313892515355e38
    assert b[at("3.39618e38")] == np.inf  # above the tie between bf16 max and 2^128
    assert b[at("1.00390625")] == 1.0  # a tie, to even
    assert b[at("1.00390625000001")] == 1.0078125  # just above the tie (f32 would round to it)
    assert b[at("1.01171875")] == 1.015625  # a tie, to even (up)
    assert b[at("9.2e-41")] == 2.0**-133  # smallest bf16 subnormal


@pytest.mark.parametrize("ty", COMPLEX_TYPES)
def test_constant_complex(ty):
    lits = ["[1.5, -2.0]", "[nan, inf]", "[-0.0, 0.0]", "[0.1, 1e39]", "[-inf, -nan]"]
    lits.append("[0x1p-1, 4.9e-324]")
    out = run_constants(ty, lits)
    pairs = [[literal_value(t.strip()) for t in lit[1:-1].split(",")] for lit in lits]
    want = np.zeros(len(lits), NP_DTYPE[ty])
    with np.errstate(over="ignore"):
        want.real = [p[0] for p in pairs]
        want.imag = [p[1] for p in pairs]
    np.testing.assert_array_equal(out, want)
    for part in ("real", "imag"):
        g, w = getattr(out, part), getattr(want, part)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w), err_msg=part)


def test_constant_bool():
    out = run_constants("bool", ["true", "false", "true"], out_ty="i32")
    np.testing.assert_array_equal(out, [1, 0, 1])


# ---- scalar parameters -------------------------------------------------------------------------


def params_kernel():
    outs = ", ".join(f"%o{k}: memref<{t}x1>" for k, t in enumerate(NUMBER_TYPES))
    params = ", ".join(f"%s{k}: {t}" for k, t in enumerate(NUMBER_TYPES))
    lines = ["%c0 = constant 0 : index"]
    lines += [f"store %s{k}, %o{k}[%c0]" for k in range(len(NUMBER_TYPES))]
    body = "\n".join("    " + line for line in lines)
    src = f"func @params({outs}, {params}) {HEADER} {{\n{body}\n}}\n"
    return build(src).kernel("params")


def pass_through(args: list) -> list[np.ndarray]:
    outs = [np.zeros(1, NP_DTYPE[t]) for t in NUMBER_TYPES]
    params_kernel()(*outs, *args)
    return outs


PARAM_SETS = {
    "min": [-128, -32768, -(2**31), -(2**63), -(2**63), -3.0, -np.inf, -0.0, -np.inf,
            complex(-0.0, -np.inf), complex(-1e300, -5e-324)],
    "max": [127, 32767, 2**31 - 1, 2**63 - 1, 2**63 - 1, np.uint16(0x7F7F), 65504.0,
            3.4028234663852886e38, 1.7976931348623157e308, complex(3e38, 1e-45),
            complex(np.inf, 1.7976931348623157e308)],
    "nan": [0, 1, -1, 7, 11, np.uint16(0xFFC1), np.nan, np.nan, -np.nan,
            complex(np.nan, 1.0), complex(2.0, np.nan)],
    "rounded": [-1, 2, 3, 4, 5, 1.00390625000001, 65519.99, 1e39, 0.1,
                complex(0.1, 1e39), complex(0.1, -0.0)],
    "numpy": [np.int8(-5), np.int16(300), np.int32(-70000), np.int64(2**40), np.int64(-9),
              np.float32(3.0), np.float16(0.5), np.float64(0.25), np.float32(-2.5),
              np.complex64(1 - 2j), np.complex128(0.5 + 0.25j)],
}  # fmt: skip


def expected(t: str, v) -> np.ndarray:
    if t == "bf16":
        bits = int(v) if isinstance(v, np.uint16) else bf16_nearest(float(v))
        return np.array([bits if bits >= 0 else 0x7FC0], np.uint16)
    with np.errstate(over="ignore"):
        return np.array([v]).astype(NP_DTYPE[t])


@pytest.mark.parametrize("case", list(PARAM_SETS))
def test_scalar_parameters_pass_unchanged(case):
    args = PARAM_SETS[case]
    outs = pass_through(args)
    for t, v, got in zip(NUMBER_TYPES, args, outs):
        want = expected(t, v)
        if t == "bf16" and np.isnan(bf16_value(want[0])):
            assert np.isnan(bf16_value(got[0])), f"{case} {t}"
            continue
        np.testing.assert_array_equal(got, want, err_msg=f"{case} {t} {v!r}")
        if t in FLOAT_TYPES + COMPLEX_TYPES and t != "bf16":  # signs of zeros, inf and NaN
            comp = got.real.dtype
            np.testing.assert_array_equal(
                np.signbit(got.view(comp)), np.signbit(want.view(comp)), err_msg=f"{case} {t}"
            )


@pytest.mark.parametrize(
    ("ty", "value"),
    [("i8", 128), ("i16", -32769), ("i64", 2**63), ("i8", np.int64(300)), ("i32", np.int64(2**40))],
)
def test_scalar_parameter_out_of_range_is_an_error(ty, value):
    """A value the parameter type cannot hold is refused (not wrapped silently)."""
    k = params_kernel()
    args = [0] * len(NUMBER_TYPES)
    args[NUMBER_TYPES.index(ty)] = value
    outs = [np.zeros(1, NP_DTYPE[t]) for t in NUMBER_TYPES]
    with pytest.raises(TinytcError) as e:
        k(*outs, *args)
    assert e.value.status is Status.invalid_kernel_arguments
    assert f"expected {ty}, got {value!r}, which is not a valid {ty}" in str(e.value)


def test_complex_number_for_a_real_parameter_is_a_type_error():
    """A value of the wrong kind, as Python's float(1j), not a number out of range."""
    k = params_kernel()
    args = [0] * len(NUMBER_TYPES)
    args[NUMBER_TYPES.index("f32")] = 1j
    outs = [np.zeros(1, NP_DTYPE[t]) for t in NUMBER_TYPES]
    with pytest.raises(TypeError, match=r"expected f32, got the complex number 1j"):
        k(*outs, *args)


@pytest.mark.parametrize(
    ("ty", "value"), [("i32", np.nan), ("i32", 1.9), ("i64", 2.0), ("f32", None)]
)
def test_a_float_for_an_integer_parameter_or_none_is_a_type_error(ty, value):
    """A float for an integer parameter would be truncated and None would be NaN: both are
    refused as values of the wrong kind."""
    k = params_kernel()
    args = [0] * len(NUMBER_TYPES)
    args[NUMBER_TYPES.index(ty)] = value
    outs = [np.zeros(1, NP_DTYPE[t]) for t in NUMBER_TYPES]
    with pytest.raises(TypeError, match=rf"expected {ty}, got (float|NoneType) {value!r}"):
        k(*outs, *args)
    assert not any(o.any() for o in outs)  # nothing ran
