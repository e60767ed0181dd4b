"""Local-memory (stack) placement of allocas.

set-stack-ptr records each alloca's byte offset in local memory as the integer attribute
`stack_ptr` of the alloca's attribute dictionary, so it is printed by dump-ir
(`%x = alloca {"stack_ptr"=256} : memref<...,local>`), survives a print/parse round trip and is
what the SPIR-V conversion reads. These helpers are the only code that knows where it lives.
"""

from __future__ import annotations

from typing import cast

from ..ir.attrs import IntegerAttr
from ..ir.inst import Inst
from ..ir.types import MemrefType

STACK_PTR = "stack_ptr"


def stack_ptr(alloca: Inst) -> int | None:
    """The alloca's offset in local memory, or None before set-stack-ptr has run."""
    attr = alloca.attrs.get(STACK_PTR) if alloca.attrs is not None else None
    return attr.value if isinstance(attr, IntegerAttr) else None


def set_stack_ptr(alloca: Inst, offset: int) -> None:
    ctx = alloca.result.type.ctx
    items = {k.value: v for k, v in alloca.attrs.items} if alloca.attrs is not None else {}
    items[STACK_PTR] = ctx.integer_attr(offset)
    alloca.attrs = ctx.dictionary_attr(items)


def alloca_size(alloca: Inst) -> int:
    return cast(MemrefType, alloca.result.type).size_in_bytes()


def alloca_alignment(alloca: Inst) -> int:
    """The `alignment` attribute, else the element size."""
    attr = alloca.attrs.get("alignment") if alloca.attrs is not None else None
    if isinstance(attr, IntegerAttr):
        return attr.value
    return cast(MemrefType, alloca.result.type).element.size


def stack_range(inst: Inst) -> tuple[int, int] | None:
    """[start, stop) in local memory of a placed alloca; None for anything else."""
    if not inst.results or not isinstance(inst.result.type, MemrefType):
        return None
    start = stack_ptr(inst) if inst.name == "alloca" else None
    if start is None:
        return None
    return start, start + alloca_size(inst)
