"""dead-code-elimination: removes code whose effect nobody observes (docs/design.md §B5, step 3).

- An instruction without side effects (the instruction table's flag) whose results are unused
  is erased. Of the instructions with regions only `if` and `for` qualify, and only when nothing
  inside them (except the yields) has side effects.
- An `if` with a constant condition is replaced by its taken branch: the branch's instructions
  move before the `if`, and the `if`'s results are replaced by the values the branch yields. A
  false condition without an else branch thus removes the `if`.
- A `for` whose constant lower bound is not below its constant upper bound never runs: it is
  erased and its results are replaced by the initial values.
- An `alloca` whose value is used by nothing but `lifetime_stop` is erased with those
  lifetime_stops (the instruction table marks alloca as having side effects, as it claims local
  memory; memory nobody reads or writes is not an effect anybody observes). An alloca already
  placed by set-stack-ptr leaves a gap in the stack, which is harmless.

Regions are swept bottom-up and an instruction's regions before the instruction is judged
again, so one sweep reaches the fixed point: a removed user exposes its operands (defined
earlier, visited later) in the same sweep, and an `if` or `for` whose regions lost their last
side effect is erased right after them.
"""

from __future__ import annotations

from ..ir.dismantle import dismantle
from ..ir.inst import Inst
from ..ir.ops.control import ForInst, IfInst, YieldInst
from ..ir.ops.memory import AllocaInst, LifetimeStopInst
from ..ir.region import Region
from . import fold
from .base import FunctionPass


def _pure_region(region: Region) -> bool:
    return all(isinstance(i, YieldInst) or _pure(i) for i in region.insts)


def _pure(inst: Inst) -> bool:
    return not inst.spec.side_effects and all(_pure_region(r) for r in inst.regions)


def is_dead(inst: Inst) -> bool:
    for r in inst.results:
        if r.uses:
            return False
    if inst.regions:
        return isinstance(inst, (IfInst, ForInst)) and _pure(inst)
    return not inst.spec.side_effects


def _unused_alloca(inst: Inst) -> bool:
    return isinstance(inst, AllocaInst) and all(
        isinstance(u.owner, LifetimeStopInst) for u in inst.result.uses
    )


def _discard(inst: Inst) -> None:
    """Detaches an instruction whose results are unused (the region list is rebuilt later) and
    breaks its reference cycles (ir/dismantle.py)."""
    inst.drop_uses()
    dismantle(inst)


def _inline_branch(inst: Inst, taken: Region) -> list[Inst]:
    """Replaces the `if` by the instructions of its branch `taken`, which are returned."""
    body = taken.insts
    taken.insts = []
    if body and isinstance(body[-1], YieldInst):
        terminator = body.pop()
        for result, value in zip(inst.results, terminator.operands):
            result.replace_all_uses_with(value)
        _discard(terminator)
    _discard(inst)
    return body


def _never_runs(inst: Inst) -> bool:
    lb, ub = fold.known(inst.operand("from")), fold.known(inst.operand("to"))
    return lb is not None and ub is not None and lb >= ub


def simplify_control(inst: Inst) -> list[Inst] | None:
    """Folds an `if` with a constant condition or a `for` that never runs; returns the
    instructions that replace it, or None if inst is neither."""
    if isinstance(inst, IfInst):
        cond = fold.known(inst.operand("condition"))
        if cond is None:
            return None
        return _inline_branch(inst, inst.regions[0 if cond else 1])
    if isinstance(inst, ForInst) and _never_runs(inst):
        for result, init in zip(inst.results, inst.operand_list("iter_init")):
            result.replace_all_uses_with(init)
        _discard(inst)
        return []
    return None


def sweep(region: Region) -> bool:
    """One bottom-up pass over the region and its subregions; True if anything changed. The
    instruction list is rebuilt once, so erasing costs no list search."""
    changed = False
    pending = list(region.insts)  # visited from the end
    kept: list[Inst] = []
    dropped: set[int] = set()  # ids of visited instructions of this region erased afterwards
    while pending:
        inst = pending.pop()
        replacement = simplify_control(inst) if inst.regions else None
        if replacement is not None:
            for moved in replacement:
                moved.parent = region
            pending.extend(replacement)  # the inlined instructions are visited next
            changed = True
        elif is_dead(inst):
            _discard(inst)
            changed = True
        elif _unused_alloca(inst):
            for stop in [u.owner for u in inst.result.uses]:
                # Visited already: in `kept`, or in a swept subregion (whose list is final).
                dropped.add(id(stop))
                if stop.parent is not region and stop in stop.parent.insts:
                    stop.parent.insts.remove(stop)
                _discard(stop)
            _discard(inst)
            changed = True
        else:
            swept = False
            for sub in inst.regions:
                swept |= sweep(sub)
            if swept and is_dead(inst):  # its regions lost their last side effect
                _discard(inst)
            else:
                kept.append(inst)
            changed |= swept
    kept.reverse()
    if dropped:
        kept = [inst for inst in kept if id(inst) not in dropped]
    region.insts = kept
    return changed


class DeadCodeElimination(FunctionPass):
    name = "dead-code-elimination"

    def run(self, func, ctx, out) -> None:
        sweep(func.body)
