"""The default optimisation pipeline that compilation runs before SPIR-V conversion
(docs/design.md §B5). It mutates the program in place, as upstream does.

Steps that need a core info (work-group-size, lower-linalg, lower-foreach) get the compilation
target's, so the subgroup and work-group sizes chosen are ones that device supports.
constant-propagation and dead-code-elimination run only at optimisation level >= 1 (the
context's `opt_level`), right after the first check-ir and again after lower-foreach; asked for
by name (`tinytc-opt -p`), they run at any level. lower-coopmatrix (which unrolls
cooperative_matrix_apply) runs last, before the final check-ir, which checks the lowerings'
work and so runs only with the compiler's self-checks (self_checks.py) or bounds checks. With
the context's bounds_checks flag, insert-bounds-checks runs after insert-barrier and before the
lowerings:
it checks the program's own accesses, not the code the lowerings make, and the writes of its
report record (by one work-item, read by the host only) get no barriers.

A pass that works on instructions of some classes only (the lowerings, the stack passes) is
skipped for a function that holds none of them: the classes present are gathered in one walk
(`census`) instead of each pass walking the function to find nothing. The census is taken again
after the passes that add instructions of new classes (insert-bounds-checks, lower-linalg);
the others add only classes no skipped pass looks for, and what they remove leaves the census
a superset, so a pass is at worst run for nothing, never skipped wrongly.
"""

from __future__ import annotations

import io

from .. import self_checks
from ..errors import CompilationError
from ..ir.enums import OptFlag
from ..ir.nesting import check_nesting
from ..ir.ops.control import ForeachInst, ForeachTileInst
from ..ir.ops.coopmatrix import CoopApplyInst
from ..ir.ops.memory import AllocaInst, LifetimeStopInst
from ..ir.region import Func, Prog
from ..target.core_info import CoreInfo
from .base import FunctionPass
from .check_ir import CheckIr
from .constant_propagation import ConstantPropagation
from .dead_code_elimination import DeadCodeElimination
from .insert_barrier import InsertBarrier
from .insert_bounds_checks import InsertBoundsChecks
from .insert_lifetime_stop import InsertLifetimeStop
from .lower_coopmatrix import LowerCoopmatrix
from .lower_foreach import LowerForeach
from .lower_linalg import LOWERINGS, LowerLinalg
from .set_stack_ptr import SetStackPtr
from .work_group_size import WorkGroupSize


def default_pipeline(
    core_info: CoreInfo,
    opt_level: int = 2,
    bounds_checks: bool = False,
    check_result: bool = True,
    verified: bool = False,
) -> list[FunctionPass]:
    """The passes in upstream order, configured for `core_info` and `opt_level`; with
    `bounds_checks`, insert-bounds-checks runs between insert-barrier and the lowerings; with
    `check_result`, check-ir runs again at the end; with `verified` (the program is as the
    parser verified it), the first check-ir checks only the extensions flag."""

    def optimize() -> list[FunctionPass]:
        return [ConstantPropagation(), DeadCodeElimination()] if opt_level >= 1 else []

    return [
        CheckIr(structure=not verified),
        *optimize(),
        InsertLifetimeStop(),
        SetStackPtr(),
        InsertBarrier(),
        *([InsertBoundsChecks()] if bounds_checks else []),
        WorkGroupSize(core_info),
        LowerLinalg(core_info),
        SetStackPtr(),
        LowerForeach(core_info),
        *optimize(),
        LowerCoopmatrix(core_info),
        *([CheckIr()] if check_result else []),
    ]


WORK: dict[type[FunctionPass], frozenset[type]] = {
    InsertLifetimeStop: frozenset([AllocaInst]),
    SetStackPtr: frozenset([AllocaInst, LifetimeStopInst]),
    LowerLinalg: frozenset(LOWERINGS),
    LowerForeach: frozenset([ForeachInst, ForeachTileInst]),
    LowerCoopmatrix: frozenset([CoopApplyInst]),
}
"""The passes that change nothing in a function without an instruction of these classes (each
the leaf class of its row, so the instruction's own type is compared)."""

NEW_CLASSES: tuple[type[FunctionPass], ...] = (InsertBoundsChecks, LowerLinalg)
"""The passes that may add instructions of classes in WORK (the census is taken again)."""


def census(func: Func) -> set[type]:
    """The classes of the function's instructions, nested ones included."""
    return {type(inst) for inst in func.body.walk()}


def run_default_pipeline(prog: Prog, core_info: CoreInfo, parsed: bool = False) -> None:
    """Runs every pass of the pipeline on every function (skipping a pass with nothing to do,
    see WORK); errors are reported through the program's context (its reporter sees them) and
    raised. `parsed`: the caller hands on the program as the parser returned it, unchanged, so
    the first check-ir need not verify again what the current-language parser verified
    (`Prog.verified_by_parser`; about 2 % of a cold compile)."""
    sink = io.StringIO()
    try:
        check_nesting(prog)
        checked = prog.ctx.optimization_flag(OptFlag.bounds_checks)
        passes = default_pipeline(
            core_info,
            prog.ctx.opt_level,
            checked,
            check_result=checked or self_checks.requested(),
            verified=parsed and prog.verified_by_parser,
        )
        funcs = prog.funcs
        kinds: list[set[type] | None] = [None] * len(funcs)
        for p in passes:
            work = WORK.get(type(p))
            for k, func in enumerate(funcs):
                if work is not None:
                    present = kinds[k]
                    if present is None:
                        present = kinds[k] = census(func)
                    if present.isdisjoint(work):
                        continue
                p.run(func, prog.ctx, sink)
                if isinstance(p, NEW_CLASSES):
                    kinds[k] = None
    except CompilationError as err:
        raise prog.ctx.report(err) from None
