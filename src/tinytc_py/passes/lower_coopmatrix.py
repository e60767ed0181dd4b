"""lower-coopmatrix: unrolls every cooperative_matrix_apply over the components of the
work-item's part of the matrix (docs/design.md §B3.3, last bullet; pipeline step 13).

With the layout of §B3.1 (I, J, K, K1, V for the result type and the subgroup size S), component
v of lane p holds row `p % I + (k1 + k2*K1)*I` and column `p / I + u*(S/I)`, where
k1 = v % K1, u = v / K1 % (V/K), k2 = v / (K1*V/K). For each v the body is cloned with its
parameters bound to (row, col, cooperative_matrix_extract %a[v]); the yielded value goes back
with cooperative_matrix_insert. A component whose column can be padding ((u+1)*(S/I) > N) runs
its clone under `if col < N` and yields 0 otherwise. The replacement is placed where the apply
was; nested applies are lowered innermost first.

The code is emitted as upstream tinytc emits it, so that its printed IR matches: after the
lane's row and column base, each component computes its row (an add only for an offset) and
its column (always base + constant) afresh, and the body's copies are unnamed. Nothing is
shared between components: SPIR-V constants are unique anyway, and the repeated additions
are left to the driver's compiler.

The layout arithmetic is shared with the SPIR-V conversion (analysis/coopmatrix_layout.py),
so the two agree on what component v means. A function without subgroup_size gets it from
work-group-size first.
"""

from __future__ import annotations

from ..analysis.coopmatrix_layout import coop_layout
from ..errors import Status
from ..ir.dismantle import dismantle
from ..ir.inst import Inst
from ..ir.ops.coopmatrix import CoopApplyInst
from ..ir.types import as_coopmatrix
from ..ir.values import Value
from .base import FunctionPass
from .clone import clone_inst, clone_region
from .pass_builder import PassBuilder
from .work_group_size import ensure_sizes


class LowerCoopmatrix(FunctionPass):
    name = "lower-coopmatrix"

    def __init__(self, core_info=None) -> None:
        self.info = core_info

    def run(self, func, ctx, out) -> None:
        applies = [i for i in func.body.walk() if isinstance(i, CoopApplyInst)]
        if not applies:
            return
        sgs, _ = ensure_sizes(func, ctx, out, self.info)
        for inst in reversed(applies):  # pre-order reversed: inner applies first
            lower_apply(PassBuilder(ctx, inst.parent), inst, sgs)


def lower_apply(b: PassBuilder, inst: Inst, sgs: int) -> None:
    region = inst.parent
    start = len(region.insts)
    ct = as_coopmatrix(inst.results[0].type)
    lay = coop_layout(ct, sgs)
    if lay is None:
        raise inst.error(
            Status.ir_unsupported_coopmatrix_shape,
            f"{ct}: the number of rows must be a power of two",
        )
    i32 = b.ctx.i32

    def const(x: int) -> Value:
        return b.constant(x, i32, loc=inst.loc)

    def binary(op: str, x: Value, y: Value) -> Value:
        return b.value(op, {"a": x, "b": y}, None, None, inst.loc)

    lane = b.value("subgroup_local_id", {}, None, i32, inst.loc)
    prow: Value = lane
    pcol: Value | None = None
    if sgs > lay.I:
        rows_const = const(lay.I)
        prow = binary("rem", lane, rows_const)
        pcol = binary("div", lane, rows_const)
    body = inst.regions[0]
    p_row, p_col, p_val = body.params
    a = inst.operand("a")
    result = a
    for v in range(lay.V):
        block, u = lay.block_col(v)
        row = prow if block == 0 else binary("add", prow, const(block * lay.I))
        col = const(u * lay.col_step)
        if pcol is not None:
            col = binary("add", pcol, col)
        x = b.value("cooperative_matrix_extract", {"mat": a}, {"index": v}, None, inst.loc)
        vmap: dict[Value, Value] = {p_row: row, p_col: col, p_val: x}
        if lay.may_pad(u):
            inside = binary("less_than", col, const(lay.cols))
            scope = b.if_(inside, [ct.component], loc=inst.loc)
            then_r, else_r = scope.inst.regions
            clone_region(b, body, then_r, vmap, named=False)  # its yield becomes the if's yield
            saved = b.region
            b.region = else_r
            b.yield_(b.constant(0, ct.component, loc=inst.loc), loc=inst.loc)
            b.region = saved
            y = scope.inst.results[0]
        else:
            *insts, last = body.insts
            for i in insts:
                clone_inst(b, i, vmap, named=False)
            yielded = last.operand_list("yielded_vals")[0]
            y = vmap.get(yielded, yielded)
        operands = {"val": y, "mat": result}
        result = b.value("cooperative_matrix_insert", operands, {"index": v}, None, inst.loc)
    inst.results[0].replace_all_uses_with(result)
    new = region.insts[start:]
    del region.insts[start:]
    at = region.insts.index(inst)
    region.insts[at:at] = new
    region.erase(inst)
    dismantle(inst)
