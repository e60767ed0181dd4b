"""Packaging hook (everything else is in pyproject.toml): the wheel carries the C API's sources,
capi/, include/ and tools/gen_capi.py (with gen_cxx.py), as tinytc_py/_c_sources, so that `tinytc-py build-capi`
builds libtinytc*.so and the Level Zero CPU driver for an installed package, from the same
capi/build.py a checkout's `make setup` runs. It also records the digest of the package's
sources (the kernel cache's compiler version, kernel_cache/version.py), so that an installed
package reads it instead of looking at every source file at start-up."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
C_SOURCES = ("capi", "include", "tools/gen_capi.py", "tools/gen_cxx.py")
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.so.*", "*.o")


def _load(path: str):
    """A module of the package by its path (those loaded so import nothing of the package)."""
    spec = importlib.util.spec_from_file_location(
        "tinytc_" + Path(path).stem, ROOT / "src" / "tinytc_py" / path
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildPyWithCSources(build_py):
    """build_py that also copies the C sources into the package (not for editable installs,
    which use the checkout itself)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        package = Path(self.build_lib) / "tinytc_py"
        version = _load("kernel_cache/version.py")
        # the checkout's sources, not build_lib (a reused build folder keeps files of earlier
        # builds: _c_sources, modules since deleted)
        digest = _load("compiled.py").sources_digest(str(ROOT / "src" / "tinytc_py"), content=True)
        (package / version.VERSION_FILE).write_text(digest + "\n", encoding="ascii")
        target = package / "_c_sources"
        for name in C_SOURCES:
            src, dst = ROOT / name, target / name
            if src.is_dir():
                shutil.copytree(src, dst, dirs_exist_ok=True, ignore=SKIP)
            else:
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)


# build/lib is where the C libraries go (capi/build.py); setuptools' own work stays out of it.
setup(cmdclass={"build_py": BuildPyWithCSources}, options={"build": {"build_base": "build/python"}})
