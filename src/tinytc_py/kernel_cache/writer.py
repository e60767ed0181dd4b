"""Write-behind: a SPIR-V miss's bookkeeping (the entry's encoding and write, the statistics
update) is done by one background thread after the compile returns, so a program's first start
pays for the compile alone and the writes overlap what the program does next (usually the
device build, which releases the GIL).

Another process that misses the entry before it is written compiles it too (SPIR-V entries take
no build lock: kernel_cache._stored), and every read of this process that must see its own
writes (`store.get`, `store.entries`, `store.clear`, the statistics) first waits for the pending
ones (`wait`).

Pending writes are finished before a normal exit and before a fork: `wait` is an `atexit`
handler (daemon threads still run while the handlers do) and a before-fork hook
(`os.register_at_fork(before=wait)`), so a child never inherits a writer caught holding
the statistics file's `flock`, which the child's copy of the descriptor would keep after the
parent let go. `atexit` runs only where the interpreter finalises, which a C host embedding
the library never does (it exits without running `atexit`; tests/capi/test_capi_kernel_cache.py
checks this). So the writes go behind only where Python's own executable is the program
(`_main_program`); the C API's start switches them to synchronous explicitly (`synchronous`,
capi/build.py), and a forked child (which may leave through `os._exit`, as multiprocessing's
children do) writes at once; everywhere else a write is done before the compile returns. (A C
host with this writer thread would need its own exit and fork hooks, and its next call into the
library would wait for the GIL the writer holds: measured, a first start's elapsed time grew
from 2-3 to 7-8 ms.) A C host whose interpreter libtinytc started has a native writer instead
(`native_in_host`, capi/helpers.c): the entry is encoded and counted before the compile returns,
and a thread without the GIL creates, writes and renames its file; `wait` and `stats.save` wait
for those files.

The writer thread runs only while there is work: it ends when its queue is empty and a later
`submit` starts another, so an idle process has no extra thread (Python 3.12 warns at every
`os.fork()` of a process with threads). It never dies with work queued: a failing job (any
exception, also one a "warnings are errors" filter makes of its warning) is reported in a way
that cannot raise, and where no thread can be started (at interpreter shutdown) the caller
runs the jobs itself.
"""

from __future__ import annotations

import _thread
import atexit
import contextlib
import os
import sys
import threading
import warnings
from collections import Counter, deque
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _main_program() -> bool:
    """Whether this interpreter is the program, started by Python's own executable (`python`,
    `python -c`, `python -m pytest`, a script run through its `#!` line), so that a normal exit
    finalises it and runs `atexit`. Neither `sys.orig_argv` nor `sys.executable` tell an
    embedding host apart: a host that passes its argv to the interpreter (pybind11's
    `scoped_interpreter(argc, argv)`, `PyConfig_SetBytesArgv`) has a non-empty `orig_argv`, and
    `sys.executable`, derived from that argv[0], names the host's own program. What the host
    cannot share with Python is its executable file: the process's (`/proc/self/exe`) is then not
    a Python interpreter (named python*). Without /proc the answer is no: writing at once is
    always correct, only slower."""
    try:
        exe = os.path.basename(os.path.realpath(os.readlink("/proc/self/exe")))
    except OSError:
        return False
    return bool(getattr(sys, "orig_argv", None)) and exe.startswith("python")


_behind = _main_program()
"""Whether writes go behind: this interpreter will run `atexit` at a normal exit."""

_lock = threading.Lock()
_done = threading.Condition(_lock)  # a pending job finished
_jobs: deque[tuple[str, Callable[[], None]]] = deque()
_pending = 0  # submitted, not yet finished
_names: Counter[str] = Counter()  # the names of the pending jobs
_writer: int | None = None  # the running writer thread's id; None when there is none


def writes_behind() -> bool:
    """Whether writes go behind (`_behind`): Python's own executable is the program, whose
    normal exit runs `atexit`."""
    return _behind


def synchronous() -> None:
    """From now on, write at once (after the writes already behind): for a host that never
    finalises the interpreter (the C API's start)."""
    global _behind
    _behind = False
    wait()


_native: Any = None
"""The library of a C host whose entries a native thread writes (`native_in_host`), else None."""
native_failed: Callable[[Path, OSError], None] | None = None
"""What to do when a native write failed (store.py: stop writing to that folder)."""


def native_in_host(ffi: Any, lib: Any) -> None:
    """From now on, `write_natively` hands entry files to the native writer of the C host's
    library (capi/helpers.c): its thread creates, writes and renames them while the host goes
    on, without the GIL (a Python writer thread would hold it, and the host's next call waited
    for it). For a host whose exit and forks wait for those writes (capi/build.py: the
    library's start installs the exit hook that saves the statistics, and `wait` waits for the
    native writes too). A forked child writes at once."""
    global _native
    _native = (ffi, lib)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_native_off)


def _native_off() -> None:
    global _native
    _native = None


def write_natively(folder: str, file: str, data: bytes) -> bool:
    """Queue `data` as file `file` of `folder` (a per-user kernels folder) on the native
    writer; False when there is none or it could not take the file (then the caller writes
    it). The file appears whole (a temporary file renamed into place), after `wait_native`."""
    if _native is None:
        return False
    lib = _native[1]
    return lib._tinytc_py_write_behind(os.fsencode(folder), os.fsencode(file), data, len(data)) == 0


def wait_native(name: str | None = None) -> None:
    """Return when the native writer has written every file queued so far (with `name`: every
    one whose name begins with it, so "" waits for all; the files are named without their
    folder) and report a failed write to `native_failed`."""
    if _native is None:
        return
    ffi, lib = _native
    err = lib._tinytc_py_write_wait(ffi.NULL if name is None else os.fsencode(name))
    if err and native_failed is not None:
        folder = ffi.new("char[]", 4096)
        lib._tinytc_py_write_failed_in(folder, 4096)
        native_failed(Path(os.fsdecode(ffi.string(folder))), OSError(err, os.strerror(err)))


def submit(job: Callable[[], None], name: str = "", start: bool = True) -> None:
    """Run `job` (which handles its own errors) behind, or now where writes cannot go behind.
    `name`: what it writes (an entry's key, a file's path), for `wait(name)`. Once `submit`
    returns, the job is the writer's: it runs even if the caller is interrupted. `start=False`
    only queues the job, for the writer that the next `submit`, `wait` or the exit starts: a
    job that may come late (folder.py's mark of a new folder) then shares neither the CPU
    nor a thread start of its own with the caller's compile. A job the writer submits (the
    mark of the folder an entry's write makes) runs at once: it is behind already, and it
    comes before the rest of the job that submits it."""
    global _pending
    if not _behind or (_writer is not None and _thread.get_ident() == _writer):
        job()
        return
    with _lock:
        _jobs.append((name, job))
        _pending += 1
        _names[name] += 1
        started = _start() if start else True
    if not started:
        _drain()


def _start() -> bool:
    """Under `_lock`: make sure a writer runs; False when no thread can be started."""
    global _writer
    if _writer is None:
        try:
            # the low-level start returns at once; threading.Thread.start waits for the thread
            _writer = _thread.start_new_thread(_work, ())
        except BaseException:  # noqa: BLE001 - e.g. at interpreter shutdown: run them here
            return False
    return True


def _work() -> None:
    """The writer: runs the queued jobs, ends when the queue is empty (under the lock, so a
    `submit` then starts another)."""
    global _writer
    me = _thread.get_ident()
    try:
        while True:
            with _lock:
                if not _jobs:
                    _writer = None
                    return
                name, job = _jobs.popleft()
            _run(name, job)
            del job
    finally:  # only reached with work left if the bookkeeping itself failed
        with _lock:
            if _writer == me:
                _writer = None
                if _jobs:
                    _start()


def _drain() -> None:
    """Run the queued jobs in the calling thread (no writer thread could be started)."""
    while True:
        with _lock:
            if not _jobs:
                return
            name, job = _jobs.popleft()
        _run(name, job)


def _run(name: str, job: Callable[[], None]) -> None:
    global _pending
    try:
        job()
    except BaseException as err:  # noqa: BLE001 - a write that failed only loses a cache entry
        _report(err)
    finally:
        with _lock:
            _pending -= 1
            _names[name] -= 1
            if not _names[name]:
                del _names[name]
            _done.notify_all()


def _report(err: BaseException) -> None:
    """Warn of a failed write; a warning that raises (a "warnings are errors" filter) falls
    back to a line on stderr, and nothing here raises."""
    message = f"tinytc kernel cache: a write failed ({err!r})"
    try:
        warnings.warn(message, RuntimeWarning, stacklevel=1)
    except BaseException:  # noqa: BLE001
        with contextlib.suppress(BaseException):  # nowhere left to report to
            os.write(2, (message + "\n").encode(errors="replace"))


def wait(name: str | None = None) -> None:
    """Return when every write submitted so far is done, or with `name` those of that name
    (so a lookup of one entry does not wait for the writes of others). At once in the writer
    itself, whose jobs read the folder too. The native writer's files too (`wait_native`)."""
    if _native is not None:
        wait_native(name)
    if not _pending or (name is not None and name not in _names):
        return
    if _writer is not None and _thread.get_ident() == _writer:
        return
    with _lock:
        while _pending if name is None else name in _names:
            if _jobs and not _start():
                break
            _done.wait()
        else:
            return
    _drain()  # no thread could take the queued jobs: run them here
    wait(name)


def _forked() -> None:
    """In a forked child: no writer thread, and writes at once (module docstring). The parent's
    pending writes are the parent's."""
    global _behind, _lock, _done, _pending, _writer
    _behind, _pending, _writer = False, 0, None
    _jobs.clear()
    _names.clear()
    _lock = threading.Lock()  # the parent's may have been held by its writer at the fork
    _done = threading.Condition(_lock)


if _behind:
    atexit.register(wait)
    if hasattr(os, "register_at_fork"):  # the child starts afresh (the parent's stats.save_all
        os.register_at_fork(after_in_child=_forked)  # before the fork waited for the writes)
