"""The on-disk part of the kernel cache: one file per entry in `cache_subdir("kernels")`.

Many processes (MPI ranks) may fill the folder at once, and a file may be cut short by a crash
or damaged later, so:
- an entry is written to a temporary file in the same folder and renamed into place
  (`os.replace` is atomic): readers see the old entry, the new one or none, never a part;
- an entry carries the SHA-256 of its payload; a file whose checksum does not match is removed
  and reported as a miss, so the caller rebuilds it and nothing damaged is ever loaded;
- a folder that cannot be written (read-only, full disk) turns writing off for the rest of the
  process after one warning, and everything works without the cache;
- the folder stays under `TINYTC_CACHE_MAX_MB` (default 1024): after each write the entries
  used longest ago go first. A hit touches its file, so the modification time is the time of
  last use.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..cache_dir import atomic_write, cache_subdir
from . import stats

ENV_MAX_MB = "TINYTC_CACHE_MAX_MB"
DEFAULT_MAX_MB = 1024.0
MAGIC = b"TTCKC001"
SUFFIX = ".entry"
_HEADER = len(MAGIC) + hashlib.sha256().digest_size


@dataclass(frozen=True)
class Entry:
    name: str
    size: int
    last_use: float


def max_bytes() -> int:
    """The size bound from TINYTC_CACHE_MAX_MB (a bad value falls back to the default)."""
    try:
        mb = float(os.environ.get(ENV_MAX_MB, DEFAULT_MAX_MB))
    except ValueError:
        mb = DEFAULT_MAX_MB
    return max(0, int(mb * 1024 * 1024))


def folder() -> Path:
    return cache_subdir("kernels")


_unwritable: set[Path] = set()


def _disable_writing(where: Path, err: OSError) -> None:
    """One warning per folder and process; afterwards the folder is only read."""
    if where in _unwritable:
        return
    _unwritable.add(where)
    warnings.warn(
        f"tinytc kernel cache: cannot write to {where} ({err.strerror or err}); "
        "kernels are not cached in this process",
        RuntimeWarning,
        stacklevel=3,
    )


def _path(name: str) -> Path:
    return folder() / (name + SUFFIX)


def get(name: str) -> bytes | None:
    """The payload of entry `name`, or None when it is missing or damaged (then removed)."""
    path = _path(name)
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    payload = raw[_HEADER:]
    if raw[: len(MAGIC)] != MAGIC or raw[len(MAGIC) : _HEADER] != hashlib.sha256(payload).digest():
        stats.count("corrupt")
        remove(name)
        return None
    with contextlib.suppress(OSError):
        os.utime(path)
    return payload


def remove(name: str) -> None:
    with contextlib.suppress(OSError):
        _path(name).unlink()


def put(name: str, payload: bytes, counts: dict[str, int] | None = None) -> None:
    """Store `payload` as entry `name` (atomically), then evict down to the size bound.
    `counts` (the caller's counters of this lookup) are recorded with bytes_written, in one
    update of the statistics file."""
    where = folder()
    counts = dict(counts or {})
    if where not in _unwritable:
        data = MAGIC + hashlib.sha256(payload).digest() + payload
        try:
            atomic_write(_path(name), data)
        except OSError as err:
            _disable_writing(where, err)
        else:
            counts["bytes_written"] = len(data)
    if counts:
        stats.count_all(counts)
    if "bytes_written" in counts:
        evict(max_bytes(), keep=name)


def entries() -> list[Entry]:
    """The entries in the folder, least recently used first."""
    found = []
    with contextlib.suppress(OSError), os.scandir(folder()) as it:
        for e in it:
            if not e.name.endswith(SUFFIX):
                continue
            with contextlib.suppress(OSError):
                st = e.stat()
                found.append(Entry(e.name[: -len(SUFFIX)], st.st_size, st.st_mtime))
    found.sort(key=lambda e: e.last_use)
    return found


def evict(limit: int, keep: str = "") -> None:
    """Remove least recently used entries (never `keep`) until the folder holds <= limit bytes."""
    found = entries()
    total = sum(e.size for e in found)
    for e in found:
        if total <= limit:
            break
        if e.name == keep:
            continue
        remove(e.name)
        stats.count("evicted")
        total -= e.size


def clear() -> int:
    """Remove every entry (and stale temporary files); returns the number of entries removed."""
    removed = 0
    with contextlib.suppress(OSError), os.scandir(folder()) as it:
        for e in it:
            if e.name.endswith(SUFFIX) or e.name.startswith(".tmp-"):
                with contextlib.suppress(OSError):
                    os.unlink(e.path)
                    removed += e.name.endswith(SUFFIX)
    return removed
