"""examples/c compiled the way a user would: with `pkg-config --cflags --libs` against the
generated tinytc.pc / tinytc_cl.pc, and with CMake's find_package(tinytc); then run."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from .conftest import ROOT, CProgram

EXAMPLES = ROOT / "examples" / "c"


def pkg_config(lib_dir, *packages: str) -> list[str]:
    if shutil.which("pkg-config") is None:
        pytest.skip("pkg-config not installed")
    env = {**os.environ, "PKG_CONFIG_PATH": str(lib_dir / "pkgconfig")}
    result = subprocess.run(
        ["pkg-config", "--cflags", "--libs", *packages], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def compile_example(name: str, lib_dir, tmp_path, package: str) -> CProgram:
    exe = tmp_path / name
    cmd = ["gcc", "-Wall", "-Wextra", "-Werror", str(EXAMPLES / f"{name}.c"), "-o", str(exe)]
    result = subprocess.run(cmd + pkg_config(lib_dir, package), capture_output=True, text=True)
    assert result.returncode == 0, " ".join(cmd) + "\n" + result.stderr
    return CProgram(exe, lib_dir)


def test_pkg_config_files(capi_libs):
    flags = pkg_config(capi_libs, "tinytc_cl")
    assert f"-I{ROOT / 'include'}" in flags
    assert {"-ltinytc", "-ltinytc_cl", "-lOpenCL"} <= set(flags)


def test_builder_example(capi_libs, tmp_path):
    result = compile_example("builder", capi_libs, tmp_path, "tinytc").run()
    assert "func @copy(%A: memref<f32x8x8>, %B: memref<f32x8x8>)" in result.stderr
    assert "    axpby %" in result.stderr


def test_opencl_example(capi_libs, tmp_path):
    """Run without OCL_ICD_VENDORS: libtinytc_cl registers the CPU runtime itself."""
    result = compile_example("simple_cl", capi_libs, tmp_path, "tinytc_cl").run()
    assert "gemm: 0 of 25600 entries wrong" in result.stdout
    assert "custom kernel: 0 of 1600 entries wrong" in result.stdout


def test_cmake_find_package(capi_libs, tmp_path):
    if shutil.which("cmake") is None:
        pytest.skip("cmake not installed")
    build = tmp_path / "build"
    configure = subprocess.run(
        ["cmake", "-S", str(EXAMPLES), "-B", str(build), f"-Dtinytc_DIR={capi_libs}/cmake/tinytc"],
        capture_output=True,
        text=True,
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    made = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True)
    assert made.returncode == 0, made.stdout + made.stderr
    result = CProgram(build / "builder", capi_libs).run()
    assert "func @copy" in result.stderr
