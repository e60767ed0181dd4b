"""The kernels benchmarks/gemm_limits.py sets beside our GEMM compute what its columns claim: the
floor kernel moves all of A, B and C (C[:, j] = A[:, j % K] + B[:, j]), the cached kernel is the
GEMM on entry group_id % 8; benchmarks/gemm_ab.py's variants have the subgroup size they
name, and its cached libxsmm column computes the same 8 entries."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from .support import build

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gemm_ab  # noqa: E402
import gemm_anchors  # noqa: E402
import gemm_limits  # noqa: E402

TYPES = {"f32": np.float32, "f64": np.float64}


def stacks(m: int, n: int, k: int, ty: str, batch: int):
    """(A, B, C) as column-major (rows, cols, batch) stacks and as (batch, rows, cols) views."""
    rng = np.random.default_rng(7)
    shapes = ((m, k, batch), (k, n, batch), (m, n, batch))
    out = [np.asfortranarray(rng.standard_normal(s).astype(TYPES[ty])) for s in shapes]
    return out, [x.transpose(2, 0, 1) for x in out]


@pytest.mark.parametrize(
    "m,n,k,ty,s",
    [
        (16, 16, 16, "f32", 16),
        (23, 37, 19, "f32", 16),
        (23, 37, 19, "f64", 8),
        (8, 40, 33, "f64", 4),
    ],
)
def test_floor_kernel_moves_a_b_and_c(m, n, k, ty, s):
    (A, B, C), (a, b, _) = stacks(m, n, k, ty, 3)
    kernel = build(gemm_limits.floor_text(m, n, k, ty, s)).kernel("gemm")
    kernel(TYPES[ty](1), A, B, TYPES[ty](0), C, num_groups=(3, 1, 1))
    np.testing.assert_array_equal(C.transpose(2, 0, 1), gemm_limits.floor_expected(a, b, s))


def test_floor_kernel_needs_n_at_least_k():
    with pytest.raises(ValueError, match="N >= K"):
        gemm_limits.floor_text(16, 8, 9, "f32", 16)


def test_cached_kernel_computes_entry_group_id_mod_8():
    m, n, k, ty = 12, 10, 7, "f64"
    batch = gemm_limits.RESIDENT + 2
    (A, B, C), (a, b, c) = stacks(m, n, k, ty, batch)
    before = c.copy()
    kernel = build(gemm_limits.cached_text(gemm_limits.kernel_text(m, n, k, ty))).kernel("gemm")
    kernel(TYPES[ty](1), A, B, TYPES[ty](0), C, num_groups=(batch, 1, 1))
    got = C.transpose(2, 0, 1)
    resident = gemm_limits.RESIDENT
    np.testing.assert_allclose(got[:resident], a[:resident] @ b[:resident], rtol=1e-12)
    np.testing.assert_array_equal(got[resident:], before[resident:])


@pytest.mark.skipif(not gemm_anchors.XSMM_HEADER.exists(), reason="libxsmm-dev not installed")
def test_cached_libxsmm_computes_entry_index_mod_8():
    """gemm_ab.py --cached runs libxsmm on the resident entries as our cached kernel: call i of
    the batch computes entry i % 8, the others are left as they were."""
    m, n, k, ty = 23, 37, 19, "f64"
    batch = gemm_limits.RESIDENT + 3
    (A, B, C), (a, b, c) = stacks(m, n, k, ty, batch)
    before = c.copy()
    lib = gemm_anchors.xsmm_library()
    gemm_anchors.xsmm_gemm(lib, m, n, k, A, B, C, resident=gemm_limits.RESIDENT)()
    got = C.transpose(2, 0, 1)
    resident = gemm_limits.RESIDENT
    np.testing.assert_allclose(got[:resident], a[:resident] @ b[:resident], rtol=1e-12)
    np.testing.assert_array_equal(got[resident:], before[resident:])


@pytest.mark.parametrize("cached", [False, True])
@pytest.mark.parametrize(("variant", "sgs"), [("sg=16:2x6k4", 16), ("sg=8:3x5k2", 8)])
def test_ab_variant_has_the_subgroup_size_it_names(variant, sgs, cached):
    """A pinned variant compiles to its subgroup size (its blocking goes through the core
    info's gemm_blockings, test_gemm_tuning.test_tuned_blocking_overrides_the_model) and
    computes the GEMM, on every entry or (cached) on the resident ones only."""
    pytest.importorskip("pyopencl")
    from tinytc_py.runtime import device

    try:
        device.default_device()
    except RuntimeError:
        pytest.skip("no OpenCL device")
    case = gemm_ab.variant_case(23, 37, 19, "f32", gemm_ab.Variant.parse(variant), cached)
    assert case.label == variant
    assert case.kernel.info.subgroup_size == sgs
    batch = gemm_limits.RESIDENT + 3
    a, b, c = case.data(batch)
    arrays = case.to_device(a, b, c)
    case.launch(arrays, batch)()
    got = arrays[2].get().transpose(2, 0, 1)
    want = a @ b
    if cached:  # entries past the resident ones keep their values
        want[gemm_limits.RESIDENT :] = c[gemm_limits.RESIDENT :]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
