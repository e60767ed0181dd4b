"""A run-time alpha of a gemm on a SIMD CPU core: the epilogue tests alpha == 1 once per
subgroup tile and then stores the accumulators unscaled, else scales them (one multiplication
per accumulator vector; passes/lower_linalg_gemm.py `GemmLowering.epilogue`). The SPIR-V
expectations pin the core info, so they hold on any host; the kernels run on the CPU device
against NumPy with both branches taken."""

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


def alpha_tests(source: str, device: str) -> int:
    """How many `x == 1.0` tests the SPIR-V of `source` compiled for `device` has."""
    text = dump(compile_to_spirv(parse(source), lib_options.core_info_for_device(device)).data)
    return len(re.findall(r"= OpFOrdEqual ", text))


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
@pytest.mark.parametrize(("mnk", "t"), [((16, 16, 16), "f32"), ((23, 37, 19), "f64")])
def test_a_run_time_alpha_is_tested_once_per_tile_on_a_cpu_core(isa, mnk, t):
    """One test per microkernel instance (full tiles and the checked remainder tile each have
    theirs), none for a constant alpha, none on a GPU core."""
    assert alpha_tests(kernel(*mnk, t), f"cpu-{isa}") >= 1
    assert alpha_tests(kernel(*mnk, t, "1.5"), f"cpu-{isa}") == 0
    assert alpha_tests(kernel(*mnk, t), "pvc") == 0


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
