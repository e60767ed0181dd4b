"""The math extension (docs/extensions.md): sqrt rsqrt tanh erf floor ceil round trunc pow fma
on every floating type, against NumPy, with the OpenCL accuracy requirements.

f32/f64 ulp bounds are OpenCL's (sqrt 3 and correctly rounded in f64, rsqrt 2, tanh 5, erf 16,
pow 16, the rounding functions and fma exact); f16 gets OpenCL's half bounds (sqrt 1.5, rsqrt 1,
tanh 2, erf 4, pow 4); bf16 is computed in f32 and rounded once, so 1 ulp (0 for the exact
functions). Special values (NaN, infinities, signed zeros, negative square roots) follow C99
Annex F.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from .support import FLOAT_TYPES, NP_DTYPE, as_float64, assert_ulp, bf16_bits, run_ops

pytestmark = pytest.mark.timeout(120, method="thread")


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """OpenCL's round: halfway cases away from zero; the result keeps the sign of x."""
    t = np.trunc(x)
    return np.copysign(t + np.sign(x) * (np.abs(x - t) >= 0.5), x)


UNARY = {
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "tanh": np.tanh,
    "erf": np.vectorize(math.erf, otypes=[np.float64]),
    "floor": np.floor,
    "ceil": np.ceil,
    "round": _round_half_away,
    "trunc": np.trunc,
}
EXACT = {"floor", "ceil", "round", "trunc", "fma"}
ULP = {
    "f32": {"sqrt": 3, "rsqrt": 2, "tanh": 5, "erf": 16, "pow": 16},
    "f64": {"sqrt": 0, "rsqrt": 2, "tanh": 5, "erf": 16, "pow": 16},
    "f16": {"sqrt": 1.5, "rsqrt": 1, "tanh": 2, "erf": 4, "pow": 4},
    "bf16": {"sqrt": 1, "rsqrt": 1, "tanh": 1, "erf": 1, "pow": 1},
}


def ulp(ty: str, op: str) -> float:
    return 0 if op in EXACT else ULP[ty][op]


def typed(values, ty: str) -> np.ndarray:
    if ty == "bf16":
        return bf16_bits(np.asarray(values, np.float32))
    return np.asarray(values).astype(NP_DTYPE[ty])


def unary_values(ty: str) -> np.ndarray:
    specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.5]
    lim = 60.0 if ty == "f16" else 1000.0
    ordinary = np.concatenate([np.linspace(-lim, lim, 97), np.linspace(-3, 3, 61)])
    return np.concatenate([specials, ordinary, [0.49999997, -0.49999997, 1e-3, 4.0, 100.25]])


@pytest.mark.parametrize("ty", FLOAT_TYPES)
def test_unary_math(ty):
    x = typed(unary_values(ty), ty)
    c = run_ops(ty, [f"{op} %x" for op in UNARY], [x])
    ref = as_float64(x, ty)
    with np.errstate(all="ignore"):
        for k, (op, fn) in enumerate(UNARY.items()):
            assert_ulp(c[:, k], fn(ref), ty, ulp(ty, op), err_msg=f"{op} {ty}")


@pytest.mark.parametrize("ty", FLOAT_TYPES)
def test_pow_and_fma(ty):
    """pow on positive bases (and the specials pow(x, 0) = 1, pow(0, y<0) = inf); fma on
    dyadic values whose exact result is representable, so that the reference is exact."""
    rng = np.random.default_rng(5)
    top = 8.0 if ty in ("f16", "bf16") else 40.0
    base = np.concatenate([[0.0, 1.0, 2.0, 0.5, np.inf], rng.uniform(0.01, top, 60)])
    expo = np.concatenate([[-1.0, 0.0, 3.0, 0.5, -2.0], rng.uniform(-4, 4, 60)])
    x, y = typed(base, ty), typed(expo, ty)
    c = run_ops(ty, ["pow %x, %y", "fma %x, %y, %x"], [x, y])
    X, Y = as_float64(x, ty), as_float64(y, ty)
    with np.errstate(all="ignore"):
        assert_ulp(c[:, 0], np.power(X, Y), ty, ulp(ty, "pow"), err_msg=f"pow {ty}")
    a = typed(np.arange(-8, 8) / 4.0, ty)
    b = typed(np.arange(15, -1, -1) / 8.0, ty)
    f = run_ops(ty, ["fma %x, %y, %x"], [a, b])
    A, B = as_float64(a, ty), as_float64(b, ty)
    assert_ulp(f[:, 0], A * B + A, ty, 0, err_msg=f"fma {ty}")
