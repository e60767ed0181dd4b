"""The result check the GEMM benchmarks (benchmarks/gemm_batched.py, gemm_limits.py) apply to
every column: each column's own error on the arrays it is timed on, relative to the result's
scale, and FAILED in place of the figure of a column above the tolerance."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import gemm_batched  # noqa: E402


@pytest.mark.parametrize("ty", ["f32", "f64"])
def test_each_column_is_checked_on_its_own_result(ty: str) -> None:
    dtype = gemm_batched.TYPES[ty]
    m, n, k, batch = 5, 3, 7, 4
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(s).astype(dtype) for s in ((batch, m, k), (batch, k, n)))
    want = np.matmul(a, b)
    c = gemm_batched.aligned_stack(np.zeros((batch, m, n), dtype))
    scale = float(np.max(np.abs(want)))
    eps = float(np.finfo(dtype).eps)

    def writes(result: np.ndarray):
        def run() -> None:
            c[...] = result.transpose(1, 2, 0)

        return run

    off = want.copy()
    off[2, 1, 0] += dtype(scale * 10 * eps)  # a rounding-sized difference
    wrong = want.copy()
    wrong[3, 4, 2] += dtype(scale * 1e-3)  # one element wrong
    fns = {"right": writes(want), "off": writes(off), "wrong": writes(wrong), "none": lambda: None}
    errors = gemm_batched.timed_errors(fns, c, want)
    assert errors["right"] == 0.0
    assert errors["wrong"] == pytest.approx(1e-3 * scale / max(1.0, scale), rel=0.01)
    assert errors["none"] == pytest.approx(1.0 * scale / max(1.0, scale))  # C zeroed before
    tol = gemm_batched.tolerance(ty, k)
    assert 0.0 < errors["off"] <= tol < errors["wrong"]
    figures = {"right": 1.5, "off": 2.5, "wrong": 3.5, "none": 4.5}
    row = gemm_batched.cells(figures, errors, tol, ("right", "off", "wrong", "none", "absent"))
    assert row.split() == ["1.5", "2.5", "FAILED", "FAILED", "nan"]
