"""Comparisons on every number type, executed on the CPU OpenCL device.

equal and not_equal are allowed on every number type, the ordering comparisons on integers and
floats. Integers compare signed (INT_MIN < INT_MAX); floats compare ordered, except not_equal,
which is true when either operand is NaN (so is NumPy's !=); -0.0 equals 0.0. Complex numbers
are equal when both components are.
"""

from __future__ import annotations

import numpy as np
import pytest

from .support import (
    CMP,
    COMPLEX_TYPES,
    FLOAT_TYPES,
    INT_TYPES,
    NP_DTYPE,
    as_float64,
    bf16_bits,
    run_ops,
)

pytestmark = pytest.mark.timeout(120, method="thread")


def grid(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.repeat(values, len(values)), np.tile(values, len(values))


def check(ty: str, a: np.ndarray, b: np.ndarray, x: np.ndarray, y: np.ndarray, ops) -> None:
    """Run comparisons `ops` on a, b (of type ty) and compare with NumPy on x, y."""
    c = run_ops(ty, [f"{op} %x, %y" for op in ops], [a, b], rty="bool")
    for k, op in enumerate(ops):
        np.testing.assert_array_equal(c[:, k], CMP[op](x, y).astype(np.int32), err_msg=op)


@pytest.mark.parametrize("ty", INT_TYPES)
def test_compare_int_signed(ty):
    info = np.iinfo(NP_DTYPE[ty])
    vals = np.array([info.min, info.min + 1, -1, 0, 1, info.max - 1, info.max], NP_DTYPE[ty])
    a, b = grid(vals)
    check(ty, a, b, a, b, list(CMP))


@pytest.mark.parametrize("ty", FLOAT_TYPES)
def test_compare_float_nan_inf_zero(ty):
    vals = np.array([np.nan, -np.inf, -2.5, -1.0, -0.0, 0.0, 0.5, 1.0, np.inf], np.float32)
    if ty == "bf16":
        a, b = grid(bf16_bits(vals))
    else:
        a, b = grid(vals.astype(NP_DTYPE[ty]))
    check(ty, a, b, as_float64(a, ty), as_float64(b, ty), list(CMP))


@pytest.mark.parametrize("ty", COMPLEX_TYPES)
def test_compare_complex(ty):
    """Both components must be equal; a NaN in either component makes not_equal true."""
    vals = np.array(
        [0, -0.0 + 0j, 1, 1j, 1 + 1j, 1 - 1j, complex(np.nan, 0), complex(1, np.nan)],
        NP_DTYPE[ty],
    )
    a, b = grid(vals)
    check(ty, a, b, a, b, ["equal", "not_equal"])
