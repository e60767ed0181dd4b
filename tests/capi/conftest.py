"""Fixtures of the C API tests: the libraries, built once per session into a temporary directory
by capi/build.py, and a helper that compiles a C (or C++) program against them and runs it in an
environment without any Python variables (the library must find its Python on its own)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tinytc_py.target.cpu_core import TARGET_ARCH_ENV

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "include"
C_DIR = Path(__file__).resolve().parent / "c"


def load_tool(path: Path, name: str):
    """Imports a script of the repository (tools/gen_capi.py, capi/build.py) as a module."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def clean_env() -> dict[str, str]:
    """What a plain C program gets: no PYTHON*, no virtual environment, a system PATH; the
    session's kernel cache and validation switch, and the ISA the CPU runtime is asked for, so
    the program's device is the one the test's expectations were derived from."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(Path.home())}
    # TINYTC_CACHE_DIR, TINYTC_VALIDATE: tests/conftest.py
    for name in ("TINYTC_CACHE_DIR", "TINYTC_VALIDATE", TARGET_ARCH_ENV):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


@pytest.fixture(scope="session")
def capi_libs(tmp_path_factory) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed for the C API tests")
    build = load_tool(ROOT / "capi" / "build.py", "tinytc_capi_build")
    out = tmp_path_factory.mktemp("capi") / "lib"
    build.build(out)
    return out


@dataclass
class CProgram:
    exe: Path
    lib_dir: Path

    def run(
        self, *args: str, check: bool = True, input: str | None = None, env: dict | None = None
    ):
        result = subprocess.run(
            [str(self.exe), *args],
            capture_output=True,
            text=True,
            env={**clean_env(), **(env or {})},
            input=input,
            timeout=120,
        )
        assert "Traceback" not in result.stderr, result.stderr
        if check:
            assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr}"
        return result


@pytest.fixture
def compile_c(capi_libs, tmp_path):
    """compile_c(source_or_name, libs=("tinytc",), cxx=False, flags=()) -> CProgram.

    A name like "errors.c" refers to tests/capi/c/; anything else is C source text."""

    def compile_(
        source: str, libs=("tinytc",), cxx: bool = False, flags=(), name: str = "prog"
    ) -> CProgram:
        path = C_DIR / source
        if not source.endswith((".c", ".cpp")) or not path.exists():
            path = tmp_path / (name + (".cpp" if cxx else ".c"))
            path.write_text(source)
        exe = tmp_path / name
        cmd = [
            "g++" if cxx else "gcc",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-DCL_TARGET_OPENCL_VERSION=300",
            f"-I{INCLUDE}",
            f"-I{C_DIR}",
            *flags,
            str(path),
            "-o",
            str(exe),
            f"-L{capi_libs}",
            *(f"-l{lib}" for lib in libs),
            f"-Wl,-rpath,{capi_libs}",
            "-lm",
        ]
        result = subprocess.run(cmd, capture_output=True, text=True)
        assert result.returncode == 0, " ".join(cmd) + "\n" + result.stderr
        return CProgram(exe, capi_libs)

    return compile_


@pytest.fixture(scope="session")
def cl_env() -> dict[str, str]:
    """OCL_ICD_VENDORS for the test programs: the folder device.py registered (or the user's)."""
    try:
        from tinytc_py.runtime import device
    except ImportError:
        pytest.skip("pyopencl is not installed")
    folder = device.ICD_VENDORS or os.environ.get("OCL_ICD_VENDORS")
    try:
        device.default_device()
    except RuntimeError as e:
        pytest.skip(str(e))
    return {"OCL_ICD_VENDORS": str(folder)} if folder else {}


@pytest.fixture(scope="session")
def sycl_libs(capi_libs) -> Path:
    """The libraries' folder, when capi/build.py could build libtinytc_sycl there (it needs the
    SYCL runtime of the `sycl` extra)."""
    if not (capi_libs / "libtinytc_sycl.so").exists():
        pytest.skip("no SYCL runtime in this environment (pip install 'tinytc-py[sycl]')")
    return capi_libs
