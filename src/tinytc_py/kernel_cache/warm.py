"""Fill the kernel cache ahead of a job: compile programs and build them for a runtime's
default device, so that the job's ranks find both the SPIR-V and the device binary and start
without compiling or running the device's JIT (`tinytc-cache warm`).

The programs go through the runtime's own `program()`, so every key part (program text, core
info, build options, device identity) is the one a rank of the job computes when it builds the
same text with the same runtime on the same kind of device.
"""

from __future__ import annotations

import importlib
import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from ..errors import Status, TinytcError
from . import stats, trust
from .switch import switched_on

RUNTIMES = ("opencl", "level_zero")


def warm(files: Iterable[str | os.PathLike[str]], runtime: str = "opencl") -> dict[str, int]:
    """Compile and build the program of each tensor-language file for the default device of
    `runtime` ("opencl" or "level_zero") into the kernel cache. Returns the counters of this
    call (stats.py): compiles and device_builds say what was built, spirv_hits and
    native_hits what the cache held already. Raises TinytcError when caching is off (the
    message says why) or a program does not compile."""
    if runtime not in RUNTIMES:
        raise TinytcError(
            Status.unsupported_backend, f"unknown runtime {runtime!r}; choose {RUNTIMES}"
        )
    if not switched_on():
        raise TinytcError(Status.runtime_error, "the kernel cache is off (TINYTC_CACHE=0)")
    try:
        trust.check()
    except trust.Untrusted as why:
        raise TinytcError(Status.runtime_error, f"kernel cache: {why}") from None
    module = importlib.import_module(f"tinytc_py.runtime.{runtime}")
    before = Counter(stats.process())
    for file in files:
        try:
            text = Path(file).read_text()
        except OSError as err:
            raise TinytcError(Status.file_io_error, f"{file}: {err.strerror or err}") from err
        module.program(text)
    after = Counter(stats.process())
    after.subtract(before)
    return {k: v for k, v in after.items() if v}
