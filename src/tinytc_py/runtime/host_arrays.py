"""Host memory of any kind as a NumPy view, so that a launch has one path for all of them.

A memref (or group member) argument that lives in host memory may be a NumPy array, an object
with `__dlpack__` (a torch CPU tensor, a JAX or CuPy host array...), one with
`__array_interface__`, or one with the buffer protocol (`memoryview`, `array.array`,
`bytearray`). Each kind has one function here that returns a NumPy array *sharing the
object's memory* (never a copy, so that a kernel's writes reach the caller's object), or None
when the value is not of its kind; `host_array` tries them in order (HOST_ARRAY_KINDS). A
runtime tries its own device memory kinds (pyopencl arrays, USM arrays, ...) before these, and
may extend the list for host memory it knows how to view.

A SYCL USM array (dpnp) is refused first, with the way out: compile for its queue.
Anything else (a list, a scalar, a device tensor) is refused with a `TypeError` that names the
parameter: a copy made here could never carry results back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import Status, TinytcError

HostArrayKind = Callable[[Any, str], "np.ndarray | None"]


def refuse_sycl_usm(value: Any, what: str) -> np.ndarray | None:
    """A SYCL USM array (dpnp, dpnp.tensor, dpctl: `__sycl_usm_array_interface__`) lives in a
    SYCL context the OpenCL and Level Zero runtimes do not share; only the SYCL runtime, which
    tries its device kinds before these, takes one. Refused with the way out, rather than with
    the DLPack or NumPy error the kinds below would give."""
    if not hasattr(value, "__sycl_usm_array_interface__"):
        return None
    raise TypeError(
        f"{what}, got a {type(value).__name__} in SYCL USM memory, which a kernel compiled for"
        " OpenCL or Level Zero cannot take: compile the kernel for the array's SYCL queue,"
        " tinytc_py.compile(..., device=array.sycl_queue), or pass host memory"
    )


def from_ndarray(value: Any, what: str) -> np.ndarray | None:
    return value if isinstance(value, np.ndarray) else None


def from_dlpack(value: Any, what: str) -> np.ndarray | None:
    """A `__dlpack__` producer's memory (torch CPU tensors, ...); refused if not on the host."""
    if not hasattr(value, "__dlpack__"):
        return None
    try:
        return np.from_dlpack(value)
    except (BufferError, TypeError, ValueError, RuntimeError) as e:
        raise TypeError(
            f"{what}, got a {type(value).__name__} that cannot be viewed as host memory"
            f" through DLPack ({e})"
        ) from None


def from_array_interface(value: Any, what: str) -> np.ndarray | None:
    if not hasattr(value, "__array_interface__"):
        return None
    arr = np.asarray(value)
    return arr if _shares(arr, value) else None


def from_buffer(value: Any, what: str) -> np.ndarray | None:
    """An object with the buffer protocol (memoryview, array.array, bytearray, ...)."""
    try:
        view = memoryview(value)
    except TypeError:
        return None
    try:
        return np.asarray(view)
    except (TypeError, ValueError) as e:  # a format NumPy does not know
        raise TypeError(f"{what}, got a buffer NumPy cannot view ({e})") from None


def _shares(arr: np.ndarray, value: Any) -> bool:
    """Whether `arr` views the memory `value`'s array interface describes (no copy was made)."""
    data = value.__array_interface__.get("data")
    address = data[0] if isinstance(data, tuple) else None
    return address is None or arr.__array_interface__["data"][0] == address


HOST_ARRAY_KINDS: list[HostArrayKind] = [
    refuse_sycl_usm,
    from_ndarray,
    from_dlpack,
    from_array_interface,
    from_buffer,
]


def host_array(value: Any, what: str) -> np.ndarray | None:
    """A NumPy view of the host memory `value` holds, or None if it is no host memory kind.
    `what` starts the messages of the errors a kind raises (the kernel and the parameter)."""
    for kind in HOST_ARRAY_KINDS:
        arr = kind(value, what)
        if arr is not None:
            return arr
    return None


ACCEPTED = (
    "a NumPy array, an object with __dlpack__ (e.g. a torch CPU tensor), __array_interface__"
    " or the buffer protocol (memoryview, array.array)"
)


def require_host_array(value: Any, what: str, device_kinds: str) -> np.ndarray:
    """host_array(value), or a TypeError listing what the parameter accepts."""
    arr = host_array(value, what)
    if arr is None:
        raise TypeError(f"{what}, got {_short(value)}; pass {ACCEPTED}, or {device_kinds}")
    return arr


def require_writable(arr: np.ndarray, written: bool, what: str) -> None:
    """A kernel that writes the parameter cannot take read-only memory."""
    if written and not arr.flags.writeable:
        raise TinytcError(
            Status.invalid_kernel_arguments,
            f"{what}, got read-only memory, but the kernel writes this parameter",
        )


def _short(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"
