"""The commands of docs/c-api.rst, run verbatim in a shell as a user pastes them: the one step
that points pkg-config at the libraries, then the C, C++, Fortran and CMake builds of the
examples, and the programs they build. The shell has what a user's has, no Python variable and
no OCL_ICD_VENDORS: the OpenCL programs must find the CPU device by themselves (libtinytc_cl
registers the runtime, capi/native_cl.c). The folder stands for a checkout: examples/ is the
repository's, build/lib the libraries this session built."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from test_docs import sh_blocks  # tests/ is on sys.path (pytest's rootdir-based imports)

from .conftest import ROOT, clean_env

PAGE = ROOT / "docs" / "c-api.rst"


def documented(*words: str) -> str:
    """The one shell block of the page that contains all `words`."""
    (block,) = [b for b in sh_blocks(PAGE) if all(w in b for w in words)]
    return block


@pytest.fixture
def checkout(capi_libs: Path, tmp_path: Path) -> Path:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "lib").symlink_to(capi_libs)
    return tmp_path


def run_documented(checkout: Path, *blocks: str) -> str:
    for tool in ("gcc", "pkg-config"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is needed")
    env = clean_env()
    assert "OCL_ICD_VENDORS" not in env
    script = "set -euo pipefail\n" + documented("export PKG_CONFIG_PATH=$PWD/build/lib")
    script += "".join(blocks)
    result = subprocess.run(
        ["bash", "-c", script], cwd=checkout, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, script + "\n" + result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return result.stdout + result.stderr


def test_the_step_is_one_line():
    assert documented("export PKG_CONFIG_PATH=$PWD/build/lib").strip().count("\n") == 0


def test_builder_in_c_and_cxx(checkout: Path):
    c = documented("gcc examples/c/builder.c")
    if shutil.which("g++") is None:
        pytest.skip("g++ is needed")
    out = run_documented(checkout, c, documented("g++ -std=c++17"), "./builder\n")
    assert out.count("func @copy(%A: memref<f32x8x8>, %B: memref<f32x8x8>)") == 2


def test_opencl_examples_find_the_cpu_device(checkout: Path):
    out = run_documented(checkout, documented("examples/c/simple_cl.c", "tinytc_cl"))
    assert "gemm: 0 of 25600 entries wrong" in out
    assert "custom kernel: 0 of 1600 entries wrong" in out
    assert "calling convention: 0 of 78 entries wrong" in out


def test_fortran_example(checkout: Path):
    if shutil.which("gfortran") is None:
        pytest.skip("gfortran is needed")
    out = run_documented(checkout, documented("gfortran"))
    lines = out.splitlines()
    assert lines[0] in ("support level: basic", "support level: tuned")
    assert lines[1:] == ["gemm: 0 of 25600 entries wrong", "custom kernel: 0 of 1600 entries wrong"]


def test_cmake_builds_the_examples(checkout: Path):
    if shutil.which("cmake") is None:
        pytest.skip("cmake is needed")
    run_documented(checkout, documented("cmake -S examples/c"))
    built = checkout / "build" / "examples"
    assert (built / "builder").is_file() and (built / "calling_convention_cl").is_file()
    out = subprocess.run(
        [str(built / "calling_convention_cl")], env=clean_env(), capture_output=True, text=True
    )
    assert out.stdout == "calling convention: 0 of 78 entries wrong\n", out.stderr


def test_a_loader_setting_of_the_user_is_kept(checkout: Path):
    """libtinytc_cl registers the CPU runtime only when nothing is configured: with the user's
    OCL_ICD_VENDORS (here a folder without drivers) the program sees no platform."""
    run_documented(checkout, documented("examples/c/simple_cl.c", "tinytc_cl"))
    empty = checkout / "no-drivers"
    empty.mkdir()
    result = subprocess.run(
        [str(checkout / "calling_convention_cl")],
        env={**clean_env(), "OCL_ICD_VENDORS": str(empty)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1 and result.stderr == "no OpenCL device\n", result.stderr
