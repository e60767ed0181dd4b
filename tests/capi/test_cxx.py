"""tinytc's C++ API (include/tinytc/*.hpp): each header compiles on its own, and C++ programs
built with g++ -std=c++20 -Wall -Wextra -Werror run the builder, the compiler, OpenCL launches
and Level Zero launches (through our CPU driver), checking every result they compute.

Upstream tinytc's own C++ test suite (its test/cl and test/ze linalg suites, unmodified but for
the OpenCL device type) runs against our headers and libraries when TINYTC_UPSTREAM_SRC names a
checkout of intel/tiny-tensor-compiler v0.4.0 (see test_upstream_linalg_suite)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import INCLUDE, clean_env
from .test_capi_ze import CPU_DRIVER

HEADERS = ["tinytc", "types", "core", "builder", "tinytc_cl", "tinytc_ze"]
CXXFLAGS = ("-std=c++20",)
SHIM = Path(__file__).resolve().parents[1] / "cxx" / "upstream_shim"
ZE_HEADER = Path("/usr/include/level_zero/ze_api.h")


@pytest.mark.parametrize("header", HEADERS)
def test_each_header_compiles_alone(tmp_path, header):
    src = tmp_path / "one.cpp"
    src.write_text(f'#include "tinytc/{header}.hpp"\n')
    cmd = ["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic"]
    cmd += ["-DCL_TARGET_OPENCL_VERSION=300", f"-I{INCLUDE}", "-fsyntax-only", str(src)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_cxx_builder_compile_and_errors(compile_c):
    """Builder, printer, parser, passes, SPIR-V, builder_error/status exceptions, handles."""
    prog = compile_c("cxx_builder.cpp", cxx=True, flags=CXXFLAGS)
    out = prog.run().stdout
    assert out.endswith("ok\n")
    assert "%smaller = if" in out and "init(" in out


def test_cxx_opencl_launch_and_recipe(compile_c, cl_env):
    prog = compile_c("cxx_cl.cpp", libs=("tinytc_cl", "tinytc", "OpenCL"), cxx=True, flags=CXXFLAGS)
    assert prog.run(env=cl_env).stdout == "ok\n"


def test_cxx_level_zero_launch_and_recipe(compile_c, capi_libs, cl_env):
    prog = compile_c(
        "cxx_ze.cpp", libs=("tinytc_ze", "tinytc", "ze_loader"), cxx=True, flags=CXXFLAGS
    )
    env = {"ZE_ENABLE_ALT_DRIVERS": str(capi_libs / CPU_DRIVER)}
    assert prog.run(env=env).stdout == "ok\n"


# ---- upstream's own suite ----------------------------------------------------------------------

UPSTREAM_RUNTIMES = {
    "cl": (("tinytc_cl", "tinytc", "OpenCL"), ("-DCL_TARGET_OPENCL_VERSION=300",)),
    "ze": (("tinytc_ze", "tinytc", "ze_loader"), ()),
}


def upstream_sources(upstream: Path, runtime: str, dest: Path) -> list[Path]:
    """Copies upstream's test/ to dest, widening the OpenCL test runtime's device type from GPU
    to ALL (the one edit: without a GPU the CPU device runs the kernels)."""
    shutil.copytree(upstream / "test", dest / "test")
    test = dest / "test"
    rt = test / "cl" / "test_runtime.cpp"
    rt.write_text(rt.read_text().replace("CL_DEVICE_TYPE_GPU", "CL_DEVICE_TYPE_ALL"))
    files = ["main.cpp", "linalg_blas_a2.cpp", "linalg_blas_a3.cpp", "linalg_types.cpp"]
    return [test / f for f in files] + [
        test / runtime / "linalg.cpp",
        test / runtime / "test_runtime.cpp",
    ]


def upstream_checkout() -> Path:
    upstream = os.environ.get("TINYTC_UPSTREAM_SRC")
    if not upstream or not (Path(upstream) / "test" / "linalg.hpp").is_file():
        pytest.skip("set TINYTC_UPSTREAM_SRC to a checkout of tiny-tensor-compiler v0.4.0")
    return Path(upstream)


def test_upstream_cxx_examples(compile_c, tmp_path):
    """Upstream's C++ examples that need no SYCL (builder, jit) build and run unchanged."""
    examples = upstream_checkout() / "examples"
    builder = compile_c(str(examples / "builder" / "main.cpp"), cxx=True, flags=CXXFLAGS)
    assert builder.run().stderr.startswith("func @copy(")  # dump() prints to stderr
    jit = compile_c(str(examples / "jit" / "main.cpp"), cxx=True, flags=CXXFLAGS, name="jit")
    good = Path(__file__).resolve().parents[2] / "examples" / "ir" / "matvec_batched.ir"
    assert jit.run(str(good)).returncode == 0
    bad = tmp_path / "bad.ir"
    bad.write_text("func @f(%a: f32) {\n    %b = add %a, %a : i32\n}\n")
    failed = jit.run(str(bad), check=False)
    assert failed.returncode == 1
    assert "Error (" in failed.stderr


@pytest.mark.parametrize("runtime", sorted(UPSTREAM_RUNTIMES))
def test_upstream_linalg_suite(tmp_path, capi_libs, cl_env, runtime):
    """Upstream's doctest linalg suite (axpby, cumsum, gemm, gemv, ger, hadamard, sum in every
    precision) against our include/ and libraries; every test case must pass."""
    upstream = upstream_checkout()
    if not Path("/usr/include/doctest/doctest.h").is_file():
        pytest.skip("doctest-dev is not installed")
    libs, defines = UPSTREAM_RUNTIMES[runtime]
    sources = upstream_sources(upstream, runtime, tmp_path)
    cmd = ["g++", "-std=c++20", "-O1", "-DENABLE_DOUBLE_PRECISION", *defines]
    if runtime == "ze" and "zeCommandListHostSynchronize" not in ZE_HEADER.read_text():
        cmd += ["-include", str(SHIM / "ze_host_synchronize.hpp")]
    cmd += [f"-I{INCLUDE}", f"-I{SHIM}", f"-I{tmp_path / 'test'}", *map(str, sources)]
    exe = tmp_path / f"test-{runtime}-linalg"
    cmd += ["-o", str(exe), f"-L{capi_libs}", f"-Wl,-rpath,{capi_libs}", *(f"-l{x}" for x in libs)]
    built = subprocess.run(cmd, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-4000:]
    env = {**clean_env(), **cl_env}
    if runtime == "ze":
        env["ZE_ENABLE_ALT_DRIVERS"] = str(capi_libs / CPU_DRIVER)
    result = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=1800)
    summary = re.search(r"test cases:\s*(\d+) \|\s*(\d+) passed \|\s*(\d+) failed", result.stdout)
    assert result.returncode == 0 and summary, result.stdout[-4000:] + result.stderr[-2000:]
    total, passed, failed = map(int, summary.groups())
    assert (passed, failed) == (total, 0) and total >= 57, summary.group(0)
