"""A run-time alpha of a gemm on a SIMD CPU core: the epilogue tests alpha == 1, together with a
run-time beta == 0, once per subgroup tile and then stores the accumulators unscaled without
reading C, else scales them (one multiplication per accumulator vector) and adds beta*C, C read
only when beta is not 0 (passes/lower_linalg_gemm.py `GemmLowering.epilogue`). Complex
accumulators are always scaled. The SPIR-V expectations pin the core info, so they hold on any
host; the kernels run on the CPU device against NumPy with both branches taken, and with a C
full of NaN where C must not be read."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tinytc_py import options as lib_options
from tinytc_py.compiler import compile_to_spirv
from tinytc_py.spirv import dump
from tinytc_py.text.dialect import parse

from .test_gemm_tuning import cl_device

pytestmark = pytest.mark.timeout(300, method="thread")

KERNEL = """\
func @gemm(%alpha: {t}, %A: memref<{t}x{m}x{k}x?>, %B: memref<{t}x{k}x{n}x?>, %beta: {t},
           %C: memref<{t}x{m}x{n}x?>) {{
    %gid = group_id.x : index
    %a = subview %A[0:{m},0:{k},%gid] : memref<{t}x{m}x{k}>
    %b = subview %B[0:{k},0:{n},%gid] : memref<{t}x{k}x{n}>
    %c = subview %C[0:{m},0:{n},%gid] : memref<{t}x{m}x{n}>
    gemm.n.n {alpha}, %a, %b, %beta, %c
}}
"""


def kernel(m: int, n: int, k: int, t: str, alpha: str = "%alpha") -> str:
    return KERNEL.format(m=m, n=n, k=k, t=t, alpha=alpha)


def spirv_text(source: str, device: str) -> str:
    return dump(compile_to_spirv(parse(source), lib_options.core_info_for_device(device)).data)


def count(op: str, text: str) -> int:
    return len(re.findall(rf"= Op{op} ", text))


def with_beta(source: str, beta: str) -> str:
    return source.replace("%b, %beta, %c", f"%b, {beta}, %c")


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_a_run_time_alpha_is_tested_once_per_tile_on_a_cpu_core(isa):
    """16^3 f32 is one microkernel instance (one tile kind) of several accumulator vectors: with
    a constant beta the only OpFOrdEqual is the test of alpha, exactly one; with a run-time beta
    one OpLogicalAnd joins it to the beta test. A test per accumulator vector would give as many
    as the general path's per-vector tests of beta (OpFUnordNotEqual, more than one)."""
    source = kernel(16, 16, 16, "f32")
    assert count("FOrdEqual", spirv_text(with_beta(source, "0.0"), f"cpu-{isa}")) == 1
    assert count("FOrdEqual", spirv_text(with_beta(source, "0.5"), f"cpu-{isa}")) == 1
    text = spirv_text(source, f"cpu-{isa}")
    assert count("LogicalAnd", text) == 1
    assert count("FUnordNotEqual", text) > 1


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_each_microkernel_instance_has_one_alpha_test(isa):
    """23x37x19 f64 has a full and a checked remainder tile: one alpha test (constant beta) and
    one OpLogicalAnd (run-time beta) per instance, fewer than its accumulator vectors."""
    source = kernel(23, 37, 19, "f64")
    const_beta = count("FOrdEqual", spirv_text(with_beta(source, "0.0"), f"cpu-{isa}"))
    text = spirv_text(source, f"cpu-{isa}")
    assert const_beta >= 2
    assert count("LogicalAnd", text) == const_beta
    assert count("FOrdEqual", text) == 2 * const_beta
    assert count("FUnordNotEqual", text) > const_beta


@pytest.mark.parametrize("t", ["f32", "c32"])
def test_no_alpha_test_for_a_constant_alpha_a_gpu_core_or_complex(t):
    """No test for a constant alpha, on a GPU core, or with complex accumulators (`epilogue`)."""
    source = with_beta(kernel(16, 16, 16, t), "0.0")
    assert count("FOrdEqual", spirv_text(source, "cpu-avx512")) == (1 if t == "f32" else 0)
    assert count("FOrdEqual", spirv_text(kernel(16, 16, 16, t, "1.5"), "cpu-avx512")) == 0
    assert count("FOrdEqual", spirv_text(source, "pvc")) == 0


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
@pytest.mark.parametrize(
    ("mnk", "t"),
    [((16, 16, 16), "f32"), ((32, 32, 32), "f64"), ((23, 37, 19), "f32"), ((16, 16, 16), "f64")],
)
def test_gemm_with_a_run_time_alpha_matches_numpy(isa, mnk, t):
    """alpha 1 (unscaled branch) and 2.5 and -1 (scaled branch), beta 0 (C not read) and 0.5."""
    cl_device()
    from tinytc_py.runtime.opencl import program

    info = lib_options.core_info_for_device(f"cpu-{isa}")
    gemm = program(kernel(*mnk, t), core_info=info).kernel("gemm")
    m, n, k = mnk
    dtype = {"f32": np.float32, "f64": np.float64}[t]
    rng = np.random.default_rng(3)
    batch = 5
    A, B, C0 = (
        np.asfortranarray(rng.standard_normal((*s, batch)).astype(dtype))
        for s in ((m, k), (k, n), (m, n))
    )
    ab = np.einsum("ikb,kjb->ijb", A.astype(np.float64), B.astype(np.float64))
    tol = 1e-5 if t == "f32" else 1e-12
    for alpha in (1.0, 2.5, -1.0):
        for beta in (0.0, 0.5):
            C = C0.copy(order="F")
            gemm(dtype(alpha), A, B, dtype(beta), C, num_groups=(batch, 1, 1))
            want = alpha * ab + beta * C0
            np.testing.assert_allclose(C, want, rtol=tol, atol=tol * k, err_msg=f"{alpha} {beta}")


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_atomic_gemm_with_a_run_time_alpha_matches_numpy(isa):
    """.atomic with beta 1 (atomic_add): alpha 1 adds the unscaled tile, 2.5 the scaled one."""
    cl_device()
    from tinytc_py.runtime.opencl import program

    m, n, k, t = 16, 16, 16, "f32"
    source = kernel(m, n, k, t).replace(
        "gemm.n.n %alpha, %a, %b, %beta", "gemm.n.n.atomic %alpha, %a, %b, 1.0"
    )
    gemm = program(source, core_info=lib_options.core_info_for_device(f"cpu-{isa}")).kernel("gemm")
    rng = np.random.default_rng(4)
    batch = 3
    A, B, C0 = (
        np.asfortranarray(rng.standard_normal((*s, batch)).astype(np.float32))
        for s in ((m, k), (k, n), (m, n))
    )
    ab = np.einsum("ikb,kjb->ijb", A.astype(np.float64), B.astype(np.float64))
    for alpha in (1.0, 2.5):
        C = C0.copy(order="F")
        gemm(np.float32(alpha), A, B, np.float32(0), C, num_groups=(batch, 1, 1))
        np.testing.assert_allclose(C, alpha * ab + C0, rtol=1e-5, atol=1e-5 * k, err_msg=f"{alpha}")


def batched(shapes, dtype, seed: int, batch: int):
    rng = np.random.default_rng(seed)
    return [np.asfortranarray(rng.standard_normal((*s, batch)).astype(dtype)) for s in shapes]


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
@pytest.mark.parametrize(("mnk", "t"), [((16, 16, 16), "f32"), ((23, 37, 19), "f64")])
def test_c_is_not_read_when_a_run_time_beta_is_zero(isa, mnk, t):
    """C full of NaN with beta 0 and -0.0: alpha 1 (unscaled branch) and 2.5 (scaled branch)
    give A@B*alpha without a NaN (0*NaN would be NaN if C were read)."""
    cl_device()
    from tinytc_py.runtime.opencl import program

    info = lib_options.core_info_for_device(f"cpu-{isa}")
    gemm = program(kernel(*mnk, t), core_info=info).kernel("gemm")
    m, n, k = mnk
    dtype = {"f32": np.float32, "f64": np.float64}[t]
    batch = 3
    A, B = batched(((m, k), (k, n)), dtype, 5, batch)
    ab = np.einsum("ikb,kjb->ijb", A.astype(np.float64), B.astype(np.float64))
    tol = 1e-5 if t == "f32" else 1e-12
    for alpha in (1.0, 2.5):
        for beta in (0.0, -0.0):
            C = np.asfortranarray(np.full((m, n, batch), np.nan, dtype))
            gemm(dtype(alpha), A, B, dtype(beta), C, num_groups=(batch, 1, 1))
            assert not np.isnan(C).any(), f"{alpha} {beta}"
            np.testing.assert_allclose(C, alpha * ab, rtol=tol, atol=tol * k, err_msg=f"{alpha}")


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_complex_alpha_one_scales_an_inf(isa):
    """c32 with a run-time alpha 1 and beta 0, A[0,0] = inf: row 0 of the product is inf+inf*i
    (finite B of non-zero parts), and the scaled path stores (inf+inf*i)*(1+0i) = nan+nan*i,
    which storing the accumulators unscaled would not give. The other rows match NumPy."""
    cl_device()
    from tinytc_py.runtime.opencl import program

    m, n, k, t = 16, 16, 16, "c32"
    info = lib_options.core_info_for_device(f"cpu-{isa}")
    gemm = program(kernel(m, n, k, t), core_info=info).kernel("gemm")
    batch = 2
    parts = batched(((m, k), (k, n), (m, k), (k, n)), np.float32, 6, batch)
    A = np.asfortranarray(parts[0] + 1j * parts[2]).astype(np.complex64)
    B = np.asfortranarray(parts[1] + 1j * parts[3]).astype(np.complex64)
    A[0, 0, :] = np.inf
    C = np.asfortranarray(np.zeros((m, n, batch), np.complex64))
    gemm(np.complex64(1), A, B, np.complex64(0), C, num_groups=(batch, 1, 1))
    assert np.isnan(C[0].real).all() and np.isnan(C[0].imag).all()
    want = np.einsum("ikb,kjb->ijb", A[1:].astype(np.complex128), B.astype(np.complex128))
    np.testing.assert_allclose(C[1:], want, rtol=1e-5, atol=1e-5 * k)
