"""The on-disk part of the kernel cache: one file per entry in `cache_subdir("kernels")`.

Many processes (MPI ranks) may fill the folder at once, and a file may be cut short by a crash
or damaged later, so:
- an entry is written to a temporary file in the same folder and renamed into place
  (`os.replace` is atomic): readers see the old entry, the new one or none, never a part;
- an entry carries the SHA-256 of its payload; a file whose checksum does not match is removed
  and reported as a miss, so the caller rebuilds it and nothing damaged is ever loaded;
- a folder that cannot be written (read-only, full disk) turns writing off for the rest of the
  process after one warning, and everything works without the cache;
- a folder others could write is not used at all, and an entry is only read when its owner
  (per-user folder) or group (shared folder) is the one the folder's mode demands (trust.py);
- the folder stays under `TINYTC_CACHE_MAX_MB` (default 1024), the entries used longest ago
  going first. A hit touches its file, so the modification time is the time of last use.

Why a write does not list the folder: with thousands of entries (many kernels, many ranks)
reading every entry's size costs milliseconds per miss (16 ms at 5000 entries,
benchmarks/cache_store.py). Instead the last full scan leaves a record (`SCAN_FILE`): the
statistics' running `bytes_written` total over all processes at the start of the scan and the
folder's size after it. The bound is checked when a process adds its counts to the statistics
(stats.py: at its exit, before a fork, when it reads the totals, and when the bytes it wrote
since pass `SAVE_EVERY` of the bound; so a lookup updates no file, and each running process
may hold back less than that share of the bound): the check estimates the size as that size
plus the bytes written since, from the totals the update returns, and scans again only when
the estimate passes the bound. The estimate never falls short of the bytes counted,
whichever processes write or scan at once:
a file is renamed into place before its bytes are counted, so a file counted before the scan
read the total is in the scan, and any later one is in the difference; removals (clear,
damaged entries, other scans) only make it too high, which costs one early scan. A missing or
damaged record, or one of another statistics epoch (the statistics file was cleared or
damaged, so its totals began again), means a scan. A scan that finds the bound crossed evicts
down to `LOW_WATER` of it, so a full folder is scanned once per tenth of the bound written, not
at every write. A scan of fewer than `RECORD_FROM` entries leaves no record: listing them again
at the next write costs less than writing one. Nor does a first start scan at all: a new folder
gets a statistics file whose epoch is marked `FROM_EMPTY` (folder.make_folder: before a shared
folder takes its name; behind, before its first entry and only while it holds none, for a
private one), so a marked epoch began with the folder empty (statistics made again later lack
the mark), and in such an epoch the running total itself bounds the folder's size (every file
in the folder was written, and counted, since), so the folder is listed only once that total
passes the bound. For the estimate to hold, every byte in the folder must be counted: the
entries whose bytes cannot be added to the statistics are removed again and writing is turned
off, a listing that fails part-way leaves no record, and `tinytc-cache clear` removes the
statistics before the entries (an entry written meanwhile counts in the new totals).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import threading
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType

from ..cache_dir import atomic_write, cache_subdir
from . import stats, trust, writer
from .folder import FILE, SUFFIX, make_folder, remove_unfinished

ENV_MAX_MB = "TINYTC_CACHE_MAX_MB"
DEFAULT_MAX_MB = 1024.0
MAGIC = b"TTCKC001"
LOCK_SUFFIX = ".lock"  # a build in progress (locks.py)
_HEADER = len(MAGIC) + hashlib.sha256().digest_size
SCAN_FILE = "last_scan.json"
RECORD_FROM = 32  # entries a scan must find to leave a record (a new folder's first writes)
LOW_WATER = 0.9
SAVE_EVERY = 1 / 32  # of the bound: bytes a process writes between two updates of the totals


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
    """The entry folder, whether or not it may be used (`trust.checked()` says)."""
    return cache_subdir(trust.SUB)


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
        stacklevel=_caller_level(),
    )


def _caller_level() -> int:
    """The `stacklevel` that names the first caller outside tinytc_py of the function calling
    this one, whichever path led here (a `put`, or a wait that reports a native write's
    failure; compiled modules have no frames to skip)."""
    level = 1
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("tinytc_py."):
        level, frame = level + 1, frame.f_back
    return level


def _path(name: str) -> Path:
    return folder() / (name + SUFFIX)


def get(name: str, where: trust.Folder | None = None) -> bytes | None:
    """The payload of entry `name`, or None when it is missing, damaged (then removed), in a
    folder the cache may not use, or not the user's (group's) own (then left for `put` to
    replace). `where`: the folder as the caller checked it (else checked here)."""
    writer.wait(name)  # this process's write of it, if one is behind
    where = where or trust.checked()
    if where is None:
        return None
    path = where.path / (name + SUFFIX)
    try:
        with open(path, "rb") as f:
            if not trust.entry_trusted(os.fstat(f.fileno()), where):
                stats.count("untrusted", where=where)
                return None
            raw = f.read()
    except OSError:
        return None
    payload = raw[_HEADER:]
    if raw[: len(MAGIC)] != MAGIC or raw[len(MAGIC) : _HEADER] != hashlib.sha256(payload).digest():
        stats.count("corrupt", where=where)
        remove(name)
        return None
    with contextlib.suppress(OSError):
        os.utime(path)
    return payload


def remove(name: str) -> bool | None:
    """True when this call removed the entry, False when it was gone already (another process
    removed it first), None when it could not be removed and still takes space."""
    try:
        _path(name).unlink()
    except FileNotFoundError:
        return False
    except OSError:
        return None
    return True


def put(
    name: str,
    payload: bytes,
    counts: dict[str, int] | None = None,
    where: trust.Folder | None = None,
    if_absent: bool = False,
    behind: bool = True,
) -> None:
    """Store `payload` as entry `name` (atomically), then evict down to the size bound.
    `counts` (the caller's counters of this lookup) are recorded with bytes_written, in one
    update of the statistics file. `where`: the folder as the caller checked it (else
    checked here). `if_absent`: leave an entry of that name that may be read (another
    process's write of the same payload) as it is. `behind=False`: the file is in place when
    `put` returns, never left to a C host's native writer (a device binary stored under its
    build lock: the process waiting for that lock must find it)."""
    counts = dict(counts or {})
    checked = where or trust.checked()
    if checked is None:  # a folder the cache may not use: the counts stay in this process
        stats.count_all(counts)
        return
    path = checked.path
    if path not in _unwritable and not (if_absent and _readable(path / (name + SUFFIX), checked)):
        data = MAGIC + hashlib.sha256(payload).digest() + payload
        try:
            make_folder(checked)
            # a new folder's mark first (it counts no entry); reports a native write's failure
            writer.wait(str(path / FILE))
            if path not in _unwritable:  # not turned off by a failure that wait reported
                # a C host's per-user entry: written behind by its native thread (writer.py)
                if (
                    not behind
                    or checked.group is not None
                    or not writer.write_natively(str(path), name + SUFFIX, data)
                ):
                    atomic_write(
                        path / (name + SUFFIX),
                        data,
                        lambda fd: trust.share(fd, checked),
                        # removed since (another process cleared the cache): made again,
                        # with its mode
                        lambda _: make_folder(replace(checked, exists=False)),
                    )
                counts["bytes_written"] = len(data)
        except OSError as err:
            _disable_writing(path, err)
    if "bytes_written" in counts:  # before the count, whose update may come at once
        with _written_lock:
            _written.setdefault(stats.folder_key(checked), []).append(name)
    if counts:
        stats.count_all(counts, checked)
    if (
        "bytes_written" in counts
        and stats.unsaved(checked, "bytes_written") > max_bytes() * SAVE_EVERY
    ):
        stats.save(checked)  # then `_saved`


_written: dict[trust.Folder, list[str]] = {}  # entries whose bytes are not in the totals yet
_written_lock = threading.Lock()


def _saved(where: trust.Folder, totals: dict[str, int]) -> None:
    """After this process's counts were added to the totals of `where` (empty: they could not
    be): evict down to the bound when the estimate may exceed it; entries whose bytes could not
    be counted are taken back and writing stops (module docstring)."""
    with _written_lock:
        names = _written.pop(where, [])
    if not names:
        return
    if not totals:
        for name in names:
            remove(name)
        _disable_writing(where.path, OSError(f"cannot update the statistics in {where.path}"))
        return
    _keep_under_bound(totals, keep=names[-1], where=where)


stats.after_save = _saved
writer.native_failed = _disable_writing  # the bytes stay counted: an estimate too high is safe
if hasattr(os, "register_at_fork"):  # the parent's names are the parent's (stats._forked)
    os.register_at_fork(after_in_child=_written.clear)


def _readable(path: Path, where: trust.Folder) -> bool:
    """Whether entry file `path` exists and `get` would read it (its checksum aside)."""
    try:
        return trust.entry_trusted(os.stat(path), where)
    except OSError:
        return False


def _keep_under_bound(totals: dict[str, int], keep: str, where: trust.Folder) -> None:
    """Scan and evict when the estimate from the last scan's record (module docstring) may
    exceed the bound. `totals` are the statistics including this write."""
    limit = max_bytes()
    # no bytes_written in the totals: reset since (stats.reset_totals), only counts an early scan
    epoch, written = totals[stats.EPOCH], totals.get("bytes_written", 0)
    if totals.get(stats.FROM_EMPTY) == 1 and written <= limit:
        return  # every byte in the folder was counted in `written` (module docstring)
    record = _last_scan(where.path)
    if record is not None and record[0] == epoch and record[2] + written - record[1] <= limit:
        return
    try:
        found = entries()
        size = evict(limit, keep, found)
    except OSError:
        return  # the folder's size is unknown: no record, the next write scans again
    if len(found) < RECORD_FROM:
        return  # listing these few again at the next write costs less than a record
    with contextlib.suppress(OSError):
        scan = json.dumps([epoch, written, size]).encode()
        atomic_write(where.path / SCAN_FILE, scan, lambda fd: trust.share(fd, where))


def _last_scan(where: Path) -> tuple[int, int, int] | None:
    """(statistics epoch and bytes_written total when the last scan began, folder bytes after
    it) recorded in folder `where`, or None when there is no usable record."""
    try:
        record = tuple(json.loads((where / SCAN_FILE).read_bytes()))
    except (OSError, ValueError, TypeError):
        return None
    if len(record) != 3 or not all(isinstance(v, int) for v in record):
        return None
    return record


def entries() -> list[Entry]:
    """The entries in the folder, least recently used first (none when there is no folder).
    Raises OSError when the listing fails part-way, so a partial list is never taken for the
    folder's size; an entry removed meanwhile by another process is simply left out."""
    writer.wait()
    found: list[Entry] = []
    try:
        it = os.scandir(folder())
    except FileNotFoundError:
        return found
    with it:
        for e in it:
            if not e.name.endswith(SUFFIX):
                continue
            try:
                st = e.stat()
            except FileNotFoundError:
                continue
            found.append(Entry(e.name[: -len(SUFFIX)], st.st_size, st.st_mtime))
    found.sort(key=lambda e: e.last_use)
    return found


def evict(limit: int, keep: str = "", found: list[Entry] | None = None) -> int:
    """When the folder holds more than `limit` bytes, remove the least recently used entries
    (never `keep`) until it holds at most LOW_WATER of it; returns the bytes left. The
    removals are counted in one update of the statistics file, once each however many
    processes evict at once. `found`: the folder's `entries()`, when the caller listed them.
    Raises OSError when the folder cannot be listed."""
    found = entries() if found is None else found
    total = sum(e.size for e in found)
    if total <= limit:
        return total
    evicted = 0
    for e in found:
        if total <= limit * LOW_WATER:
            break
        if e.name == keep:
            continue
        removed = remove(e.name)
        if removed is None:
            continue  # still in the folder, still in `total`
        evicted += removed  # counted once, by the process whose call removed it
        total -= e.size
    if evicted:
        stats.count("evicted", evicted)
    return total


_LOCK_NAME = re.compile(r"(\.tmp-)?(spirv|native)-[0-9a-f]{64}\.lock(-.*)?")
"""A build lock of a per-user cache in the cache folder, or a claim on one (locks.lock_path);
nothing else there is removed, as the folder may be one the user keeps other files in. A
shared folder's locks and claims are in `kernels/`, where `clear` removes them with the
entries and temporary files."""


def clear() -> int:
    """Remove every entry (and stale temporary files and build locks with their claims, in
    the cache folder and in `kernels/`, and shared folders left half prepared:
    folder.remove_unfinished); returns the number of entries removed."""
    writer.wait()
    root = folder().parent
    remove_unfinished(root)
    with contextlib.suppress(OSError), os.scandir(root) as it:
        for e in it:
            if _LOCK_NAME.fullmatch(e.name) and not e.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.unlink(e.path)
    removed = 0
    with contextlib.suppress(OSError), os.scandir(folder()) as it:
        for e in it:
            if e.name.endswith((SUFFIX, LOCK_SUFFIX)) or e.name.startswith(".tmp-"):
                with contextlib.suppress(OSError):
                    os.unlink(e.path)
                    removed += e.name.endswith(SUFFIX)
    return removed
