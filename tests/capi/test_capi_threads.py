"""Concurrency through the C API: tests/capi/c/threads.c runs 8 host threads at once (pthreads,
then an OpenMP parallel loop), each parsing, building, compiling and launching its own kernels
on a shared OpenCL context and core info, and checks every result."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("mode", ["pthreads", "openmp"])
def test_eight_host_threads_build_compile_and_launch(compile_c, cl_env, mode):
    prog = compile_c(
        "threads.c",
        libs=("tinytc", "tinytc_cl", "OpenCL", "pthread"),
        flags=("-fopenmp",),
        name=f"threads_{mode}",
    )
    assert prog.run(mode, "8", "2", env=cl_env).stdout.splitlines() == [
        "8 threads x 2 rounds",
        "ok",
    ]
