"""Build once per key: when several processes (MPI ranks, on one machine or many sharing the
folder) miss the same device binary at once, one builds it (the device's JIT, seconds) and the
others wait for its result. SPIR-V entries take no lock: their compile costs about a
millisecond, less than taking and releasing a lock, so each process that misses one compiles
it and writes it unless it is there by then (kernel_cache._stored).

The builder holds a lock file `<key>.lock`, created with O_CREAT | O_EXCL (atomic on local
filesystems and on NFS since version 3) and holding its host, process id and a random token.
Where it lives depends on the folder (`lock_path`): a per-user cache keeps it in the cache folder,
next to `kernels/`, so a first start takes it without making `kernels/` first (one directory
creation less before its compile); a shared project folder keeps it in `kernels/`, which the
cache makes itself group-writable without the sticky bit, so every member can create a lock and
remove a crashed member's stale one, whatever the mode of the project folder above (its group's
owner may give it the sticky bit, or leave it writable to the owner only). A waiter polls (2 ms,
growing to 0.2 s) for the entry, and:
- reads the entry as soon as it appears;
- builds itself, without the lock, when the lock goes away without an entry (the builder
  failed, or could not store its result): the others would fail the same way, one at a time;
- removes the lock when it is stale, then takes it. Stale is a holder known to be dead: a
  process of this host that is gone (kill(pid, 0)), or whose id now belongs to a process
  started at another time (both start times known): a killed rank is noticed at once. A
  holder known to be alive (this host, same start time) is never stale. Of a holder whose
  state is unknown (another machine, a start time that cannot be read, a lock without
  content) the lock is stale when it is older than the timeout (a rank there that crashed;
  the hosts' clocks are taken to agree);
- builds itself when it has waited `TINYTC_CACHE_LOCK_TIMEOUT` seconds (default 300).
A waiting process therefore never waits longer than the timeout and never fails because of a
lock: every path that does not find the entry ends in the caller's own build.

Removing a lock must not remove another: two waiters may judge the same lock stale, the first
removes it and a third process takes a new lock, which the second must leave alone, and a
holder whose lock was judged stale (its build outlived the timeout) must not remove its
successor when it releases. So every removal (release or break) goes through `_remove`: it
first claims the lock file by creating `.tmp-<lock>-<id>-<n>` with O_EXCL, then checks that
the name still holds that file with the content it means (the holder's token, or what the
waiter judged stale, with its modification time), and only then unlinks the name. The claim's
`<id>` is the lock's own: its random token (which its holder and a waiter that read it both
know), or for a lock without content its inode and modification time. Not the inode alone: a
file system reuses the inode of a removed lock for the next file, and a claim on the removed
lock, still there for a moment, then kept the next lock's holder from removing its lock. Only the
claim's holder removes that file, so the name cannot change between the check and the unlink,
and the check sees a successor. No lock is ever moved aside and put back, so waiters never see
a held lock vanish. Only O_EXCL creation, stat, read and unlink are used (no flock, no rename
tricks), which behave the same on NFS. A claim left by a process that died between two of
these calls is passed over once it is older than the timeout (the next number is claimed), and
removed with the lock. The only race left is a holder stopped for longer than the timeout
between two system calls, which costs a second build of the same entry; the atomic rename of
entries makes that harmless.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import secrets
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from . import stats, store, trust
from .folder import make_folder

ENV_TIMEOUT = "TINYTC_CACHE_LOCK_TIMEOUT"
DEFAULT_TIMEOUT = 300.0
FIRST_POLL = 0.002
LAST_POLL = 0.2
_sleep = time.sleep  # the waiters' pause; a test replaces this name, never time.sleep itself


def timeout() -> float:
    """Seconds a process waits for another's build (TINYTC_CACHE_LOCK_TIMEOUT; a bad value
    falls back to the default)."""
    try:
        return max(0.0, float(os.environ.get(ENV_TIMEOUT, DEFAULT_TIMEOUT)))
    except ValueError:
        return DEFAULT_TIMEOUT


@contextlib.contextmanager
def build_once(name: str, where: trust.Folder | None = None) -> Iterator[tuple[bytes | None, bool]]:
    """Around the build of entry `name` after a miss: yields (payload, waited). A payload
    means the entry was stored meanwhile (`waited`: this process waited for another's build)
    and the caller uses it; None means the caller builds and stores the entry, holding the
    lock when it could take it. `where`: the folder as the caller checked it (else checked
    here)."""
    turn = take(name, where)
    try:
        yield turn.payload, turn.waited
    finally:
        turn.release()


class Turn:
    """What `take` found: the entry stored meanwhile (`payload`, `waited`), or the turn to
    build it, holding the lock when it could be taken, until `release()` (which a caller may
    hand to the thread that stores the entry: writer.py)."""

    def __init__(self, payload: bytes | None, waited: bool, lock: Path | None, held: _Held | None):
        self.payload, self.waited = payload, waited
        self._lock, self._held = lock, held

    def release(self) -> None:
        """Remove the lock this turn holds (once; nothing when it holds none)."""
        lock, held, self._held = self._lock, self._held, None
        if lock is not None and held is not None:
            _release(lock, held)


def take(name: str, where: trust.Folder | None = None) -> Turn:
    """`build_once` without the `with`: the caller releases the returned turn."""
    where = where or trust.checked()
    if where is None:
        return Turn(None, False, None, None)
    path = lock_path(name, where)
    deadline = time.monotonic() + timeout()
    waited = False
    while True:
        held = _create(path, where)
        if held is not None:
            turn = Turn(None, waited, path, held)
            try:
                turn.payload = store.get(name, where)  # it may have been stored just before
            except BaseException:
                turn.release()
                raise
            return turn
        waited = True
        payload, released = _wait(name, path, deadline)
        if payload is not None or released:
            return Turn(payload, waited, None, None)
        # the lock was stale and is gone: take it (or wait for whoever took it first)


def _wait(name: str, path: Path, deadline: float) -> tuple[bytes | None, bool]:
    """Wait for another process's build of `name`: (the entry, _) when it appeared, (None,
    True) when the waiter is to build itself (lock released without an entry, or the timeout
    passed), (None, False) when this call removed a stale lock."""
    delay, seen = FIRST_POLL, None
    while True:
        _sleep(delay * random.uniform(0.5, 1.0))
        delay = min(delay * 2, LAST_POLL)
        payload = store.get(name)
        if payload is not None:
            return payload, False
        seen = _inspect(path, seen)
        if seen is _GONE:  # released: look once more, the entry may have come just before
            return store.get(name), True
        if seen is _STALE:
            return None, False
        if time.monotonic() >= deadline:
            stats.count("lock_timeouts")
            return None, True


@dataclass(frozen=True)
class _Held:
    """The lock file this process created (inode; -1: none could be made) and its token."""

    inode: int
    token: str


def lock_path(name: str, where: trust.Folder) -> Path:
    """The build lock of entry `name` (module docstring): for a per-user folder in the cache
    folder that holds `kernels/`, which a first start then need not make before its compile
    (the entry's write makes it, behind); for a shared folder in `kernels/` itself, the only
    folder there whose mode the cache sets. Its claims (`_claim_path`) sit beside it."""
    folder = where.path if where.group is not None else where.path.parent
    return folder / (name + store.LOCK_SUFFIX)


def _create(path: Path, where: trust.Folder) -> _Held | None:
    """The lock this call created, or None when another process holds it. A lock that cannot
    be created for another reason (say, a read-only folder) counts as released: the caller
    builds without it. A missing per-user cache folder is made (private) first, a shared
    folder's `kernels/` (which holds its locks: `lock_path`) before the lock."""
    token = secrets.token_hex(8)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        if where.group is not None:
            make_folder(where)  # kernels/: 2770, without the sticky bit whatever the root has
            fd = os.open(path, flags, 0o600)
        else:
            try:
                fd = os.open(path, flags, 0o600)
            except FileNotFoundError:
                path.parent.mkdir(parents=True, exist_ok=True, mode=trust.USER_DIR_MODE)
                fd = os.open(path, flags, 0o600)
    except FileExistsError:
        return None
    except OSError:
        return _Held(-1, token)  # nobody can lock: build without one (no lock file is made)
    held = _Held(-1, token)  # if even fstat fails, the file is left to turn stale
    try:
        held = _Held(os.fstat(fd).st_ino, token)
        trust.share(fd, where)
        os.write(fd, json.dumps({**_holder(), "token": token}).encode())
    except OSError:
        pass  # a lock without content is still a lock; its age makes it stale
    finally:
        os.close(fd)
    return held


_own: dict[int, dict] = {}


def _holder() -> dict:
    """This process's host, id and start time (asked once per process: a fork is another)."""
    pid = os.getpid()
    if pid not in _own:
        _own.clear()
        _own[pid] = {"host": socket.gethostname(), "pid": pid, "start": _start_time(pid)}
    return _own[pid]


def _release(path: Path, held: _Held) -> None:
    """Remove the lock when it is still this process's own (not removed as stale meanwhile,
    perhaps taken by another since)."""
    if held.inode >= 0:
        _remove(
            path, held.inode, held.token, lambda st, content: content.get("token") == held.token
        )


def _read(path: Path) -> tuple[os.stat_result, dict]:
    """The lock file's identity and content, from one open file (on NFS, opening fetches the
    file's current attributes, where a stat of the name may answer from a cache); content
    that cannot be read or parsed is empty. Raises OSError when there is no file to open.
    Plain descriptor calls: a buffered file object adds a terminal check and a second fstat,
    a fifth of a release's system calls."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        chunks = []
        try:
            while chunk := os.read(fd, 1 << 16):
                chunks.append(chunk)
            data = json.loads(b"".join(chunks))
        except (OSError, ValueError):
            data = {}
    finally:
        os.close(fd)
    return st, data if isinstance(data, dict) else {}


class _Seen:
    """What a waiter last saw of the lock: its file's identity (inode, modification time in
    ns) and content."""

    def __init__(self, ident: tuple[int, int], content: dict) -> None:
        self.ident, self.content = ident, content


_GONE = _Seen((-1, -1), {})
_STALE = _Seen((-2, -2), {})


def _inspect(path: Path, seen: _Seen | None) -> _Seen:
    """The lock's state: `_GONE` when it was released, `_STALE` when it was stale and this
    call removed it, else what was seen (the content is read again only for a new lock)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return _GONE
    except OSError:
        return seen or _GONE
    if seen is None or seen.ident != (st.st_ino, st.st_mtime_ns) or not seen.content:
        try:
            st, content = _read(path)
        except FileNotFoundError:
            return _GONE
        except OSError:  # not readable (yet: another member's lock before its mode is set)
            content = {}
        seen = _Seen((st.st_ino, st.st_mtime_ns), content)
    if _stale(seen.content, time.time() - st.st_mtime) and _break(path, seen):
        stats.count("stale_locks")
        return _STALE
    return seen


def _stale(content: dict, age: float) -> bool:
    """Whether the holder of a lock with `content`, `age` seconds old, is gone: known dead
    (this host: no such process, or its id taken by a process started at another time), or
    of unknown state (another host, a start time that cannot be read, no content) and the lock
    older than the timeout. A holder known alive is never stale."""
    pid = content.get("pid")
    if content.get("host") == socket.gethostname() and isinstance(pid, int):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:  # alive, another user's
            pass
        started, now = content.get("start"), _start_time(pid)
        if started is not None and now is not None:
            return started != now
    return age > timeout()


def _start_time(pid: int) -> str | None:
    """When process `pid` started (Linux: clock ticks since boot, /proc/PID/stat), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[19].decode() if len(fields) > 19 else None


def _break(path: Path, seen: _Seen) -> bool:
    """Remove the lock judged stale as `seen`, unless the name holds another lock by now."""
    inode, mtime_ns = seen.ident
    token = seen.content.get("token")
    ident = token if isinstance(token, str) and _TOKEN.fullmatch(token) else f"{inode}.{mtime_ns}"
    return _remove(
        path,
        inode,
        ident,
        lambda st, content: st.st_mtime_ns == mtime_ns and content == seen.content,
    )


_TOKEN = re.compile(r"[0-9A-Za-z]{1,64}")
"""A token that may name a claim (anything else in a damaged lock could leave the folder)."""


def _remove(
    path: Path, inode: int, ident: str, same: Callable[[os.stat_result, dict], bool]
) -> bool:
    """Unlink the lock `path` when it is still the file `inode` and `same(stat, content)`
    recognises it; True when this call removed it. Claims the lock `ident` (its token, else
    its inode and modification time) first (module docstring): False, removing nothing, while
    another process holds the claim."""
    claim = _claim(path, ident)
    if claim is None:
        return False
    try:
        try:
            st, content = _read(path)
        except OSError:
            return False
        if st.st_ino != inode or not same(st, content):
            return False
        try:
            os.unlink(path)
        except OSError:
            return False
        return True
    finally:
        for n in range(claim + 1):  # ours and any abandoned ones before it
            with contextlib.suppress(OSError):
                os.unlink(_claim_path(path, ident, n))


def _claim(path: Path, ident: str) -> int | None:
    """The number of the claim on lock `ident` this call created, or None when another
    process holds one (or the claim cannot be made). A claim older than the timeout was left
    by a process that died holding it: the next number is tried."""
    n = 0
    while True:
        claim = _claim_path(path, ident, n)
        try:
            os.close(os.open(claim, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            return n
        except FileExistsError:
            try:
                age = time.time() - os.stat(claim).st_mtime
            except OSError:
                return None  # just released: the lock is gone or was not the one meant
            if age <= timeout():
                return None
        except OSError:
            return None
        n += 1


def _claim_path(path: Path, ident: str, n: int) -> Path:
    """The name of claim `n` on lock `ident` (a temporary file: `tinytc-cache clear` removes
    it with the locks)."""
    return path.with_name(f".tmp-{path.name}-{ident}-{n}")
