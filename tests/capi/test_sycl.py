"""SYCL for C++ hosts: include/tinytc/tinytc_sycl.hpp and libtinytc_sycl, compiled with g++
against the SYCL runtime from PyPI (the `sycl` extra), run on the CPU device through the SYCL
runtime's OpenCL backend.

* the library exports exactly upstream's 14 functions; the header compiles on its own;
* a C++ program (tests/capi/c/cxx_sycl.cpp) checks every function's results;
* two host threads compile and launch GEMM recipes at once (tests/capi/c/sycl_two_threads.cpp);
* examples/sycl builds with the documented pkg-config line and with CMake's
  find_package(tinytc_sycl), and computes the right numbers; docs/sycl.rst's commands, run
  verbatim in a plain shell with no OCL_ICD_VENDORS, build it and run it on the CPU device;
* upstream's own test/sycl linalg suite passes against our headers and libraries
  (TINYTC_UPSTREAM_SRC, as test_cxx.py does for test/cl and test/ze);
* yateto's host code for its tinytc backend compiles and runs (tests/capi/test_yateto.py).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from test_docs import sh_blocks  # tests/ is on sys.path (pytest's rootdir-based imports)

from .conftest import INCLUDE, ROOT, CProgram, clean_env
from .test_cxx import upstream_checkout
from .test_examples_c import pkg_config

EXAMPLES = ROOT / "examples" / "sycl"
C_DIR = Path(__file__).resolve().parent / "c"

#: Upstream's tinytc_sycl.hpp declares these; libtinytc_sycl exports them and nothing else.
EXPORTS = {
    "tinytc::get_support_level(sycl::_V1::device const&)",
    "tinytc::create_core_info(sycl::_V1::device const&)",
    "tinytc::create_kernel_bundle(sycl::_V1::context const&, sycl::_V1::device const&, "
    "tinytc_prog*, unsigned int)",
    "tinytc::create_kernel_bundle(sycl::_V1::context const&, sycl::_V1::device const&, "
    "tinytc_binary const*)",
    "tinytc::create_kernel(sycl::_V1::kernel_bundle<(sycl::_V1::bundle_state)2> const&, "
    "char const*)",
    "tinytc::get_group_size(sycl::_V1::kernel const&)",
    "tinytc::get_global_size(sycl::_V1::range<3> const&, sycl::_V1::range<3> const&)",
    "tinytc::get_execution_range(sycl::_V1::kernel const&, sycl::_V1::range<3> const&)",
    "tinytc::parallel_for(tinytc_recipe_handler*, sycl::_V1::handler&)",
    "tinytc::submit(tinytc_recipe_handler*, sycl::_V1::queue)",
    "tinytc::submit(tinytc_recipe_handler*, sycl::_V1::queue, sycl::_V1::event const&)",
    "tinytc::submit(tinytc_recipe_handler*, sycl::_V1::queue, std::vector<sycl::_V1::event, "
    "std::allocator<sycl::_V1::event> > const&)",
    "tinytc::create_recipe_handler(sycl::_V1::context const&, sycl::_V1::device const&, "
    "tinytc_recipe*)",
    "tinytc::create_recipe_handler(sycl::_V1::queue const&, tinytc_recipe*)",
}


def sycl_flags(lib_dir: Path) -> list[str]:
    """What a user's build gets from `pkg-config --cflags --libs tinytc_sycl`."""
    return pkg_config(lib_dir, "tinytc_sycl")


def build_cxx(sources: list[Path], exe: Path, lib_dir: Path, extra: tuple[str, ...] = ()):
    cmd = ["g++", "-std=c++17", "-O1", *extra, *map(str, sources), "-o", str(exe)]
    cmd += sycl_flags(lib_dir)
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, " ".join(cmd) + "\n" + result.stderr[-4000:]
    return CProgram(exe, lib_dir)


def test_exports_are_the_headers_functions(sycl_libs):
    result = subprocess.run(
        ["nm", "-D", "--defined-only", "-C", str(sycl_libs / "libtinytc_sycl.so")],
        capture_output=True,
        text=True,
        check=True,
    )
    names = {line.split(" ", 2)[2] for line in result.stdout.splitlines() if " T " in line}
    assert names == EXPORTS


def test_header_compiles_alone(sycl_libs, tmp_path):
    src = tmp_path / "one.cpp"
    src.write_text('#include "tinytc/tinytc_sycl.hpp"\n')
    flags = [f for f in sycl_flags(sycl_libs) if f.startswith(("-I", "-D"))]
    # The SYCL runtime's own headers are system headers here: only ours must be warning-free.
    flags = [
        f"-isystem{f[2:]}" if f.startswith("-I") and f[2:] != str(INCLUDE) else f for f in flags
    ]
    cmd = ["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", *flags, str(src)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_cxx_sycl_api(sycl_libs, cl_env, tmp_path):
    prog = build_cxx([C_DIR / "cxx_sycl.cpp"], tmp_path / "cxx_sycl", sycl_libs, (f"-I{C_DIR}",))
    assert prog.run(env=cl_env).stdout == "ok\n"


def test_two_threads_compile_and_launch_at_once(sycl_libs, cl_env, tmp_path):
    """Two host threads, each with its own queue, create GEMM recipes of their own sizes (both
    compile through the library at once), their handlers, and launch them, checked against
    host results (c/sycl_two_threads.cpp)."""
    exe = tmp_path / "two_threads"
    prog = build_cxx([C_DIR / "sycl_two_threads.cpp"], exe, sycl_libs, (f"-I{C_DIR}", "-pthread"))
    assert prog.run(env=cl_env).stdout == "ok\n"


def test_recipe_bounds_report(sycl_libs, cl_env, tmp_path):
    """A bounds-checked recipe's handler made by tinytc::create_recipe_handler passes its report
    records, and tinytc_recipe_handler_get_bounds_report reads them (c/sycl_recipe_bounds.cpp)."""
    prog = build_cxx([C_DIR / "sycl_recipe_bounds.cpp"], tmp_path / "bounds", sycl_libs)
    assert prog.run(env=cl_env).stdout.splitlines() == [
        "kernel gemm_beta0: <recipe tall_and_skinny>:23.10-63: subview: index 95 in mode 0 of %A "
        "is out of bounds [0, 64) in work-group (2, 0, 0)",
        "    %a = subview %A[%m:32,0:3] : memref<f32x32x3,strided<1,64>>",
        "         ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~",
        "ok",
    ]


def _check_example_output(out: str) -> None:
    assert out.startswith("device: ")
    assert "custom kernel: 0 of 1850 entries wrong" in out
    assert "gemm recipe: 0 of 12800 entries wrong" in out


def test_example_with_pkg_config(sycl_libs, cl_env, tmp_path):
    prog = build_cxx([EXAMPLES / "simple_sycl.cpp"], tmp_path / "simple_sycl", sycl_libs)
    _check_example_output(prog.run(env=cl_env).stdout)


def test_documented_commands_need_no_icd_setting(sycl_libs, tmp_path):
    """docs/sycl.rst's build and run blocks, verbatim, in a shell with what a user's has (no
    Python variable, no OCL_ICD_VENDORS): the program finds the CPU device because the library
    constructor of libtinytc_cl (loaded with libtinytc_sycl) registers it before main."""
    if shutil.which("pkg-config") is None:
        pytest.skip("pkg-config is needed")
    blocks = sh_blocks(ROOT / "docs" / "sycl.rst")
    (build,) = [b for b in blocks if "g++ -std=c++17 examples/sycl/simple_sycl.cpp" in b]
    (run,) = [b for b in blocks if b.strip() == "./simple_sycl"]
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "lib").symlink_to(sycl_libs)
    env = clean_env()
    assert not any(k.startswith("OCL_") or k == "OPENCL_VENDOR_PATH" for k in env)
    script = "set -euo pipefail\n" + build + run
    result = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, script + "\n" + result.stdout + result.stderr
    _check_example_output(result.stdout)
    assert "(OpenCL)" in result.stdout.splitlines()[0]


def test_example_with_cmake(sycl_libs, cl_env, tmp_path):
    if shutil.which("cmake") is None:
        pytest.skip("cmake not installed")
    build = tmp_path / "build"
    config = f"-Dtinytc_sycl_DIR={sycl_libs}/cmake/tinytc_sycl"
    configure = subprocess.run(
        ["cmake", "-S", str(EXAMPLES), "-B", str(build), config], capture_output=True, text=True
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    made = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True)
    assert made.returncode == 0, made.stdout + made.stderr
    _check_example_output(CProgram(build / "simple_sycl", sycl_libs).run(env=cl_env).stdout)


# ---- upstream's own suite ----------------------------------------------------------------------


def upstream_sycl_sources(upstream: Path, dest: Path) -> list[Path]:
    """Copies upstream's test/ and the two internal headers its SYCL test runtime includes
    (src/sycl/argument_handler.hpp, which includes ../cl/argument_handler.hpp) to dest,
    unchanged."""
    shutil.copytree(upstream / "test", dest / "test")
    for part in ("sycl", "cl"):
        (dest / "src" / part).mkdir(parents=True)
        shutil.copy(upstream / "src" / part / "argument_handler.hpp", dest / "src" / part)
    test = dest / "test"
    files = ["main.cpp", "linalg_blas_a2.cpp", "linalg_blas_a3.cpp", "linalg_types.cpp"]
    return [test / f for f in files] + [
        test / "sycl" / "linalg.cpp",
        test / "sycl" / "test_runtime.cpp",
    ]


def test_upstream_sycl_linalg_suite(sycl_libs, cl_env, tmp_path):
    """Upstream's doctest linalg suite through its SYCL test runtime (a default sycl::queue,
    arguments set on the native kernels, launches with get_execution_range) against our
    include/ and libraries; every test case must pass."""
    upstream = upstream_checkout()
    if not Path("/usr/include/doctest/doctest.h").is_file():
        pytest.skip("doctest-dev is not installed")
    sources = upstream_sycl_sources(upstream, tmp_path)
    extra = (
        "-std=c++20",
        "-DENABLE_DOUBLE_PRECISION",
        f"-I{tmp_path / 'src'}",
        f"-I{tmp_path / 'test'}",
    )
    exe = tmp_path / "test-sycl-linalg"
    build_cxx(sources, exe, sycl_libs, extra)
    env = {**clean_env(), **cl_env}
    result = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=1800)
    summary = re.search(r"test cases:\s*(\d+) \|\s*(\d+) passed \|\s*(\d+) failed", result.stdout)
    assert result.returncode == 0 and summary, result.stdout[-4000:] + result.stderr[-2000:]
    total, passed, failed = map(int, summary.groups())
    assert (passed, failed) == (total, 0) and total >= 57, summary.group(0)
