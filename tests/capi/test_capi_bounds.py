"""Bounds-checked mode from a C host: the compiler-context flag, the trailing report record
argument and tinytc_binary_get_bounds_report's located message (tests/capi/c/bounds_report.c),
and recipes whose handlers own the records, on OpenCL and on Level Zero through our CPU driver
(tests/capi/c/recipe_bounds.c, tinytc_recipe_handler_get_bounds_report)."""

from __future__ import annotations

import pytest

from .test_capi_ze import CPU_DRIVER


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


@pytest.mark.parametrize("runtime", ["opencl", "level_zero"])
def test_recipe_bounds_report_from_c(compile_c, cl_env, capi_libs, runtime):
    if runtime == "opencl":
        prog = compile_c("recipe_bounds.c", libs=("tinytc", "tinytc_cl", "OpenCL"))
        env = cl_env
    else:
        prog = compile_c(
            "recipe_bounds.c",
            libs=("tinytc", "tinytc_ze", "ze_loader"),
            flags=("-DTINYTC_TEST_ZE",),
        )
        env = {"ZE_ENABLE_ALT_DRIVERS": str(capi_libs / CPU_DRIVER)}
    lines = prog.run(env=env).stdout.splitlines()
    # the third work-group's rows 64..95 of A (specialized for 64 rows): reported, skipped
    assert lines == [
        "kernel gemm_beta0: <recipe tall_and_skinny>:23.10-63: subview: index 95 in mode 0 of %A "
        "is out of bounds [0, 64) in work-group (2, 0, 0)",
        "    %a = subview %A[%m:32,0:3] : memref<f32x32x3,strided<1,64>>",
        "         ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~",
        "ok",
    ]
