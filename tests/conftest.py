"""Session set-up for every test: the kernel cache goes to a fresh temporary folder, so tests
never read or fill the user's cache (child processes inherit the variable); the compiler
validates every module it emits (TINYTC_VALIDATE=1, also inherited: C, C++ and Fortran hosts
included); and the SPIRV-Tools
programs the tests run (spirv-as, spirv-dis, spirv-val) are those of the package's own
SPIRV-Tools from PyPI, the validator the compiler uses, not whatever version the system has."""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

from tinytc_py.native_libs import spirv_tools_prefix

_folder = tempfile.mkdtemp(prefix="tinytc-cache-tests-")
os.environ["TINYTC_CACHE_DIR"] = _folder
os.environ["TINYTC_VALIDATE"] = "1"

_spirv_tools = spirv_tools_prefix()
if _spirv_tools is not None:
    os.environ["PATH"] = f"{_spirv_tools / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"


def pytest_unconfigure(config) -> None:
    shutil.rmtree(_folder, ignore_errors=True)


@pytest.fixture
def cold_compiles(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Kernel cache off, so every call compiles; the host's collector setting put back (for
    the tests that watch what a compile leaves to the garbage collector)."""
    monkeypatch.setenv("TINYTC_CACHE", "0")
    was = gc.isenabled()
    yield
    gc.enable() if was else gc.disable()
