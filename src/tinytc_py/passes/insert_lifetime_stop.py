"""insert-lifetime-stop: ends every alloca's lifetime right after its last use (backend.md §5).

For each region, the allocas defined in it get a `lifetime_stop` after the last instruction of
that region that touches the alloca or a view of it (operands and results of the instruction and
of everything nested in its regions count). An alloca that already has a lifetime_stop is left
alone, so running the pass twice changes nothing.
"""

from __future__ import annotations

from ..analysis.memory import AliasInfo
from ..ir.instructions import INSTRUCTIONS
from ..ir.region import Region
from ..ir.types import MemrefType
from ..ir.values import Value
from .base import FunctionPass

ALLOCA = "alloca"
LIFETIME_STOP = "lifetime_stop"


def _has_lifetime_stop(value: Value) -> bool:
    return any(use.owner.name == LIFETIME_STOP for use in value.uses)


class InsertLifetimeStop(FunctionPass):
    name = "insert-lifetime-stop"

    def run(self, func, ctx, out) -> None:
        self._run_on_region(func.body, AliasInfo(func))

    def _run_on_region(self, region: Region, aa: AliasInfo) -> set[Value]:
        """Inserts the stops of this region's allocas; returns the roots touched in the region."""
        pending = [
            inst.result
            for inst in region.insts
            if inst.name == ALLOCA and not _has_lifetime_stop(inst.result)
        ]
        touched: set[Value] = set()
        for inst in reversed(list(region.insts)):
            for child in inst.regions:
                touched |= self._run_on_region(child, aa)
            for v in (*inst.operands, *inst.results):
                if isinstance(v.type, MemrefType):
                    touched.add(aa.root(v))
            done = [a for a in pending if a in touched]
            if not done:
                continue
            pos = region.insts.index(inst) + 1
            # Stops of allocas whose last use is the same instruction keep the allocas' order.
            for alloca in reversed(done):
                stop = INSTRUCTIONS[LIFETIME_STOP]({"object": alloca}, loc=inst.loc)
                region.insert(pos, stop)
                pending.remove(alloca)
        return touched
