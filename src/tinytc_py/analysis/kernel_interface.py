"""What the host needs to know about a kernel beyond its parameter types, so that a launch can be
checked before it runs (the facts travel in the binary's kernel metadata, spirv/convert):

- `written`: the memref and group parameters the kernel may write (a store, an atomic,
  a BLAS result, ... into the parameter or a view of it). A read-only host array, or a copy the
  results could not reach, is refused only for these; for the others nothing is copied back.
- `axes`: the grid axes (x, y, z) whose `group_id` or `num_groups` the kernel reads. A
  kernel that reads none of them needs no grid: one work-group does all its work (more
  work-groups repeat it, which only kernels that combine results atomically want).
- `bounds`: the parameter modes a `group_id` indexes directly and unconditionally
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
from ..ir.ops.control import IfInst
from ..ir.ops.leaves import GroupIdInst, NumGroupsInst
from ..ir.ops.memory import AllocaInst, SubviewInst
from ..ir.region import Func, Region
from ..ir.types import DYNAMIC, GroupType, MemrefType
from ..ir.values import Value
from .memory import root, written_memrefs


@dataclass(frozen=True)
class GridBound:
    """`num_groups[axis]` must not exceed the extent of mode `mode` of parameter `param` (mode
    -1: the number of members of a group parameter)."""

    axis: int
    param: int
    mode: int


# Uncapped: its keys are small triples (axis 0-2, parameter index, mode), as few as the
# parameter modes of the kernels a process compiles; spirv/convert/metadata.py's _ARG_INFOS alike
_GRID_BOUNDS: dict[tuple[int, int, int], GridBound] = {}


def grid_bound(axis: int, param: int, mode: int) -> GridBound:
    """`GridBound(axis, param, mode)`, one shared instance per triple (a frozen dataclass's
    generated __init__ runs interpreted, about 1 us, even in the compiled module)."""
    key = (axis, param, mode)
    found = _GRID_BOUNDS.get(key)
    if found is None:
        found = _GRID_BOUNDS[key] = GridBound(axis, param, mode)
    return found


@dataclass(frozen=True)
class KernelInterface:
    """The three launch facts of one kernel (see the module docstring)."""

    written: frozenset[int]
    """Indices of the memref/group parameters the kernel may write."""
    axes: tuple[bool, bool, bool]
    """For x, y, z: whether the kernel reads that axis's group_id or num_groups."""
    bounds: tuple[GridBound, ...]
    """The parameter modes indexed directly by a group_id outside any `if`, in program order,
    without repeats."""


def kernel_interface(func: Func) -> KernelInterface:
    """The launch facts of `func`, from one walk over its body (the conversion asks for them
    for every kernel it compiles)."""
    scan = _Scan(func)
    scan.region(func.body, False)
    if scan.all_written:
        written = frozenset(
            k for k, p in enumerate(func.params) if isinstance(p.type, (MemrefType, GroupType))
        )
    else:
        written = frozenset(scan.written)
    axes = scan.axes
    return KernelInterface(written, (axes[0], axes[1], axes[2]), tuple(scan.bounds))


class _Scan:
    """The walk of kernel_interface: instructions in pre-order, each told whether it sits inside
    an `if` (a bound indexed there may be checked by the `if`)."""

    def __init__(self, func: Func) -> None:
        self.index = {p: k for k, p in enumerate(func.params)}
        self.written: set[int] = set()
        # a write whose memref traces back to neither a parameter nor an alloca (there is none
        # today) counts as a write to every parameter
        self.all_written = False
        self.axes = [False, False, False]
        self.bounds: dict[GridBound, None] = {}

    def region(self, region: Region, guarded: bool) -> None:
        for inst in region.insts:
            self.inst(inst, guarded)
            if inst.regions:
                inner = guarded or isinstance(inst, IfInst)
                for sub in inst.regions:
                    self.region(sub, inner)

    def inst(self, inst: Inst, guarded: bool) -> None:
        # (instruction classes rather than `inst.name`, and the spec read once: both are class
        # attributes, a generic attribute lookup each, and this runs per instruction)
        index, spec = self.index, inst.spec
        if spec.writes and not self.all_written:
            for value in written_memrefs(inst):
                origin = root(value)
                if origin in index:
                    self.written.add(index[origin])
                elif not isinstance(origin.defining_inst, AllocaInst):
                    self.all_written = True
                    break
        if isinstance(inst, (GroupIdInst, NumGroupsInst)):  # a literal tuple: two type checks
            self.axes[int(inst.props["mode"])] = True
        if guarded or "operand" not in spec.operands:
            return
        operand = inst.operand("operand")
        if operand is None or operand not in index:
            return
        for mode, value in _indices(inst):
            axis = _group_id_axis(value)
            if axis is not None:
                mode = -1 if isinstance(operand.type, GroupType) else mode
                self.bounds[grid_bound(axis, index[operand], mode)] = None


def _indices(inst: Inst) -> list[tuple[int, Value]]:
    """(mode, index value) of a load/store/atomic index list or a subview's single indices."""
    if isinstance(inst, SubviewInst):
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
    if not isinstance(inst, GroupIdInst):
        return None
    return int(inst.props["mode"])
