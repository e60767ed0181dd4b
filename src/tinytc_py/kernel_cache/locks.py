"""Compile once per key: when several processes (MPI ranks, on one machine or many sharing the
folder) miss the same entry at once, one builds it and the others wait for its result.

The builder holds a lock file `<key>.lock` next to the entry, created with O_CREAT | O_EXCL
(atomic on local filesystems and on NFS since version 3) and holding its host, process id and
a random token. A waiter polls (2 ms, growing to 0.2 s) for the entry, and:
- reads the entry as soon as it appears;
- builds itself, without the lock, when the lock goes away without an entry (the builder
  failed, or could not store its result): the others would fail the same way, one at a time;
- removes the lock when it is stale, then takes it: left by a process of this host that is
  gone (checked with kill(pid, 0) and the process's start time, so a reused process id is
  told apart: a killed rank is noticed at once), or, from another machine, older than the
  timeout (a rank there that crashed; the hosts' clocks are taken to agree);
- builds itself when it has waited `TINYTC_CACHE_LOCK_TIMEOUT` seconds (default 300).
A waiting process therefore never waits longer than the timeout and never fails because of a
lock: every path that does not find the entry ends in the caller's own build. The races that
remain (a stale lock removed twice, a lock released between two checks) only cost a second
build of the same entry, which the atomic rename of entries makes harmless.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import secrets
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from . import stats, store, trust

ENV_TIMEOUT = "TINYTC_CACHE_LOCK_TIMEOUT"
DEFAULT_TIMEOUT = 300.0
FIRST_POLL = 0.002
LAST_POLL = 0.2


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
    where = where or trust.checked()
    if where is None:
        yield None, False
        return
    path = where.path / (name + store.LOCK_SUFFIX)
    deadline = time.monotonic() + timeout()
    waited = False
    while True:
        token = _create(path, where)
        if token is not None:
            try:
                yield store.get(name, where), waited  # it may have been stored just before
            finally:
                _release(path, token)
            return
        waited = True
        payload, released = _wait(name, path, deadline)
        if payload is not None or released:
            yield payload, waited
            return
        # the lock was stale and is gone: take it (or wait for whoever took it first)


def _wait(name: str, path: Path, deadline: float) -> tuple[bytes | None, bool]:
    """Wait for another process's build of `name`: (the entry, _) when it appeared, (None,
    True) when the waiter is to build itself (lock released without an entry, or the timeout
    passed), (None, False) when this call removed a stale lock."""
    delay, seen = FIRST_POLL, None
    while True:
        time.sleep(delay * random.uniform(0.5, 1.0))
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


def _create(path: Path, where: trust.Folder) -> str | None:
    """The token of the lock this call created, or None when another process holds it.
    A lock that cannot be created for another reason (say, a read-only folder) counts as
    released: the caller builds without it."""
    token = secrets.token_hex(8)
    try:
        trust.make_folder(where)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return None
    except OSError:
        return token  # nobody can lock: build without one (the lock file is never made)
    try:
        trust.share(fd, where)
        os.write(fd, json.dumps({**_holder(), "token": token}).encode())
    except OSError:
        pass  # a lock without content is still a lock; its age makes it stale
    finally:
        os.close(fd)
    return token


_own: dict[int, dict] = {}


def _holder() -> dict:
    """This process's host, id and start time (asked once per process: a fork is another)."""
    pid = os.getpid()
    if pid not in _own:
        _own.clear()
        _own[pid] = {"host": socket.gethostname(), "pid": pid, "start": _start_time(pid)}
    return _own[pid]


def _release(path: Path, token: str) -> None:
    """Remove the lock when it is still this process's own (not removed as stale and taken
    by another meanwhile)."""
    if _read(path).get("token") == token:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class _Seen:
    """What a waiter last saw of the lock: its file's identity and content."""

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
    ident = (st.st_ino, st.st_mtime_ns)
    if seen is None or seen.ident != ident or not seen.content:
        seen = _Seen(ident, _read(path))
    if _stale(seen.content, time.time() - st.st_mtime) and _break(path, seen.content):
        stats.count("stale_locks")
        return _STALE
    return seen


def _stale(content: dict, age: float) -> bool:
    """A holder on this host is judged by its process (gone, or its id reused by a process
    started at another time); one elsewhere, or a lock without content, by the lock's age."""
    pid = content.get("pid")
    if content.get("host") != socket.gethostname() or not isinstance(pid, int):
        return age > timeout()
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        pass
    return content.get("start") != _start_time(pid)


def _start_time(pid: int) -> str | None:
    """When process `pid` started (Linux: clock ticks since boot, /proc/PID/stat), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[19].decode() if len(fields) > 19 else None


def _break(path: Path, content: dict) -> bool:
    """Remove the stale lock `content` unless another process replaced it meanwhile: it is
    renamed aside first (atomic), and put back when what was renamed is another lock."""
    aside = path.with_name(f".tmp-stale-{secrets.token_hex(6)}")
    try:
        os.rename(path, aside)
    except OSError:
        return False  # already removed by another waiter
    taken = _read(aside)
    if taken != content:
        with contextlib.suppress(OSError):
            os.link(aside, path)  # fails when yet another lock exists: then that one holds
    with contextlib.suppress(OSError):
        os.unlink(aside)
    return taken == content
