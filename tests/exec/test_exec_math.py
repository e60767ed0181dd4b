"""Math instructions (cos sin exp exp2 log log2 and their native_ forms) on every allowed type.

Floating types (bf16, f16, f32, f64) allow all twelve; complex types (c32, c64) only exp, exp2,
native_exp and native_exp2. The precise forms are held to the OpenCL accuracy requirements
(f32/f64: cos/sin 4 ulp, exp/exp2/log/log2 3 ulp; f16: 2 ulp; bf16 is computed in f32 and
rounded, so 1 ulp) and to the C99 Annex F special values (NaN, infinities, signed zeros,
overflow to inf, log of 0 and of negative numbers). The native_ forms have implementation-
defined accuracy: they are checked on an ordinary range with a loose tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest

from .support import (
    COMPLEX_TYPES,
    COMPONENT,
    FLOAT_TYPES,
    NP_DTYPE,
    as_float64,
    assert_ulp,
    bf16_bits,
    run_ops,
)

pytestmark = pytest.mark.timeout(120, method="thread")

MATH = {
    "cos": np.cos,
    "sin": np.sin,
    "exp": np.exp,
    "exp2": np.exp2,
    "log": np.log,
    "log2": np.log2,
}
ULP = {
    "bf16": dict.fromkeys(MATH, 1),
    "f16": dict.fromkeys(MATH, 2),
    "f32": {"cos": 4, "sin": 4, "exp": 3, "exp2": 3, "log": 3, "log2": 3},
}
ULP["f64"] = ULP["f32"]


def typed(values, ty: str) -> np.ndarray:
    """float values in type `ty` (bf16: bits, rounded to nearest even from f32)."""
    if ty == "bf16":
        return bf16_bits(np.asarray(values, np.float32))
    return np.asarray(values).astype(NP_DTYPE[ty])


def special_values(ty: str) -> list[float]:
    """Specials, exp overflow/underflow and log domain edges for type `ty`."""
    vals = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 10.0, -10.0]
    big = {"f16": [11.5, 12.0, 16.0, -17.0, -25.0], "f64": [710.0, 1100.0, -746.0, -1100.0]}
    return vals + big.get(ty, [89.0, 100.0, 128.0, -104.0, -150.0])


def ordinary_values(ty: str) -> np.ndarray:
    rng = np.random.default_rng(11)
    lim = 10.0 if ty == "f16" else 60.0
    vals = np.concatenate([np.linspace(-lim, lim, 61), rng.uniform(0, 5, 40)])
    if ty != "f16":
        vals = np.concatenate([vals, [1e4, -3e4, 12345.678]])  # argument reduction of cos/sin
    if ty == "f64":
        vals = np.concatenate([vals, [1e10, -1e15, 1e22]])
    return vals


@pytest.mark.parametrize("ty", FLOAT_TYPES)
def test_math_precise(ty):
    x = typed(np.concatenate([special_values(ty), ordinary_values(ty)]), ty)
    c = run_ops(ty, [f"{op} %x" for op in MATH], [x])
    ref = as_float64(x, ty)
    with np.errstate(all="ignore"):
        for k, (name, fn) in enumerate(MATH.items()):
            assert_ulp(c[:, k], fn(ref), ty, ULP[ty][name], err_msg=f"{name} {ty}")


# measured on the Intel CPU runtime: native_exp has a relative error of 2.3e-4 in f32 (native_exp2
# 1e-6) and 2.3e-9 in f64; f16 and bf16 are dominated by their own rounding
NATIVE_TOL = {"bf16": 1e-2, "f16": 2e-3, "f32": 1e-3, "f64": 1e-6}


@pytest.mark.parametrize("ty", FLOAT_TYPES)
def test_math_native(ty):
    """native_* on an ordinary range (f16 and bf16 are computed in f32 and converted)."""
    lo = np.linspace(-8.0, 8.0, 41)
    pos = np.linspace(0.05, 50.0, 41)
    x = typed(np.concatenate([lo, pos]), ty)
    c = run_ops(ty, [f"native_{op} %x" for op in MATH], [x])
    ref = as_float64(x, ty)
    tol = NATIVE_TOL[ty]
    for k, (name, fn) in enumerate(MATH.items()):
        sel = ref > 0 if name.startswith("log") else np.abs(ref) <= 8
        got = as_float64(c[sel, k], ty)
        np.testing.assert_allclose(got, fn(ref[sel]), rtol=tol, atol=tol, err_msg=name)


def complex_args(ty: str) -> np.ndarray:
    rng = np.random.default_rng(12)
    z = rng.uniform(-5, 5, 40) + 1j * rng.uniform(-20, 20, 40)
    return np.concatenate([[0, 1, 1j, -1j, 2 + 0j, -3.5 + 1e-3j], z]).astype(NP_DTYPE[ty])


@pytest.mark.parametrize("ty", COMPLEX_TYPES)
def test_math_complex_exp(ty):
    """exp(z) = e^re (cos im, sin im), exp2(z) = 2^z = exp(z ln 2); native_ forms loosely."""
    z = complex_args(ty)
    ops = ["exp", "exp2", "native_exp", "native_exp2"]
    c = run_ops(ty, [f"{op} %x" for op in ops], [z])
    Z = z.astype(np.complex128)
    eps = np.finfo(NP_DTYPE[ty]).eps
    for k, op in enumerate(ops):
        want = np.exp(Z) if op.endswith("exp") else np.exp(Z * np.log(2.0))
        # the imaginary argument is up to 20: cos/sin of it carry an absolute error of a few eps
        tol = NATIVE_TOL[COMPONENT[ty]] if op.startswith("native") else 16 * eps
        err = np.abs(c[:, k] - want) / np.abs(want)
        bad = np.flatnonzero(~(err <= tol))
        assert bad.size == 0, f"{op}: z={z[bad[:4]]} got {c[bad[:4], k]} want {want[bad[:4]]}"
