"""Exceptions → tinytc_status_t for the C API (docs/design.md §C1.4).

Every exported function runs inside `guard`: whatever the Python implementation raises becomes a
status code, and nothing (no exception, no traceback) ever reaches the host program. The mapping
mirrors upstream's: our own errors carry their Status; running out of memory is bad_alloc; an
index or a number outside what C can hold is out_of_range; a file that cannot be read or written
is file_io_error; anything else is runtime_error, and non-Exception escapes (SystemExit, ...)
are unknown. Setting TINYTC_CAPI_TRACEBACK=1 in the environment prints the traceback of an
unexpected exception to stderr, for debugging the library itself.

`guard` also holds LIBRARY_LOCK (re-entrant: an error reporter may call back into the library)
for the whole call. The GIL alone does not make a call atomic (Python switches threads between
bytecodes), and the handle table's counters and reference counts are read-modify-write; with
the lock, C hosts may call the library from any number of threads at once (docs/c-api.rst,
"Thread safety").
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any, NoReturn

from ..errors import Status, TinytcError
from ..kernel_cache import stats  # noqa: F401 - its fork hooks before ours (LIBRARY_LOCK)


class CApiError(Exception):
    """A C-level failure with its status (NULL argument, unknown handle, ...)."""

    def __init__(self, status: Status, detail: str = "") -> None:
        super().__init__(detail or status.name)
        self.status = status


def invalid(detail: str = "") -> NoReturn:
    raise CApiError(Status.invalid_arguments, detail)


def status_of(exc: BaseException) -> int:
    """The status code an exception stands for."""
    if isinstance(exc, CApiError | TinytcError):
        return int(exc.status)
    if isinstance(exc, MemoryError):
        return int(Status.bad_alloc)
    if isinstance(exc, IndexError | OverflowError):
        return int(Status.out_of_range)
    if isinstance(exc, OSError):
        return int(Status.file_io_error)
    if isinstance(exc, Exception):
        return int(Status.runtime_error)
    return int(Status.unknown)


def _expected(exc: BaseException) -> bool:
    return isinstance(exc, CApiError | TinytcError | OSError)


def _debug_print(exc: BaseException) -> None:
    if os.environ.get("TINYTC_CAPI_TRACEBACK") and not _expected(exc):
        with contextlib.suppress(BaseException):  # printing must never fail the call
            traceback.print_exception(exc, file=sys.__stderr__)


LIBRARY_LOCK = threading.RLock()
"""Held through every exported call. Taken around a fork (a C host's forks run Python's fork
hooks too: capi/helpers.c), so that a child never inherits it held by another thread's call,
which it would wait for forever. Taken first: registered after the statistics' hooks (Python
runs the last registered first), whose lock a call may wait for (stats._file_lock)."""
if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=LIBRARY_LOCK.acquire,
        after_in_parent=LIBRARY_LOCK.release,
        after_in_child=LIBRARY_LOCK.release,
    )


def guard(fn: Callable[..., Any]) -> Callable[..., int]:
    """Wraps a status-returning implementation: None (or nothing) means success."""

    def call(*args: Any) -> int:
        try:
            with LIBRARY_LOCK:
                fn(*args)
        except BaseException as exc:  # noqa: BLE001 - the C boundary takes everything
            _debug_print(exc)
            return status_of(exc)
        return 0

    call.__name__ = fn.__name__
    call.__doc__ = fn.__doc__
    return call


def guard_void(fn: Callable[..., Any]) -> Callable[..., None]:
    """Wraps an implementation of a function without a status (destroy functions)."""

    def call(*args: Any) -> None:
        try:
            with LIBRARY_LOCK:
                fn(*args)
        except BaseException as exc:  # noqa: BLE001
            _debug_print(exc)

    call.__name__ = fn.__name__
    call.__doc__ = fn.__doc__
    return call
