"""Native helper libraries that `make capi` (capi/build.py) builds next to the C API, in the
checkout's build/lib, and that the Python package uses when they are there:

- libtinytc_spirv_val.so: SPIRV-Tools' validator in the process (spirv/validate.py), instead
  of starting the spirv-val program for every module;
- libze_tinytc_cpu.so: our Level Zero driver for the CPU (runtime/level_zero.py).

An environment variable per library points elsewhere (an installed copy, a test's build).
"""

from __future__ import annotations

import os
from pathlib import Path

BUILD_LIB = Path(__file__).resolve().parents[2] / "build" / "lib"


def built_library(filename: str, env_var: str) -> Path | None:
    """$env_var if set, else build/lib/filename if it was built, else None."""
    env = os.environ.get(env_var)
    if env:
        return Path(env)
    path = BUILD_LIB / filename
    return path if path.is_file() else None
