"""The default optimisation pipeline that compilation runs before SPIR-V conversion
(backend.md §5). It mutates the program in place, as upstream does.

Steps that need a core info (work-group-size, lower-foreach) get the compilation target's, so the
subgroup and work-group sizes chosen are ones that device supports. Passes that do not exist yet
(constant-propagation, dead-code-elimination, lower-linalg, lower-coopmatrix) are simply absent
from PIPELINE; add them here, in the upstream order, when they land.
"""

from __future__ import annotations

import io

from ..errors import CompilationError
from ..ir.region import Prog
from ..target.core_info import CoreInfo
from .base import FunctionPass
from .check_ir import CheckIr
from .insert_barrier import InsertBarrier
from .insert_lifetime_stop import InsertLifetimeStop
from .lower_foreach import LowerForeach
from .set_stack_ptr import SetStackPtr
from .work_group_size import WorkGroupSize


def default_pipeline(core_info: CoreInfo) -> list[FunctionPass]:
    """The passes in upstream order, configured for `core_info`."""
    return [
        CheckIr(),
        InsertLifetimeStop(),
        SetStackPtr(),
        InsertBarrier(),
        WorkGroupSize(core_info),
        SetStackPtr(),
        LowerForeach(core_info),
        CheckIr(),
    ]


def run_default_pipeline(prog: Prog, core_info: CoreInfo) -> None:
    """Runs every pass of the pipeline on every function; errors are reported through the
    program's context (its reporter sees them) and raised."""
    sink = io.StringIO()
    try:
        for p in default_pipeline(core_info):
            for func in prog.funcs:
                p.run(func, prog.ctx, sink)
    except CompilationError as err:
        raise prog.ctx.report(err) from None
