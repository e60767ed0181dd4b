"""set-stack-ptr: first-fit placement of allocas in local memory (docs/design.md §B5).

Walking the function in program order, each alloca gets the lowest offset, rounded up to its
alignment (its `alignment` attribute, else the element size), at which it fits between the live
allocations; `lifetime_stop` frees an allocation. The offset is stored as the alloca's
`stack_ptr` attribute (see analysis/stack.py), which dump-ir shows and the SPIR-V conversion reads.
"""

from __future__ import annotations

from ..analysis.stack import alloca_alignment, alloca_size, set_stack_ptr
from ..errors import Status
from ..ir.ops.memory import AllocaInst, LifetimeStopInst
from ..ir.values import Value
from .base import FunctionPass


def _align_up(offset: int, alignment: int) -> int:
    return -(-offset // alignment) * alignment


# The local-memory stack is one SPIR-V array whose length is a 32-bit constant.
MAX_STACK_BYTES = 2**31 - 1


def first_fit(live: list[tuple[int, int, Value]], size: int, alignment: int) -> tuple[int, int]:
    """(index in `live`, offset) of the lowest aligned gap of `size` bytes between the live
    allocations (sorted by start)."""
    offset = 0
    for pos, (start, stop, _) in enumerate(live):
        if _align_up(offset, alignment) + size <= start:
            return pos, _align_up(offset, alignment)
        offset = stop
    return len(live), _align_up(offset, alignment)


class SetStackPtr(FunctionPass):
    name = "set-stack-ptr"

    def run(self, func, ctx, out) -> None:
        live: list[tuple[int, int, Value]] = []  # (start, stop, alloca value), sorted by start
        for inst in func.body.walk():
            if isinstance(inst, AllocaInst):
                size = alloca_size(inst)
                pos, offset = first_fit(live, size, alloca_alignment(inst))
                if offset + size > MAX_STACK_BYTES:
                    raise inst.error(
                        Status.out_of_range,
                        f"local memory of {offset + size} bytes exceeds the 32-bit range "
                        "of SPIR-V array lengths",
                    )
                live.insert(pos, (offset, offset + size, inst.result))
                set_stack_ptr(inst, offset)
            elif isinstance(inst, LifetimeStopInst):
                obj = inst.operand("object")
                kept = [entry for entry in live if entry[2] is not obj]
                if len(kept) != len(live) - 1:
                    raise inst.error(
                        Status.internal_compiler_error,
                        "lifetime_stop of a value that is not a live allocation",
                        obj,
                    )
                live = kept
