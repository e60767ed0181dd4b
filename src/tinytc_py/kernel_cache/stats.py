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

The counts are kept in the process and added to `stats.json` in the cache folder, under an
exclusive lock, in one update per folder: at exit, before a fork, whenever the totals are read
in the process (`totals`, so `tinytc-cache` and the Python API see this process's counts), and
when the bytes the process wrote since its last update pass `SAVE_EVERY` of the size bound
(store.py, which checks the bound then). A lookup thus pays no file update (one cost 0.09 ms of
a C host's miss, 0.2 ms with its lock). Exit means Python's `atexit` where Python's own
executable is the program (writer._main_program), and a C `atexit` hook where libtinytc started
the interpreter itself (capi/helpers.c: a C host never finalises Python), whose fork handlers
also run Python's fork protocol, so the before-fork save runs there too. Anywhere else (a
program that embeds Python and may never finalise it, a forked child, which may leave through
`os._exit` as multiprocessing's do) each count is added at once (`save_at_exit` not called).
A child starts without the parent's unsaved counts (they were saved just before the fork).
A process killed before its exit loses its unsaved counts; a folder that cannot be written only
loses the totals; a folder the cache may not use (trust.py) is not touched.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import fcntl
import json
import os
import secrets
import threading
from collections import Counter
from collections.abc import Callable

from ..cache_dir import cache_subdir
from . import trust, writer
from .folder import EPOCH, FILE, FROM_EMPTY, GROUP_MODE, make_folder

NOT_COUNTERS = (EPOCH, FROM_EMPTY)

_process: Counter[str] = Counter()
_process_lock = threading.Lock()  # the writer thread (writer.py) counts too
_unsaved: dict[trust.Folder, Counter[str]] = {}  # counts not yet in each folder's file
_deferred = False  # whether counts wait for `save` (module docstring)
after_save: Callable[[trust.Folder, dict[str, int]], None] | None = None
"""Called with a folder and the totals its update made (empty when it failed): store.py, which
keeps the folder under its size bound from them."""


def count(name: str, n: int = 1, persist: bool = True, where: trust.Folder | None = None) -> None:
    """Add `n` to a counter; `persist=False` for counts of this process only (the memo's).
    `where`: the folder as the caller's lookup checked it (else checked here)."""
    if persist:
        count_all({name: n}, where)
    else:
        with _process_lock:
            _process[name] += n


def folder_key(where: trust.Folder) -> trust.Folder:
    """The folder as this process's unsaved counts name it: one whatever a lookup found of its
    existence (an update makes it when it is missing: `_add_to_totals`). Remembered per
    folder: a miss asks three times, and `dataclasses.replace` costs microseconds each."""
    if not where.exists:
        return where
    key = _folder_keys.get(where)
    if key is None:
        key = _folder_keys[where] = dataclasses.replace(where, exists=False)
    return key


_folder_keys: dict[trust.Folder, trust.Folder] = {}


def count_all(delta: dict[str, int], where: trust.Folder | None = None) -> None:
    """Add to several counters, for this process and the folder's totals (module docstring)."""
    where = where or trust.checked()
    if where is not None:
        where = folder_key(where)
    with _process_lock:
        unsaved = _unsaved.setdefault(where, Counter()) if where is not None else None
        for name, n in delta.items():  # not Counter.update: its Mapping check costs more
            _process[name] += n
            if unsaved is not None:
                unsaved[name] += n
    if where is not None and not _deferred:
        save(where)


def unsaved(where: trust.Folder, name: str) -> int:
    """The count `name` of this process not yet added to the totals of folder `where`."""
    counts = _unsaved.get(folder_key(where))  # one dictionary read: no lock needed
    return counts[name] if counts is not None else 0


def save(where: trust.Folder | None = None) -> None:
    """Add this process's unsaved counts to the totals of folder `where` (of every folder it
    counted in, without one), one update per folder; then `after_save`. The entries a C
    host's native thread writes behind are in place first (their bytes are counted)."""
    writer.wait_native()
    if where is not None:
        where = folder_key(where)
    while True:  # again for what `after_save` counted (evictions)
        with _process_lock:
            folders = [where] if where is not None else list(_unsaved)
            work = [(f, _unsaved.pop(f)) for f in folders if f in _unsaved]
        if not work:
            return
        for folder, delta in work:
            try:
                totals = _add_to_totals(dict(delta), folder)
            except OSError:
                totals = {}
            if after_save is not None:
                after_save(folder, totals)


def save_all() -> None:
    """The exit's and the fork's save: the writes behind first (their counts with them)."""
    writer.wait()
    save()


def save_at_exit_end() -> None:
    """The exit's save (Python's atexit, a C host's atexit hook): `save_all`, and every count
    made after it (a C++ static destructor's, a library loaded again) is saved at once, since
    no later exit save is coming."""
    global _deferred
    _deferred = False
    save_all()


def save_at_exit() -> None:
    """Keep counts in the process until exit (or a fork, or a read of the totals): for a process
    whose exit runs `save_all` (Python's atexit here, or a C host's atexit: capi/helpers.c)."""
    global _deferred
    _deferred = True


def _forked() -> None:
    """In a forked child: the parent's unsaved counts are the parent's; counts go to the file
    at once (the child may leave without its exit handlers)."""
    global _deferred, _process_lock, _file_lock
    _deferred = False
    _process_lock = threading.Lock()  # the parent's may have been held at the fork
    _file_lock = threading.Lock()  # held by the forking thread (`_hold_file`)
    _unsaved.clear()


_file_lock = threading.Lock()
"""Held through each update of a statistics file (`_add_to_totals`: open, `flock`, read, write,
close) and by the forking thread across a fork, so no other thread is inside an update when the
process forks. A child that copied the descriptor of another thread's update would keep that
update's `flock` (it belongs to the open file, which the copy shares) and wait forever on its own
first update, and every other process's update would wait while the child lives."""


def _hold_file() -> None:
    _file_lock.acquire()


def _release_file() -> None:
    _file_lock.release()


if writer.writes_behind():  # Python's own executable is the program: its exit runs atexit
    save_at_exit()
    atexit.register(save_at_exit_end)
if hasattr(os, "register_at_fork"):
    # Before-fork hooks run last registered first: `save_all` (whose update takes the lock),
    # then `_hold_file`. Functions, not the lock's methods: a child's fork takes the child's lock.
    os.register_at_fork(before=_hold_file, after_in_parent=_release_file)
    os.register_at_fork(before=save_all, after_in_child=_forked)


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
    this very call is written too. (A C host's entries that its native thread writes are
    not waited for here, only in `save`, which adds their bytes.)"""
    make_folder(where)
    writer.wait(str(where.path / FILE))
    with _file_lock:  # until the descriptor is closed: no fork in between (`_file_lock`)
        return _update(where, delta)


def _update(where: trust.Folder, delta: dict[str, int]) -> dict[str, int]:
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
    file's `NOT_COUNTERS` (its `EPOCH` id, `FROM_EMPTY`); this process's counts saved first."""
    save_all()
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
    """Remove the totals, with this process's unsaved counts (`tinytc-cache clear`)."""
    writer.wait()
    with _process_lock:
        _unsaved.clear()
    with contextlib.suppress(OSError):
        (cache_subdir(trust.SUB) / FILE).unlink()
