"""The C++ worked example of docs/c-api.rst: the C builder example, compiled as C++17 against
the C API's headers and libraries, runs and prints its program."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from .conftest import ROOT, CProgram


def test_builder_example_compiles_as_cpp(capi_libs, tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    exe = tmp_path / "builder_cpp"
    cmd = ["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-x", "c++",
           str(ROOT / "examples" / "c" / "builder.c"), "-o", str(exe), f"-I{ROOT / 'include'}",
           f"-L{capi_libs}", f"-Wl,-rpath,{capi_libs}", "-ltinytc"]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, " ".join(cmd) + "\n" + result.stderr
    run = CProgram(exe, capi_libs).run()
    assert "func @copy(%A: memref<f32x8x8>, %B: memref<f32x8x8>)" in run.stderr
