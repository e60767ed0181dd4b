"""The report record of bounds-checked mode (OptFlag.bounds_checks, docs/bounds-checks.rst):
its layout, shared by the pass that writes it (passes/insert_bounds_checks.py), the Python
runtime (runtime/bounds_report.py) and the C API (tinytc_bounds_report_message), and the one
function that turns a record into the located message.

A bounds-checked kernel takes one trailing argument more than its IR parameters: a global
array of RECORD_LENGTH int64 ("index" in the IR) the host zeroes before the launch. A work-item
whose access is out of bounds skips the access and adds 1 to entry COUNT atomically; the one
that saw 0 there (the first violation) writes the check id, the index, the bound and its
work-group id. A kernel's `bounds_checks` (KernelInfo, carried in the binary's metadata) holds
one message template per check id (id k is entry k - 1) with the placeholders below.
"""

from __future__ import annotations

from collections.abc import Sequence

RECORD_LENGTH = 7
COUNT, CHECK_ID, INDEX, BOUND, GROUP = 0, 1, 2, 3, 4  # GROUP..GROUP+2: work-group id x, y, z

INDEX_FIELD = "{index}"
BOUND_FIELD = "{bound}"
GROUP_FIELD = "{group}"


def report_message(checks: Sequence[str], record: Sequence[int]) -> str | None:
    """The message of a record read back after a launch, or None if no check failed."""
    if len(record) < RECORD_LENGTH or int(record[COUNT]) == 0:
        return None
    check_id = int(record[CHECK_ID])
    if not 1 <= check_id <= len(checks):
        return f"out-of-bounds access with unknown check id {check_id}"
    group = tuple(int(g) for g in record[GROUP : GROUP + 3])
    return (
        checks[check_id - 1]
        .replace(INDEX_FIELD, str(int(record[INDEX])))
        .replace(BOUND_FIELD, str(int(record[BOUND])))
        .replace(GROUP_FIELD, f"({group[0]}, {group[1]}, {group[2]})")
    )
