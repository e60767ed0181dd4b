"""The C parts of the C API libraries (the cffi embedding glue, capi/helpers.c and native*.c;
the Level Zero driver has its own test in tests/level_zero) built with AddressSanitizer and
UndefinedBehaviorSanitizer run the C API test programs and the C API fuzzer clean. The programs
are not instrumented; the sanitizer runtimes are preloaded. Leak checking is off: the embedded
Python interpreter keeps its allocations until exit."""

from __future__ import annotations

import subprocess

import pytest

from sanitizer_runtime import SANITIZE, preload

from .conftest import C_DIR, INCLUDE, ROOT, clean_env, load_tool


@pytest.fixture(scope="module")
def sanitized_libs(capi_libs, tmp_path_factory):
    out = tmp_path_factory.mktemp("capi_asan") / "lib"
    load_tool(ROOT / "capi" / "build.py", "tinytc_capi_build").build(out, flags=SANITIZE)
    return out


@pytest.mark.parametrize(
    ("program", "args"),
    [
        ("errors.c", ()),
        ("refcount.c", ()),
        ("builder_api.c", ("{tmp}/api.spv",)),
        ("core_compile.c", ("{tmp}/core.spv",)),
        ("fuzz.c", ("7", "2000")),
    ],
)
def test_capi_programs_run_clean_under_asan_and_ubsan(sanitized_libs, tmp_path, program, args):
    exe = tmp_path / program[:-2]
    cmd = ["gcc", f"-I{INCLUDE}", f"-I{C_DIR}", str(C_DIR / program), "-o", str(exe)]
    cmd += [f"-L{sanitized_libs}", "-ltinytc", f"-Wl,-rpath,{sanitized_libs}", "-lm"]
    subprocess.run(cmd, check=True, capture_output=True)
    env = {
        **clean_env(),
        "LD_PRELOAD": preload(),
        "ASAN_OPTIONS": "detect_leaks=0",
        "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
    }
    argv = [str(exe), *(a.format(tmp=tmp_path) for a in args)]
    result = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert "Sanitizer" not in result.stderr and "runtime error" not in result.stderr, result.stderr
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr}"
