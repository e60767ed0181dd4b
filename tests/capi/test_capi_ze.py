"""The Level Zero C API (libtinytc_ze) from C programs that own their Level Zero objects,
launched for real through the system's Level Zero loader and our CPU driver (capi/ze_cpu),
each once plainly and once with the loader's validation layer on."""

from __future__ import annotations

import pytest

from .conftest import CProgram
from .test_examples_c import compile_example

CPU_DRIVER = "libze_tinytc_cpu.so"
VALIDATION = {"ZE_ENABLE_VALIDATION_LAYER": "1", "ZE_ENABLE_PARAMETER_VALIDATION": "1"}


@pytest.fixture(scope="session", params=["plain", "validation"])
def ze_env(request, capi_libs, cl_env) -> dict[str, str]:
    """The environment a C host needs to run on our CPU driver: ZE_ENABLE_ALT_DRIVERS only
    (the driver finds the OpenCL CPU runtime itself); plus the validation-layer switches."""
    driver = capi_libs / CPU_DRIVER
    assert driver.is_file(), f"capi/build.py did not build {driver}"
    env = {"ZE_ENABLE_ALT_DRIVERS": str(driver)}
    return env | (VALIDATION if request.param == "validation" else {})


def test_ze_interop_and_recipes(compile_c, ze_env):
    prog: CProgram = compile_c("ze_interop.c", libs=("tinytc", "tinytc_ze", "ze_loader"))
    result = prog.run(env=ze_env)
    assert result.stdout.endswith("ok\n"), result.stdout + result.stderr
    # the reporter got the OpenCL runtime's build log of the failed module
    log = next(line for line in result.stdout.splitlines() if line.startswith("build log:"))
    assert "Level Zero module failed" in log


def test_level_zero_example(capi_libs, tmp_path, ze_env):
    result = compile_example("simple_ze", capi_libs, tmp_path, "tinytc_ze").run(env=ze_env)
    assert "support level: 1" in result.stdout
    assert "gemm: 0 of 25600 entries wrong" in result.stdout
    assert "custom kernel: 0 of 1600 entries wrong" in result.stdout
