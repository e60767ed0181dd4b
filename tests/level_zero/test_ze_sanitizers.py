"""The Level Zero CPU driver built with AddressSanitizer and UndefinedBehaviorSanitizer runs
the driver's C test programs clean: any report makes the program fail (UBSan halts on the first
error, ASan always does). The test programs are not instrumented; the sanitizer runtimes are
preloaded. Leak checking is off: the Intel OpenCL runtime under the driver keeps allocations
until exit."""

from __future__ import annotations

import pytest

from sanitizer_runtime import SANITIZE, preload

from .conftest import ZeProgram, load_driver_build
from .test_ze_driver import axpy_spv  # noqa: F401  (the fixture)


@pytest.fixture(scope="module")
def sanitized(ze_driver, tmp_path_factory):
    """(driver path, environment) of the instrumented build."""
    out = tmp_path_factory.mktemp("ze_cpu_asan")
    driver = load_driver_build().build_driver(out, flags=SANITIZE)
    env = {
        "LD_PRELOAD": preload(),
        "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0:exitcode=99",
        "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1:exitcode=98",
    }
    return driver, env


@pytest.mark.parametrize(
    ("program", "args"),
    [
        ("properties.c", ()),
        ("events.c", ()),
        ("invalid.c", ("wrong-kinds",)),
        ("kernel.c", ("immediate",)),
        ("kernel.c", ("regular",)),
        ("kernel.c", ("native",)),
    ],
)
def test_driver_programs_run_clean_under_asan_and_ubsan(
    ze_program,
    sanitized,
    axpy_spv,  # noqa: F811
    program,
    args,
):
    driver, env = sanitized
    exe = ze_program(program).exe
    if program == "kernel.c":
        args = (str(axpy_spv), *args)
    result = ZeProgram(exe, driver).run(*args, env=env, check=False)
    assert "Sanitizer" not in result.stderr and "runtime error" not in result.stderr, result.stderr
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr}"
    assert result.stdout.rstrip().endswith("ok")
