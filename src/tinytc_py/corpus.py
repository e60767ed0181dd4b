"""Recording every program a run compiles, and replaying the record, so that a refactoring of
the compiler can be shown to change no output.

With ``TINYTC_RECORD_CORPUS=DIR`` in the environment (inherited by the processes a test starts,
C hosts of libtinytc included), each program handed to the compiler is written to DIR before
it is compiled: its text (the source, or the printed program when it was built), the core
info, the optimization level and the compiler-context flags. Identical records share one file.
`tools/corpus.py` compiles every record again (a digest of the SPIR-V and the kernel metadata,
or the error message, per record) and compares two replays; the replay lives there because it
drives the compiler, which imports this module to record.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from . import environ

if TYPE_CHECKING:
    from .ir.context import CompilerContext
    from .target.core_info import CoreInfo

ENV = "TINYTC_RECORD_CORPUS"


def record(program_text: Callable[[], str], core_info: CoreInfo, ctx: CompilerContext) -> None:
    """Writes the program about to be compiled to the corpus folder, if one is set."""
    folder = environ.get(ENV)
    if not folder:
        return
    from .ir.enums import OptFlag

    flags = {f.name: ctx.optimization_flag(f) for f in OptFlag}
    data = pickle.dumps((program_text(), core_info, ctx.opt_level, flags))
    path = Path(folder) / (hashlib.sha256(data).hexdigest()[:32] + ".pkl")
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
