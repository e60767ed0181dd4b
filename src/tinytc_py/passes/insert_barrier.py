"""insert-barrier: barriers for memory hazards between collective instructions (docs/design.md §B5).

A forward data-flow analysis over the region tree keeps, per address space (global, local), the
memrefs read and written since the last barrier that fenced that space. Before an instruction in
a collective region whose accesses (including everything inside its SPMD regions) form a
read-after-write, write-after-read or write-after-write hazard with those, a
`barrier[.global][.local]` for the affected spaces is inserted and the spaces are cleared.

- Memory effects come from the instruction table (`reads` / `writes` operand names), aliasing
  from analysis/memory.py (same root, or overlapping alloca ranges after set-stack-ptr).
- `if` branches start from the state before the `if`; the state after it is the union of the
  branches. A `for` body starts from the union of the state before the loop and the state at the
  end of the body (back edge), iterated to a fixed point; after the loop, the union of the state
  before the loop (zero trips) and at the end of the body.
- An existing barrier clears the spaces it fences. No barrier is inserted inside an SPMD region;
  its accesses count toward the instruction that owns the region.
"""

from __future__ import annotations

from ..analysis.memory import AliasInfo, memory_accesses
from ..ir.enums import AddressSpace
from ..ir.inst import Exec, Inst
from ..ir.ops.spmd import BarrierInst
from ..ir.region import Region
from ..ir.types import as_memref
from ..ir.values import Value
from .base import FunctionPass

SPACES = (AddressSpace.global_, AddressSpace.local)


def _space_index(space: AddressSpace) -> int:
    """The position of an address space in SPACES (the sets are kept in lists, not in dicts
    keyed by the enum, whose hash is a Python-level call; tuple.index compares by identity
    first)."""
    return SPACES.index(space)


class Accesses:
    """Reads and writes per address space (index in SPACES)."""

    __slots__ = ("reads", "writes")

    def __init__(self) -> None:
        self.reads: list[set[Value]] = [set() for _ in SPACES]
        self.writes: list[set[Value]] = [set() for _ in SPACES]

    def copy(self) -> Accesses:
        new = Accesses()
        new.merge(self)
        return new

    def merge(self, other: Accesses) -> None:
        for i in range(len(SPACES)):
            self.reads[i] |= other.reads[i]
            self.writes[i] |= other.writes[i]

    def clear(self, i: int) -> None:
        self.reads[i] = set()
        self.writes[i] = set()

    def add(self, value: Value, is_write: bool) -> None:
        target = self.writes if is_write else self.reads
        target[_space_index(as_memref(value.type).addrspace)].add(value)

    def key(self) -> tuple[frozenset[Value], ...]:
        """A hashable snapshot of the state."""
        return tuple(frozenset(d[i]) for d in (self.reads, self.writes) for i in range(len(SPACES)))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Accesses)
            and self.reads == other.reads
            and self.writes == other.writes
        )

    def hazard(self, later: Accesses, i: int, aa: AliasInfo) -> bool:
        """RAW, WAR or WAW between these (earlier) accesses and `later` ones in space i."""
        return (
            _intersects(later.reads[i], self.writes[i], aa)
            or _intersects(later.writes[i], self.reads[i], aa)
            or _intersects(later.writes[i], self.writes[i], aa)
        )


def _intersects(a: set[Value], b: set[Value], aa: AliasInfo) -> bool:
    return bool(a and b) and any(aa.alias(x, y) for x in a for y in b)


def all_accesses(inst: Inst) -> Accesses | None:
    """The instruction's accesses including those of everything nested in its regions (None
    for an instruction that touches no memory: most of them)."""
    spec = inst.spec
    if not (spec.reads or spec.writes or inst.regions):
        return None
    acc = Accesses()
    for v, is_write in memory_accesses(inst):
        acc.add(v, is_write)
    for region in inst.regions:
        for nested in region.walk():
            nested_spec = nested.spec
            if nested_spec.reads or nested_spec.writes:  # most do not touch memory
                for v, is_write in memory_accesses(nested):
                    acc.add(v, is_write)
    return acc


def _is_loop(inst: Inst) -> bool:
    """A loop: one region with parameters (the loop variable), which runs again after its end."""
    return len(inst.regions) == 1 and bool(inst.regions[0].params)


class InsertBarrier(FunctionPass):
    name = "insert-barrier"

    def run(self, func, ctx, out) -> None:
        self.aa = AliasInfo(func)
        # Results of analysis-only runs by (region, entry state). Without them the fixed-point
        # iteration of every loop reruns the loops nested in it: time exponential in the depth
        # of loop nesting. Inserting barriers does not change a region's result (a barrier
        # clears what the analysis cleared already), so the entries stay valid.
        self.summaries: dict[tuple[int, tuple], Accesses] = {}
        self._region(func.body, Accesses(), mutate=True)

    def _region(self, region: Region, state: Accesses, mutate: bool) -> Accesses:
        """Runs the analysis through a collective region; inserts barriers if `mutate`."""
        if mutate:
            return self._walk_region(region, state, mutate)
        key = (id(region), state.key())
        if key not in self.summaries:
            self.summaries[key] = self._walk_region(region, state, mutate)
        return self.summaries[key].copy()

    def _walk_region(self, region: Region, state: Accesses, mutate: bool) -> Accesses:
        state = state.copy()
        for inst in list(region.insts):
            if isinstance(inst, BarrierInst):
                fenced = inst.props["fence_flags"] or 0
                for i, space in enumerate(SPACES):
                    if space & fenced:
                        state.clear(i)
                continue
            if inst.regions and all(r.kind is Exec.mixed for r in inst.regions):
                state = self._control_flow(inst, state, mutate)
                continue
            acc = all_accesses(inst)
            if acc is None:
                continue
            flags = 0
            for i, space in enumerate(SPACES):
                if state.hazard(acc, i, self.aa):
                    flags |= space.value
                    state.clear(i)
            if flags and mutate:
                fence = {"fence_flags": AddressSpace(flags)}
                barrier = BarrierInst({}, fence, loc=inst.loc)
                region.insert(region.insts.index(inst), barrier)
            state.merge(acc)
        return state

    def _control_flow(self, inst: Inst, state: Accesses, mutate: bool) -> Accesses:
        """for / if (regions that inherit the collective kind): the state flows into them."""
        for v, is_write in memory_accesses(inst):
            state.add(v, is_write)
        if not _is_loop(inst):
            after = Accesses()
            for region in inst.regions:
                after.merge(self._region(region, state, mutate))
            if len(inst.regions) == 1:  # a region that may be skipped
                after.merge(state)
            return after
        body = inst.regions[0]
        entry = state.copy()
        while True:
            end = self._region(body, entry, mutate=False)
            new_entry = entry.copy()
            new_entry.merge(end)
            if new_entry == entry:
                break
            entry = new_entry
        end = self._region(body, entry, mutate)
        end.merge(state)
        return end
