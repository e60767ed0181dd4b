"""The one table of function passes by name (serves tinytc-opt -p and the C API's pass list)."""

from __future__ import annotations

import sys
from typing import TextIO

from ..errors import Status, TinytcError
from ..ir.nesting import check_nesting
from ..ir.region import Prog
from .base import FunctionPass
from .check_ir import CheckIr
from .constant_propagation import ConstantPropagation
from .dead_code_elimination import DeadCodeElimination
from .dump_def_use import DumpDefUse
from .dump_gcd import DumpGcd
from .dump_ir import DumpIr
from .insert_barrier import InsertBarrier
from .insert_bounds_checks import InsertBoundsChecks
from .insert_lifetime_stop import InsertLifetimeStop
from .lower_coopmatrix import LowerCoopmatrix
from .lower_foreach import LowerForeach
from .lower_linalg import LowerLinalg
from .set_stack_ptr import SetStackPtr
from .work_group_size import WorkGroupSize

PASSES: dict[str, type[FunctionPass]] = {cls.name: cls for cls in (CheckIr, DumpIr)}
PASSES[ConstantPropagation.name] = ConstantPropagation
PASSES[DeadCodeElimination.name] = DeadCodeElimination
PASSES[DumpDefUse.name] = DumpDefUse
PASSES[DumpGcd.name] = DumpGcd
PASSES[InsertBarrier.name] = InsertBarrier
PASSES[InsertBoundsChecks.name] = InsertBoundsChecks
PASSES[InsertLifetimeStop.name] = InsertLifetimeStop
PASSES[LowerCoopmatrix.name] = LowerCoopmatrix
PASSES[LowerForeach.name] = LowerForeach
PASSES[LowerLinalg.name] = LowerLinalg
PASSES[SetStackPtr.name] = SetStackPtr
PASSES[WorkGroupSize.name] = WorkGroupSize


def get_pass(name: str) -> FunctionPass:
    cls = PASSES.get(name)
    if cls is None:
        raise TinytcError(Status.unknown_pass_name, f"unknown pass name '{name}'")
    return cls()


def run_function_pass(name: str, prog: Prog, out: TextIO | None = None) -> None:
    """Runs a pass on every function of the program; errors go through the context's reporter."""
    from ..errors import CompilationError

    p = get_pass(name)
    try:
        check_nesting(prog)
        for func in prog.funcs:
            p.run(func, prog.ctx, out or sys.stdout)
    except CompilationError as err:
        raise prog.ctx.report(err) from None
