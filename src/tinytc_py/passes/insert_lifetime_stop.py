"""insert-lifetime-stop: ends every alloca's lifetime right after its last use (docs/design.md §B5).

For each region, the allocas defined in it get a `lifetime_stop` after the last instruction of
that region that touches the alloca or a view of it (operands and results of the instruction and
of everything nested in its regions count). An alloca that already has a lifetime_stop is left
alone, so running the pass twice changes nothing.
"""

from __future__ import annotations

from ..analysis.memory import AliasInfo
from ..ir.inst import Inst
from ..ir.ops.memory import AllocaInst, LifetimeStopInst
from ..ir.region import Region
from ..ir.types import MemrefType
from ..ir.values import Value
from .base import FunctionPass


def _has_lifetime_stop(value: Value) -> bool:
    return any(isinstance(use.owner, LifetimeStopInst) for use in value.uses)


def _ancestor_in(inst: Inst, region: Region) -> Inst:
    """`inst`, or the instruction of `region` whose regions (transitively) hold it."""
    while inst.parent is not region:
        inst = inst.parent.owner
    return inst


def _touching(alloca: Inst, aa: AliasInfo) -> list[Inst]:
    """The instructions that touch the alloca or a view of it: the alloca and the users of its
    views (an instruction whose result is a view of it uses one, so uses are enough)."""
    root = alloca.result
    found = [alloca]
    views = [root]
    seen = {root}
    while views:
        for use in views.pop().uses:
            user = use.owner
            found.append(user)
            for r in user.results:
                if r not in seen and isinstance(r.type, MemrefType) and aa.root(r) is root:
                    seen.add(r)
                    views.append(r)
    return found


class InsertLifetimeStop(FunctionPass):
    name = "insert-lifetime-stop"

    def run(self, func, ctx, out) -> None:
        allocas: dict[Region, list[Inst]] = {}
        for inst in func.body.walk():
            if isinstance(inst, AllocaInst) and not _has_lifetime_stop(inst.result):
                allocas.setdefault(inst.parent, []).append(inst)
        aa = AliasInfo(func)
        for region, found in allocas.items():
            _insert_stops(region, found, aa)


def _insert_stops(region: Region, allocas: list[Inst], aa: AliasInfo) -> None:
    """A lifetime_stop after each alloca's last use in `region`; stops after the same
    instruction keep the allocas' order. The list is rebuilt once."""
    position = {inst: k for k, inst in enumerate(region.insts)}
    after: dict[Inst, list[Value]] = {}
    for alloca in allocas:
        last = max((_ancestor_in(user, region) for user in _touching(alloca, aa)), key=position.get)
        after.setdefault(last, []).append(alloca.result)
    insts: list[Inst] = []
    for inst in region.insts:
        insts.append(inst)
        for value in after.get(inst, ()):
            stop = LifetimeStopInst({"object": value}, loc=inst.loc)
            stop.parent = region
            insts.append(stop)
    region.insts = insts
