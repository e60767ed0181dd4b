"""Legacy-language kernels executed on the CPU OpenCL device against NumPy, read with no dialect
flag (auto-detected) and again after `tinytc-upgrade`: both readings must give the results NumPy
gives. The kernels: the yateto-dialect corpus in tests/exec/yateto/ (see its README), and legacy
kernels with a batched GEMM over a sizeless group, a chain of GEMMs through an alloca, and legacy
control flow (for with a step, foreach, if/else with yields, arith.*, cmp.*, cast), and what the
front end reads beyond the reference (tests/lit/legacy/beyond-reference.ir).

Groups of the legacy language have no size: the launch passes the group size (the length of the
member list) as the extra i64 argument the current language's `group<...x?>` takes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tinytc_py.runtime.opencl import Group
from tinytc_py.text.upgrade import upgrade

from .support import build

CORPUS = Path(__file__).resolve().parent / "yateto"
BATCH = 3
RNG = np.random.default_rng(14)


def rand(*shape: int) -> np.ndarray:
    return np.asfortranarray(RNG.standard_normal(shape))


def readings(text: str) -> list[str]:
    """The source as written (auto-detected) and as tinytc-upgrade rewrites it."""
    upgraded = upgrade(text, "legacy.ir").text
    assert upgraded.startswith("; upgraded from legacy.ir")
    return [text, upgraded]


def corpus(name: str) -> str:
    return (CORPUS / name).read_text()


def kernel_name(text: str) -> str:
    return text.split("func @", 1)[1].split("(", 1)[0]


@pytest.mark.parametrize("reading", [0, 1], ids=["as-written", "upgraded"])
def test_copyscaleadd_3d(reading):
    """B(i,j,k) = alpha A(j,i,k) + B(i,j,k) for each batch member, looping over k."""
    src = readings(corpus("copyscaleadd_3d.ir"))[reading]
    A = [rand(9, 56, 4) for _ in range(BATCH)]
    B = [rand(56, 9, 4) for _ in range(BATCH)]
    ref = [1.5 * a.transpose(1, 0, 2) + b for a, b in zip(A, B)]
    build(src).kernel(kernel_name(src))(1.5, A, B, num_groups=BATCH)
    for b, r in zip(B, ref):
        np.testing.assert_allclose(b, r, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reading", [0, 1], ids=["as-written", "upgraded"])
def test_fused_gemms(reading):
    """tmp = kDivM[:, :20] Q[:20, :] (alloca), T = 0.5 tmp star^T, I -= T."""
    src = readings(corpus("fused_gemms.ir"))[reading]
    kdivm = rand(56, 56)
    Q = [rand(56, 9) for _ in range(BATCH)]
    star = [rand(9, 9) for _ in range(BATCH)]
    T = np.asfortranarray(np.full((56, 9, BATCH), np.nan))
    I = [rand(56, 9) for _ in range(BATCH)]
    t_ref = [0.5 * (kdivm[:, :20] @ q[:20, :]) @ s.T for q, s in zip(Q, star)]
    i_ref = [i - t for i, t in zip(I, t_ref)]
    build(src).kernel(kernel_name(src))(kdivm, Q, star, T, I, num_groups=BATCH)
    for g in range(BATCH):
        np.testing.assert_allclose(T[:, :, g], t_ref[g], rtol=1e-11, atol=1e-11)
        np.testing.assert_allclose(I[g], i_ref[g], rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("reading", [0, 1], ids=["as-written", "upgraded"])
def test_elementwise(reading):
    """B[i, j] = A[i, j] w[i] + A[i-1, j] - A[0, j] for i >= 1, B[0, j] = 0."""
    src = readings(corpus("elementwise.ir"))[reading]
    A = [rand(56, 9) for _ in range(BATCH)]
    w = rand(56)
    B = [np.asfortranarray(np.full((56, 9), np.nan)) for _ in range(BATCH)]
    build(src).kernel(kernel_name(src))(A, w, B, num_groups=BATCH)
    for a, b in zip(A, B):
        ref = np.zeros_like(a)
        ref[1:] = a[1:] * w[1:, None] + a[:-1] - a[0]
        np.testing.assert_allclose(b, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reading", [0, 1], ids=["as-written", "upgraded"])
def test_legacy_dump(reading):
    """The printer's v0.3 forms: T[:, :, k, g] = alpha A_g, then T[55, 8, k, g] = A_g[0, k];
    the sizeless group has a dynamic offset."""
    src = readings(corpus("legacy_dump.ir"))[reading]
    A = [rand(56, 9) for _ in range(BATCH)]
    T = np.asfortranarray(np.full((56, 9, 4, BATCH), np.nan))
    build(src).kernel(kernel_name(src))(-2.0, Group(A, 2), T, num_groups=BATCH)
    for g, a in enumerate(A):
        ref = np.repeat((-2.0 * a)[:, :, None], 4, axis=2)
        ref[55, 8, :] = a[0, :4]
        np.testing.assert_allclose(T[:, :, :, g], ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reading", [0, 1], ids=["as-written", "upgraded"])
def test_atomic_gemm(reading):
    """C += sum over the batch of 2 A_g B^T, and C[:, 8] += sum of A_g[:, 0] (atomic updates)."""
    src = readings(corpus("atomic_gemm.ir"))[reading]
    A = [rand(20, 9) for _ in range(BATCH)]
    B, C = rand(9, 9), rand(20, 9)
    ref = C + sum(2.0 * a @ B.T for a in A)
    ref[:, 8] += sum(a[:, 0] for a in A)
    build(src).kernel(kernel_name(src))(A, B, C, num_groups=BATCH)
    np.testing.assert_allclose(C, ref, rtol=1e-11, atol=1e-11)


# the legacy reference's sample: a batched GEMM over a group and a chain through an alloca
FUSED = (Path(__file__).resolve().parents[1] / "lit" / "legacy" / "sample.ir").read_text()


@pytest.mark.parametrize("reading", [0, 1], ids=["as-written", "upgraded"])
def test_batched_gemm_chain_through_alloca(reading):
    src = readings(FUSED)[reading]
    A = [rand(16, 8).astype(np.float32) for _ in range(BATCH)]
    B, C = rand(8, 8).astype(np.float32), rand(8, 16).astype(np.float32)
    D = np.asfortranarray(rand(16, 16, BATCH).astype(np.float32))
    ref = [0.5 * (a @ B.T) @ C + D[:, :, g] for g, a in enumerate(A)]
    build(src).kernel("fused_kernel")(0.5, A, B, C, D, num_groups=BATCH)
    for g in range(BATCH):
        np.testing.assert_allclose(D[:, :, g], ref[g], rtol=1e-5, atol=1e-5)


# beyond the reference: integer immediates as alpha/beta, hadamard_product on matrices
LENIENT = (
    Path(__file__).resolve().parents[1] / "lit" / "legacy" / "beyond-reference.ir"
).read_text()


@pytest.mark.parametrize("reading", [0, 1], ids=["as-written", "upgraded"])
def test_integer_scalars_and_matrix_hadamard(reading):
    src = readings(LENIENT)[reading]
    A, B, C = (rand(8, 4).astype(np.float32) for _ in range(3))
    D = rand(8, 8).astype(np.float32)
    Z = np.asfortranarray(RNG.standard_normal(8) + 1j * RNG.standard_normal(8))
    y = np.asfortranarray(RNG.standard_normal(8) + 1j * RNG.standard_normal(8))
    want_c, want_d, want_y = 2 * A * B, D - A @ B.T, 3 * Z + y
    build(src).kernel("lenient")(A, B, C, D, Z, y, num_groups=1)
    np.testing.assert_allclose(C, want_c, rtol=1e-6)
    np.testing.assert_allclose(D, want_d, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y, want_y, rtol=1e-14)


CONTROL = """
func @control(%x: memref<f64x?>, %y: memref<f64x?>, %n: i32) {
    %m = size %x[0] : memref<f64x?>
    foreach %i = 0, %m {
        %v = load %x[%i] : memref<f64x?>
        %neg = cmp.lt %v, 0.0 : f64
        %a = if %neg -> (f64) {
            %w = arith.neg %v : f64
            yield %w : f64
        } else {
            yield %v : f64
        }
        %ii = cast %i : index -> i32
        %odd = arith.rem %ii, 2 : i32
        %is_odd = cmp.eq %odd, 1 : i32
        %s = if %is_odd -> (f64) {
            yield -1.0 : f64
        } else {
            yield 1.0 : f64
        }
        %r = arith.mul %a, %s : f64
        store %r, %y[%i] : memref<f64x?>
    }
    for %k = 0, %n, 2 : i32 {
        %kk = cast %k : i32 -> index
        %c = load %x[%kk] : memref<f64x?>
        %d = arith.add %c, 10.0 : f64
        %e = group_id
        %first = cmp.eq %e, 0 : index
        if %first {
            foreach %j = 0, 1 {
                store %d, %x[%kk] : memref<f64x?>
            }
        }
    }
}
"""


@pytest.mark.parametrize("reading", [0, 1], ids=["as-written", "upgraded"])
def test_control_flow(reading):
    src = readings(CONTROL)[reading]
    x = RNG.standard_normal(37)
    x0 = x.copy()
    y = np.full(37, np.nan)
    build(src).kernel("control")(x, y, np.int32(9), num_groups=1)
    sign = np.where(np.arange(37) % 2 == 1, -1.0, 1.0)
    np.testing.assert_allclose(y, np.abs(x0) * sign, rtol=0, atol=0)
    ref = x0.copy()
    ref[0:9:2] += 10.0
    np.testing.assert_allclose(x, ref, rtol=0, atol=0)
