"""The kernel cache's memory: the SPIR-V binaries this process compiled or read, so that
compiling a program again costs a dictionary lookup.

Two kinds of keys lead to an entry:
- the disk key (keys.spirv_key, a SHA-256 string) of a program built in memory, which is
  printed to be keyed;
- a source-text key, the tuple `text_key` makes before anything is parsed: the text itself
  (a dictionary hashes and compares it, nothing is printed or digested), how it is read, the
  core info's digest and the context's settings. The compiler version is
  left out: it cannot change within a process.
At most `ENTRIES` binaries are kept; the one used longest ago goes first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

from .. import self_checks
from ..binary import Binary
from ..ir.context import CompilerContext
from ..target.core_info import CoreInfo
from .keys import info_digest, settings

ENTRIES = 256

_entries: OrderedDict[Hashable, Binary] = OrderedDict()


def text_key(
    text: str,
    core_info: CoreInfo,
    ctx: CompilerContext,
    parsing: tuple | None = None,
) -> tuple:
    """The key of source `text` compiled under `ctx` for `core_info`; `parsing`: how the
    text is read, when it matters (keys.spirv_key); whether the self-checks run, as there."""
    return (text, parsing, info_digest(core_info), settings(ctx), self_checks.requested())


def get(key: Hashable) -> Binary | None:
    """The binary kept for `key` (now the most recently used), or None."""
    try:
        _entries.move_to_end(key)  # the most recently used goes last
    except KeyError:
        return None
    return _entries.get(key)  # None if another thread's `put` evicted it just now


def put(key: Hashable, binary: Binary) -> Binary:
    _entries[key] = binary  # a new key goes last, as the most recently used
    while len(_entries) > ENTRIES:
        _entries.popitem(last=False)
    return binary


def size() -> int:
    """The number of binaries held."""
    return len(_entries)


def clear() -> None:
    _entries.clear()
