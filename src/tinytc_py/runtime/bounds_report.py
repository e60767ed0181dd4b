"""The host side of bounds-checked mode (docs/bounds-checks.rst) for the Python runtimes: the
launch appends a zeroed report record (bounds_record.py) as the kernel's last argument and,
after the kernel has finished, raises the located error the record describes.

Kept apart from the launch code so that the hook there is two lines:

    args, record = with_report(kernel.info, args)     # before the arguments are bound
    raise_if_violated(kernel.info, record)            # after the results were copied back
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..bounds_record import RECORD_LENGTH, report_message
from ..errors import OutOfBoundsError
from ..spirv.convert import KernelInfo
from .launch import check_arg_count


def with_report(info: KernelInfo, args: Sequence[Any]) -> tuple[Sequence[Any], np.ndarray | None]:
    """`args` plus a zeroed record for a bounds-checked kernel (whose arguments are counted
    without it), else `args` as they are and None."""
    if info.bounds_checks is None:
        return args, None
    check_arg_count(info.name, info.params[:-1], args)
    record = np.zeros(RECORD_LENGTH, dtype=np.int64)
    return (*args, record), record


def raise_if_violated(info: KernelInfo, record: np.ndarray | None) -> None:
    """Raises OutOfBoundsError when the kernel reported an out-of-bounds access."""
    if record is None or info.bounds_checks is None:
        return
    message = report_message(info.bounds_checks, record.tolist())
    if message is not None:
        raise OutOfBoundsError(f"kernel {info.name}: {message}")
