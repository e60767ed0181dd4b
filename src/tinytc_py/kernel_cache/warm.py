"""Fill the kernel cache ahead of a job: compile programs and build them for a device, so that
the job's ranks find both the SPIR-V and the device binary and start without compiling or
running the device's JIT (`tinytc-cache warm`).

The programs go through a runtime's own program builder, which the caller passes in (say
`tinytc_py.runtime.opencl.program`): this layer sits below the runtimes and never loads one
(docs/design.md §1.1). So every key part (program text, core info, build options, device
identity) is the one a rank of the job computes when it builds the same text with the same
runtime on the same kind of device.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from ..errors import Status, TinytcError
from . import stats, trust
from .switch import switched_on


def warm(files: Iterable[str | os.PathLike[str]], build: Callable[[str], object]) -> dict[str, int]:
    """Compile and build the program of each tensor-language file into the kernel cache with
    `build(text)`: a runtime's program builder, such as `tinytc_py.runtime.opencl.program`
    (the default device) or `lambda text: level_zero.program(text, device)`. Returns the
    counters of this call (stats.py): compiles and device_builds say what was built,
    spirv_hits and native_hits what the cache held already. Raises TinytcError when caching is
    off (the message says why) or a program does not compile."""
    if not switched_on():
        raise TinytcError(Status.runtime_error, "the kernel cache is off (TINYTC_CACHE=0)")
    try:
        trust.check()
    except trust.Untrusted as why:
        raise TinytcError(Status.runtime_error, f"kernel cache: {why}") from None
    before = Counter(stats.process())
    for file in files:
        try:
            text = Path(file).read_text()
        except OSError as err:
            raise TinytcError(Status.file_io_error, f"{file}: {err.strerror or err}") from err
        build(text)
    after = Counter(stats.process())
    after.subtract(before)
    return {k: v for k, v in after.items() if v}
