"""Bounds-checked mode from a C host (tests/capi/c/bounds_report.c): the compiler-context flag,
the trailing report record argument, and tinytc_binary_get_bounds_report's located message."""

from __future__ import annotations


def test_bounds_report_from_c(compile_c, cl_env):
    prog = compile_c("bounds_report.c", libs=("tinytc", "tinytc_cl", "OpenCL"))
    lines = prog.run(env=cl_env).stdout.splitlines()
    assert lines == [
        "kernel copy: <memory>:3.10-26: load: index 4 in mode 0 of %A is out of bounds [0, 4) "
        "in work-group (4, 0, 0)",
        "    %x = load %A[%g] : f32",
        "         ~~~~~~~~~~~~~~~~~",
        "ok",
    ]
