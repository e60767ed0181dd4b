"""The OpenCL C API (libtinytc_cl) on the host's own OpenCL objects, from C programs that create
their cl_context and queue on the OpenCL device tinytc_py.runtime.device makes visible (the
Intel CPU runtime from PyPI when there is no GPU)."""

from __future__ import annotations


def test_cl_interop_and_small_gemm_recipe(compile_c, cl_env):
    prog = compile_c("cl_interop.c", libs=("tinytc", "tinytc_cl", "OpenCL"))
    assert prog.run(env=cl_env).stdout == "ok\n"
