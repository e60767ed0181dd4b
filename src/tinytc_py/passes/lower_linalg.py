"""lower-linalg: every linear-algebra instruction (axpby, cumsum, sum, gemm, gemv, ger, hadamard)
is replaced in place by code built from scalar, subgroup and cooperative-matrix instructions
(docs/design.md §B4). The pieces live by subject:

- lower_linalg_common.py: the generator context and the common BLAS update (§B4.1);
- lower_linalg_elementwise.py: foreach-based lowerings (axpby 1-d/2-d, ger, hadamard, gemv,
  sum to a vector, cumsum along a mode != 0);
- lower_linalg_collective.py: parallel regions with subgroup operations and SLM (axpby to a
  scalar, sum to a scalar, cumsum along mode 0);
- lower_linalg_gemm.py: the register-blocked cooperative-matrix GEMM micro-kernel (§B4.2).

The pass reads S and (m_tiles, n_tiles) = (W0/S, W1) from the function attributes (computing
them with work-group-size first when absent). Allocas it creates come with their lifetime_stop;
set-stack-ptr places them afterwards.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import CompilationError
from ..ir.dismantle import dismantle
from ..ir.inst import Inst
from ..ir.ops.blas import (
    AxpbyInst,
    CumsumInst,
    GemmInst,
    GemvInst,
    GerInst,
    HadamardInst,
    SumInst,
)
from ..ir.types import as_memref
from ..target.core_info import CoreInfo
from . import lower_linalg_collective as collective
from . import lower_linalg_elementwise as elementwise
from .base import FunctionPass
from .lower_linalg_common import LinalgGen
from .lower_linalg_gemm import gemm
from .pass_builder import PassBuilder
from .work_group_size import ensure_sizes


def _axpby(g: LinalgGen) -> None:
    if as_memref(g.op("B").type).order == 0:
        collective.axpby_scalar(g)
    else:
        elementwise.axpby(g)


def _sum(g: LinalgGen) -> None:
    if as_memref(g.op("B").type).order == 0:
        collective.sum_to_scalar(g)
    else:
        elementwise.sum_to_vector(g)


def _cumsum(g: LinalgGen) -> None:
    if g.inst.props["mode"] != 0:
        elementwise.cumsum_sequential(g)
    elif as_memref(g.op("A").type).order == 1:
        collective.cumsum_workgroup(g)
    else:
        collective.cumsum_columns(g)


LOWERINGS: dict[type[Inst], Callable[[LinalgGen], None]] = {
    AxpbyInst: _axpby,
    CumsumInst: _cumsum,
    SumInst: _sum,
    GemmInst: gemm,
    GemvInst: elementwise.gemv,
    GerInst: elementwise.ger,
    HadamardInst: elementwise.hadamard,
}
"""The lowering of each linear-algebra instruction class (each the class of one row)."""


class LowerLinalg(FunctionPass):
    name = "lower-linalg"

    def __init__(self, core_info: CoreInfo | None = None) -> None:
        self.info = core_info or CoreInfo.default()

    def run(self, func, ctx, out) -> None:
        sgs, wgs = ensure_sizes(func, ctx, out, self.info)
        m_tiles, n_tiles = wgs[0] // sgs, wgs[1]
        for inst in [i for i in func.body.walk() if type(i) in LOWERINGS]:
            self._replace(inst, ctx, sgs, m_tiles, n_tiles)

    def _replace(self, inst: Inst, ctx, sgs: int, m_tiles: int, n_tiles: int) -> None:
        """Builds the lowering at the end of inst's region, then moves it to inst's place."""
        region = inst.parent
        start = len(region.insts)
        b = PassBuilder(ctx, region)
        try:
            LOWERINGS[type(inst)](LinalgGen(b, inst, sgs, m_tiles, n_tiles, self.info))
        except CompilationError:
            for partial in region.insts[start:]:
                partial.drop_uses()
            del region.insts[start:]
            raise
        new = region.insts[start:]
        del region.insts[start:]
        pos = region.insts.index(inst)
        region.insts[pos:pos] = new
        region.erase(inst)
        dismantle(inst)
