"""Write-behind: a SPIR-V miss's bookkeeping (the entry's encoding and write, the statistics
update, the release of the build lock) is done by one background thread after the compile
returns, so a program's first start pays for the compile alone and the writes overlap what the
program does next (usually the device build, which releases the GIL).

An entry is still complete before anyone can miss it: its build lock is held until the write
is done, so another process (or thread) that misses it meanwhile waits for the entry as for any
build (locks.py), and every read of this process that must see its own writes (`store.get`,
`store.entries`, `store.clear`, the statistics) first waits for the pending ones (`wait`).

Pending writes are finished before a normal exit: `wait` is an `atexit` handler, and daemon
threads still run while the handlers do. That holds only where the interpreter finalises, which
a C host embedding the library never does (it exits without running `atexit`;
tests/capi/test_capi_kernel_cache.py checks this). So the writes go behind only in a process
that Python's own executable started (`sys.orig_argv` is empty in an embedded interpreter),
and a forked child (which may leave through `os._exit`, as multiprocessing's children do)
writes at once; everywhere else a write is done before the compile returns, as before.
"""

from __future__ import annotations

import _thread
import atexit
import os
import sys
import threading
import warnings
from collections import Counter, deque
from collections.abc import Callable

_behind = bool(getattr(sys, "orig_argv", None))
"""Whether writes go behind: this interpreter will run `atexit` at a normal exit."""

_lock = threading.Lock()
_queued = threading.Condition(_lock)  # a job was submitted
_done = threading.Condition(_lock)  # the last pending job finished
_jobs: deque[tuple[str, Callable[[], None]]] = deque()
_pending = 0  # submitted, not yet finished
_names: Counter[str] = Counter()  # the names of the pending jobs
_started = False
_writer = -1  # the writer thread's id


def submit(job: Callable[[], None], name: str = "") -> None:
    """Run `job` (which handles its own errors) behind, or now where writes cannot go behind.
    `name`: what it writes (an entry's key, a file's path), for `wait(name)`."""
    global _pending, _started
    if not _behind:
        job()
        return
    with _lock:
        _jobs.append((name, job))
        _pending += 1
        _names[name] += 1
        if not _started:
            # the low-level start returns at once; threading.Thread.start waits for the thread
            _thread.start_new_thread(_work, ())
            _started = True
        _queued.notify()


def _work() -> None:
    global _pending, _writer
    _writer = _thread.get_ident()
    while True:
        with _lock:
            while not _jobs:
                _queued.wait()
            name, job = _jobs.popleft()
        try:
            job()
        except Exception as err:  # noqa: BLE001 - a write that failed only loses a cache entry
            warnings.warn(
                f"tinytc kernel cache: a write failed ({err!r})", RuntimeWarning, stacklevel=1
            )
        finally:
            del job
            with _lock:
                _pending -= 1
                _names[name] -= 1
                if not _names[name]:
                    del _names[name]
                _done.notify_all()


def wait(name: str | None = None) -> None:
    """Return when every write submitted so far is done, or with `name` those of that name
    (so a lookup of one entry does not wait for the writes of others). At once in the writer
    itself, whose jobs read the folder too."""
    if not _pending or (name is not None and name not in _names):
        return
    if _thread.get_ident() == _writer:
        return
    with _lock:
        while _pending if name is None else name in _names:
            _done.wait()


def _forked() -> None:
    """In a forked child: no writer thread, and writes at once (module docstring). The parent's
    pending writes are the parent's."""
    global _behind, _lock, _queued, _done, _pending, _started
    _behind, _pending, _started = False, 0, False
    _jobs.clear()
    _names.clear()
    _lock = threading.Lock()  # the parent's may have been held by its writer at the fork
    _queued, _done = threading.Condition(_lock), threading.Condition(_lock)


if _behind:
    atexit.register(wait)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_forked)
