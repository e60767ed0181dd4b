"""Attaching the registered implementations (registry.py) to a cffi embedding module: the entry
point the shared libraries run on their first call.

`attach` imports the implementing modules a library needs (which registers their functions),
wraps each implementation in `errors.guard` and hands it to `ffi.def_extern`. Functions that the
library declares but nothing implements yet report tinytc_status_not_implemented.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import Status
from .errors import guard, guard_void
from .handles import state
from .registry import IMPLS


def _ignore(exc_type: Any, exc_value: Any, tb: Any) -> None:
    """cffi's onerror hook: the guards catch everything, so this only silences cffi."""


def attach(ffi: Any, lib: Any, functions: dict[str, str]) -> list[str]:
    """Attaches an implementation to every Python-implemented function of a library.

    `functions` maps each C name to "status" or "void" (its return kind). Returns the names
    that got the not-implemented stub.
    """
    # The handle helpers use libtinytc's ffi: the structs and callbacks the core API hands out
    # (locations, the error reporter) are its types. A process whose first call goes to
    # libtinytc_cl runs on that library's ffi until libtinytc itself starts.
    if state.ffi is None or "tinytc_compiler_context_create" in functions:
        state.ffi, state.lib = ffi, lib
    from . import builder, core, global_data, recipe  # noqa: F401 - importing registers the implementations

    if any(name.startswith("tinytc_cl_") for name in functions):
        from . import cl  # noqa: F401 - only the OpenCL library needs OpenCL
    if any(name.startswith("tinytc_ze_") for name in functions):
        from . import ze  # noqa: F401 - only the Level Zero library needs Level Zero
    if any(name.startswith("_tinytc_sycl_") for name in functions):
        from . import sycl  # noqa: F401 - libtinytc_sycl's private recipe-handler functions

    missing = []
    for name, kind in functions.items():
        impl = IMPLS.get(name)
        if impl is None:
            missing.append(name)
            if kind == "status":
                ffi.def_extern(name=name, error=int(Status.not_implemented))(
                    _status_stub(int(Status.not_implemented))
                )
            else:
                ffi.def_extern(name=name, onerror=_ignore)(_void_stub)
            continue
        if kind == "status":
            ffi.def_extern(name=name, error=int(Status.unknown), onerror=_ignore)(guard(impl))
        else:
            ffi.def_extern(name=name, onerror=_ignore)(guard_void(impl))
    return missing


def _status_stub(status: int) -> Callable[..., int]:
    def stub(*args: Any) -> int:
        return status

    return stub


def _void_stub(*args: Any) -> None:
    return None
