"""The host side of bounds-checked mode (docs/bounds-checks.rst) for the Python runtimes: the
launch appends a zeroed report record (bounds_record.py) as the kernel's last argument and,
after the kernel has finished, raises the located error the record describes.

The hook is in BuiltKernel.__call__ (launch.py), shared by every runtime: the kernel's
signature leaves the record out (`without_record`), the record is appended after the user's
arguments are bound, and the launch raises once the results were copied back.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..binary import KernelInfo
from ..bounds_record import RECORD_LENGTH, report_message
from ..errors import OutOfBoundsError


def without_record(info: KernelInfo) -> KernelInfo:
    """The kernel as its caller sees it: a bounds-checked kernel's last parameter, the record,
    is passed by the launch, not by the caller."""
    if info.bounds_checks is None:
        return info
    return dataclasses.replace(info, params=info.params[:-1])


def with_report(info: KernelInfo, args: list[Any]) -> tuple[list[Any], np.ndarray | None]:
    """`args` (one per parameter the caller passes) plus a zeroed record for a bounds-checked
    kernel, else `args` as they are and None."""
    if info.bounds_checks is None:
        return args, None
    record = np.zeros(RECORD_LENGTH, dtype=np.int64)
    return [*args, record], record


def raise_if_violated(info: KernelInfo, record: np.ndarray | None) -> None:
    """Raises OutOfBoundsError when the kernel reported an out-of-bounds access."""
    if record is None or info.bounds_checks is None:
        return
    message = report_message(info.bounds_checks, record.tolist())
    if message is not None:
        raise OutOfBoundsError(f"kernel {info.name}: {message}")
