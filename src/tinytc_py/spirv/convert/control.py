"""Structured control flow: `if` (OpSelectionMerge, OpPhi in the merge block), `for` (header
with OpPhi for the loop variable and carried values, OpLoopMerge, continue and merge blocks) and
`parallel`."""

from __future__ import annotations

from ...errors import CompilationError, Status
from ...ir.attrs import BooleanAttr, IntegerAttr
from ...ir.inst import Inst
from ...ir.ops.control import ForInst, IfInst, ParallelInst
from ..tables import (
    LoopControl,
    Op,
    SelectionControl,
)
from .base import ConverterBase, HandlerRows


class ControlFlowConversion(ConverterBase):
    # ---- control flow -------------------------------------------------------------------------

    def parallel(self, inst: Inst) -> None:
        self.region(inst.regions[0])

    def if_(self, inst: Inst) -> None:
        m = self.mod
        cond = self.val(inst.operand("condition"), inst)
        then_r, else_r = inst.regions
        then_l, merge_l = m.new_id(), m.new_id()
        else_l = m.new_id() if else_r.insts else merge_l
        self.block.emit(Op.SelectionMerge, merge_l, SelectionControl.None_)
        self.block.emit(Op.BranchConditional, cond, then_l, else_l)
        incoming: list[tuple[list[int | list[int]], int]] = []
        start = self.block.label
        for region, label in ((then_r, then_l), (else_r, else_l)):
            if label == merge_l:
                incoming.append(([], start))
                continue
            self.block = self.fn.add_block(label)
            yielded = self.region(region)
            incoming.append((yielded, self.block.label))
            self.block.emit(Op.Branch, merge_l)
        self.block = self.fn.add_block(merge_l)
        for k, r in enumerate(inst.results):
            if any(len(vals) <= k for vals, _ in incoming):
                raise CompilationError(inst.loc, Status.ir_yield_mismatch, "missing yield")
            pairs = [(vals[k], lbl) for vals, lbl in incoming]
            self.values[r] = self.phi(self.block, r.type, inst, pairs)

    def for_(self, inst: Inst) -> None:
        m = self.mod
        frm = self.val(inst.operand("from"), inst)
        to = self.val(inst.operand("to"), inst)
        lty = inst.operand("from").type
        ity = self.ty(lty)
        step_v = inst.operand("step")
        step = self.val(step_v, inst) if step_v is not None else m.constant(ity, 1)
        init = [self.any_val(v, inst) for v in inst.operand_list("iter_init")]
        pre = self.block
        header_l, body_l, cont_l, merge_l = (m.new_id() for _ in range(4))
        pre.emit(Op.Branch, header_l)
        header = self.fn.add_block(header_l)
        iv, iv_next = m.new_id(), m.new_id()
        carried = [self.fresh_ids(r.type, inst) for r in inst.results]
        body = inst.regions[0]
        self.values[body.params[0]] = iv
        for p, c in zip(body.params[1:], carried):
            self.values[p] = c
        self.block = self.fn.add_block(body_l)
        yielded = self.region(body)
        if len(yielded) != len(carried):
            raise CompilationError(
                inst.loc, Status.ir_yield_mismatch, "loop yields the wrong count"
            )
        self.block.emit(Op.Branch, cont_l)
        cont = self.fn.add_block(cont_l)
        cont.op(Op.IAdd, ity, iv, step, result_id=iv_next)
        cont.emit(Op.Branch, header_l)
        header.op(Op.Phi, ity, frm, pre.label, iv_next, cont_l, result_id=iv)
        for r, c, i0, y in zip(inst.results, carried, init, yielded):
            self.phi(header, r.type, inst, [(i0, pre.label), (y, cont_l)], result=c)
        cond = header.op(Op.SLessThan, m.type_bool(), iv, to)
        header.emit(Op.LoopMerge, merge_l, cont_l, *loop_control(inst))
        header.emit(Op.BranchConditional, cond, body_l, merge_l)
        for r, c in zip(inst.results, carried):
            self.values[r] = c
        self.block = self.fn.add_block(merge_l)


def loop_control(inst: Inst) -> tuple[int, ...]:
    unroll = inst.attrs.get("unroll") if inst.attrs is not None else None
    if isinstance(unroll, BooleanAttr):
        return (LoopControl.Unroll if unroll.value else LoopControl.DontUnroll,)
    if isinstance(unroll, IntegerAttr) and unroll.value > 0:
        return (LoopControl.PartialCount, unroll.value)
    return (LoopControl.None_,)


HANDLERS: HandlerRows = (
    (ParallelInst, False, "parallel"),
    (IfInst, False, "if_"),
    (ForInst, False, "for_"),
)
"""The instructions ControlFlowConversion converts: (instruction class, coopmatrix result only, method)."""
