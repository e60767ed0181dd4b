"""Counters of the kernel cache and the autotuner's tuning cache: for this process
(`process()`) and summed over every process that used the cache folder (`totals()`, what
`tinytc-cache stats` shows).

Counters: spirv_hits / spirv_misses and native_hits / native_misses (lookups of the two disk
levels; a miss means the compiler or the device JIT ran), waits (lookups that found another
process building the same entry, waited and read its result: neither hit nor miss),
compiles and device_builds (runs of our compiler and of the device's JIT, with the cache on;
with it off they are counted for this process only), lock_timeouts (waits given up: the
process built itself), stale_locks (locks of crashed processes removed), corrupt (damaged
entries removed), untrusted (reads refused: entries of another owner or group), native_rejected
(intact device binaries the device refused to load, rebuilt), evicted (entries removed for the
size bound), bytes_written, tuning_hits / tuning_misses (gemm shapes the autotuner found in the
tuning cache / timed on the device); for this process only also memo_hits (answered from
memory).

Each change is added to `stats.json` in the cache folder at once, under an exclusive lock: a C
host embedding the library may never finalise Python, so waiting for exit would lose counts.
A folder that cannot be written only loses the totals; a folder the cache may not use
(trust.py) is not touched.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import threading
from collections import Counter

from ..cache_dir import cache_subdir
from . import trust, writer
from .folder import EPOCH, FILE, FROM_EMPTY, GROUP_MODE, make_folder

NOT_COUNTERS = (EPOCH, FROM_EMPTY)

_process: Counter[str] = Counter()
_process_lock = threading.Lock()  # the writer thread (writer.py) counts too


def count(name: str, n: int = 1, persist: bool = True, where: trust.Folder | None = None) -> None:
    """Add `n` to a counter; `persist=False` for events too frequent to pay a file update.
    `where`: the folder as the caller's lookup checked it (else checked here)."""
    if persist:
        count_all({name: n}, where)
    else:
        with _process_lock:
            _process[name] += n


def count_all(delta: dict[str, int], where: trust.Folder | None = None) -> dict[str, int]:
    """Add to several counters in one update of the file (each costs about 0.1 ms, a tenth
    of a small kernel's compile). Returns the totals this update made (empty when the file
    cannot be written): store.py bounds the folder by the running bytes_written."""
    with _process_lock:
        _process.update(delta)
    where = where or trust.checked()
    if where is None:
        return {}
    try:
        return _add_to_totals(delta, where)
    except OSError:
        return {}


def process() -> dict[str, int]:
    """This process's counters (a copy), with those of its writes still behind (writer.py)."""
    writer.wait()
    with _process_lock:
        return dict(_process)


def reset_process() -> None:
    writer.wait()
    with _process_lock:
        _process.clear()


def _add_to_totals(delta: dict[str, int], where: trust.Folder) -> dict[str, int]:
    """Adds `delta` under the file's lock. The new content is written over the old from the
    start and the file then cut to its length when it got shorter: truncating it to zero
    first and writing it again makes ext4 (auto_da_alloc) write the file back at close, which
    made each update cost 0.25 ms of CPU time instead of 0.02. Makes the folder when missing
    (a first start whose first compile failed), then waits for the begun-empty mark of the
    file still behind (a folder this process made, here or before: folder.py), which a file
    made here first would keep out; in that order, as store.put does, so a mark queued by
    this very call is written too."""
    make_folder(where)
    writer.wait(str(where.path / FILE))
    fd = os.open(where.path / FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        with contextlib.suppress(OSError):  # another member's file keeps its mode
            trust.share(fd, where, GROUP_MODE)
        fcntl.flock(fd, fcntl.LOCK_EX)
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        totals = Counter(_parse(b"".join(chunks).decode(errors="replace")))
        totals.update(delta)
        if EPOCH not in totals:
            totals[EPOCH] = secrets.randbits(62)
        data = json.dumps(dict(totals), sort_keys=True).encode()
        os.pwrite(fd, data, 0)
        if len(data) < sum(map(len, chunks)):  # counters grow: the new text is rarely shorter
            os.ftruncate(fd, len(data))
    finally:
        os.close(fd)  # releases the lock
    return dict(totals)


def totals() -> dict[str, int]:
    """The counters summed over all processes (empty when nothing was recorded), and the
    file's `NOT_COUNTERS` (its `EPOCH` id, `FROM_EMPTY`)."""
    writer.wait()
    try:
        return _parse((cache_subdir(trust.SUB) / FILE).read_text())
    except OSError:
        return {}


def _parse(text: str) -> dict[str, int]:
    """The counters in `text`; a damaged file counts as empty (it is rewritten whole)."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return {k: v for k, v in data.items() if isinstance(v, int)} if isinstance(data, dict) else {}


def reset_totals() -> None:
    writer.wait()
    with contextlib.suppress(OSError):
        (cache_subdir(trust.SUB) / FILE).unlink()
