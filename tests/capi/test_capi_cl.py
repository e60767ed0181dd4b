"""The OpenCL C API (libtinytc_cl) on the host's own OpenCL objects, from C programs that create
their cl_context and queue on the OpenCL device tinytc_py.runtime.device makes visible (the
Intel CPU runtime from PyPI when there is no GPU)."""

from __future__ import annotations


def test_cl_interop_and_recipes(compile_c, cl_env):
    """Kernel bundles, launches, and both recipes with cl_mem buffers, USM and SVM pointers,
    each result compared with a reference computed in C."""
    prog = compile_c("cl_interop.c", libs=("tinytc", "tinytc_cl", "OpenCL"))
    lines = prog.run(env=cl_env).stdout.splitlines()
    expected = []
    for kind in ("buffer", "usm_pointer", "svm_pointer"):
        expected += [
            f"small_gemm_batched {kind} beta=0: 280 entries ok",
            f"small_gemm_batched {kind} beta=0.5: 280 entries ok",
            f"tall_and_skinny {kind} beta=0: 1806 entries ok",
            f"tall_and_skinny {kind} beta=1: 1806 entries ok",
        ]
    assert lines == [*expected, "ok"]
