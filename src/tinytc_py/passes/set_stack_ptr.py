"""set-stack-ptr: first-fit placement of allocas in local memory (backend.md §5).

Walking the function in program order, each alloca gets the lowest offset, rounded up to its
alignment (its `alignment` attribute, else the element size), at which it fits between the live
allocations; `lifetime_stop` frees an allocation. The offset is stored as the alloca's
`stack_ptr` attribute (see analysis/stack.py), which dump-ir shows and the SPIR-V conversion reads.
"""

from __future__ import annotations

from ..analysis.stack import alloca_alignment, alloca_size, set_stack_ptr
from ..errors import Status
from ..ir.values import Value
from .base import FunctionPass


def _align_up(offset: int, alignment: int) -> int:
    return -(-offset // alignment) * alignment


class SetStackPtr(FunctionPass):
    name = "set-stack-ptr"

    def run(self, func, ctx, out) -> None:
        live: list[tuple[int, int, Value]] = []  # (start, stop, alloca value), sorted by start
        for inst in func.body.walk():
            if inst.name == "alloca":
                size, alignment = alloca_size(inst), alloca_alignment(inst)
                offset, pos = 0, 0
                for pos, (start, stop, _) in enumerate(live):
                    if _align_up(offset, alignment) + size <= start:
                        break
                    offset = stop
                else:
                    pos = len(live)
                offset = _align_up(offset, alignment)
                live.insert(pos, (offset, offset + size, inst.result))
                set_stack_ptr(inst, offset)
            elif inst.name == "lifetime_stop":
                obj = inst.operand("object")
                kept = [entry for entry in live if entry[2] is not obj]
                if len(kept) != len(live) - 1:
                    raise inst.error(
                        Status.internal_compiler_error,
                        "lifetime_stop of a value that is not a live allocation", obj,
                    )
                live = kept
