"""Memory effects and aliasing of memref values, derived from the instruction table's flags.

`memory_accesses(inst)` lists the memref operands an instruction reads or writes (the `reads` /
`writes` operand names of its InstSpec row; `written_memrefs(inst)` the written ones alone, as a
list). `AliasInfo` traces views back to their root and decides whether two memrefs may overlap:

- A *view* is a memref result of a side-effect-free instruction that has a memref or group operand
  (subview, expand, fuse, a memref loaded from a group); its root is the root of that operand.
  Everything else (function parameters, alloca results, region parameters) is its own root.
- Two values alias if they have the same root, or if both roots are allocas whose local-memory
  ranges [stack_ptr, stack_ptr + size) overlap (only once set-stack-ptr has placed them).
  Distinct function parameters are assumed never to alias.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..ir.inst import Inst
from ..ir.region import Func
from ..ir.types import GroupType, MemrefType
from ..ir.values import Value
from .stack import stack_range


def memory_accesses(inst: Inst) -> Iterator[tuple[Value, bool]]:
    """(memref operand, is_write) for the instruction's own memory effects (no subregions)."""
    spec = inst.spec
    for key in spec.reads:
        for v in inst.operand_list(key):
            if isinstance(v.type, MemrefType):
                yield v, False
    for v in written_memrefs(inst):
        yield v, True


def written_memrefs(inst: Inst) -> list[Value]:
    """The memref operands the instruction writes (the writes of `memory_accesses`), as a list:
    most instructions write none, and asking costs no generator then."""
    return [
        v
        for key in inst.spec.writes
        for v in inst.operand_list(key)
        if isinstance(v.type, MemrefType)
    ]


def view_source(value: Value) -> Value | None:
    """The memref (or group) a view is taken of, or None if `value` is a root."""
    inst = value.defining_inst
    if inst is None or inst.spec.side_effects or not isinstance(value.type, MemrefType):
        return None
    for v in inst.operands:
        if isinstance(v.type, (MemrefType, GroupType)):
            return v
    return None


def root(value: Value) -> Value:
    """Follows view chains (subview / expand / fuse / ...) back to the underlying memref."""
    src = view_source(value)
    while src is not None:
        value = src
        src = view_source(value)
    return value


class AliasInfo:
    """May-alias queries for one function; roots are memoised."""

    def __init__(self, func: Func | None = None) -> None:
        self._roots: dict[Value, Value] = {}

    def root(self, value: Value) -> Value:
        r = self._roots.get(value)
        if r is None:
            r = self._roots[value] = root(value)
        return r

    def alias(self, a: Value, b: Value) -> bool:
        ra, rb = self.root(a), self.root(b)
        if ra is rb:
            return True
        range_a, range_b = _alloca_range(ra), _alloca_range(rb)
        if range_a is None or range_b is None:
            return False
        return range_a[0] < range_b[1] and range_b[0] < range_a[1]


def _alloca_range(value: Value) -> tuple[int, int] | None:
    inst = value.defining_inst
    return stack_range(inst) if inst is not None else None


def accessed_only_by(value: Value, inst: Inst) -> bool:
    """Whether no instruction but `inst` reads or writes memory of `value`'s root (through any
    view of it, `root`), anywhere in the function, before or after `inst`: a conservative
    "nothing else reads this memory" (passes/lower_linalg_gemm.py `writes_c_only`). A memref
    of it that leaves the views (yielded, or a memref result that is not a view) counts as
    accessed. Distinct roots are assumed not to overlap, as `AliasInfo` does for parameters."""
    base = root(value)
    pending, seen = [base], {inst}
    while pending:
        for use in pending.pop().uses:
            owner = use.owner
            if owner in seen:
                continue
            seen.add(owner)
            if owner.name == "yield" or any(root(m) is base for m, _ in memory_accesses(owner)):
                return False
            for r in owner.results:
                if isinstance(r.type, MemrefType):
                    if view_source(r) is None:
                        return False
                    pending.append(r)
    return True
