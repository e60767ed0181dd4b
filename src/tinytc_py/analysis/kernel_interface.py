"""What the host needs to know about a kernel beyond its parameter types, so that a launch can be
checked before it runs (the facts travel in the binary's kernel metadata, spirv/convert):

- `written_params`: the memref and group parameters the kernel may write (a store, an atomic,
  a BLAS result, ... into the parameter or a view of it). A read-only host array, or a copy the
  results could not reach, is refused only for these; for the others nothing is copied back.
- `grid_axes`: the grid axes (x, y, z) whose `group_id` or `num_groups` the kernel reads. A
  kernel that reads none of them needs no grid: one work-group does all its work (more
  work-groups repeat it, which only kernels that combine results atomically want).
- `grid_bounds`: the parameter modes a `group_id` indexes directly and unconditionally
  (`load %x[%gid]`, `subview %A[0:8,0:8,%gid]`, `load %G[%gid]` for a group): a grid larger
  than that mode's extent reads or writes beyond the argument, so the host refuses it. Indexing
  under an `if` (the usual `if %gid < %n` guard) or through arithmetic is not a bound; what an
  access beyond an argument does is then undefined (python-api.rst, "Launching").

Every write whose memref does not trace back to a parameter or an alloca (there is none today)
counts as a write to every parameter, so the answer errs on the side of "written".
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.inst import Inst
from ..ir.region import Func
from ..ir.types import DYNAMIC, GroupType, MemrefType
from ..ir.values import Value
from .memory import memory_accesses, root

GRID_BUILTINS = ("group_id", "num_groups")


@dataclass(frozen=True)
class GridBound:
    """`num_groups[axis]` must not exceed the extent of mode `mode` of parameter `param` (mode
    -1: the number of members of a group parameter)."""

    axis: int
    param: int
    mode: int


def written_params(func: Func) -> frozenset[int]:
    """Indices of the memref/group parameters the kernel may write."""
    index = {p: k for k, p in enumerate(func.params)}
    written: set[int] = set()
    for inst in func.body.walk():
        for value, is_write in memory_accesses(inst):
            if not is_write:
                continue
            origin = root(value)
            if origin in index:
                written.add(index[origin])
            elif origin.defining_inst is None or origin.defining_inst.name != "alloca":
                return frozenset(
                    k
                    for k, p in enumerate(func.params)
                    if isinstance(p.type, (MemrefType, GroupType))
                )
    return frozenset(written)


def grid_axes(func: Func) -> tuple[bool, bool, bool]:
    """For x, y, z: whether the kernel reads that axis's group_id or num_groups."""
    used = [False, False, False]
    for inst in func.body.walk():
        if inst.name in GRID_BUILTINS:
            used[int(inst.props["mode"])] = True
    return (used[0], used[1], used[2])


def grid_bounds(func: Func) -> list[GridBound]:
    """The parameter modes indexed directly by a group_id outside any `if` (see the module
    docstring), in program order, without repeats."""
    index = {p: k for k, p in enumerate(func.params)}
    found: dict[GridBound, None] = {}
    for inst in func.body.walk():
        if _guarded(inst):
            continue
        operand = inst.operand("operand") if "operand" in inst.spec.operands else None
        if operand is None or operand not in index:
            continue
        for mode, value in _indices(inst):
            axis = _group_id_axis(value)
            if axis is not None:
                mode = -1 if isinstance(operand.type, GroupType) else mode
                found[GridBound(axis, index[operand], mode)] = None
    return list(found)


def _indices(inst: Inst) -> list[tuple[int, Value]]:
    """(mode, index value) of a load/store/atomic index list or a subview's single indices."""
    if inst.name == "subview":
        offsets = iter(inst.operand_list("offsets"))
        out = []
        for mode, (o, s) in enumerate(
            zip(inst.props["static_offsets"], inst.props["static_sizes"], strict=True)
        ):
            if o == DYNAMIC:
                value = next(offsets)
                if s == 0:  # a single index: the mode is dropped, the offset must be in range
                    out.append((mode, value))
        return out
    if "index_list*" in inst.spec.operands:
        return list(enumerate(inst.operand_list("index_list")))
    return []


def _group_id_axis(value: Value) -> int | None:
    inst = value.defining_inst
    if inst is None or inst.name != "group_id":
        return None
    return int(inst.props["mode"])


def _guarded(inst: Inst) -> bool:
    """Whether the instruction sits inside an `if` (its bound may be checked there)."""
    region = inst.parent
    while region is not None:
        owner = region.owner
        if not isinstance(owner, Inst):
            return False
        if owner.name == "if":
            return True
        region = owner.parent
    return False
