"""check-ir: the full structural verification of a function (see ir/verify.py), and the
rejection of language extensions when the context's extensions flag is off.

The pipeline's first check-ir skips the structural part for a program just parsed, which the
parser verified (passes/pipeline.py); the extensions flag is checked still, as it may have
been turned off after the parse (the C API and `tinytc_py.compile` set options on the parsed
program's context)."""

from __future__ import annotations

from ..ir.enums import OptFlag
from ..ir.extensions import check_enabled
from ..ir.verify import verify_func
from .base import FunctionPass


class CheckIr(FunctionPass):
    name = "check-ir"

    def __init__(self, structure: bool = True) -> None:
        self.structure = structure

    def run(self, func, ctx, out) -> None:
        if self.structure:
            verify_func(func)
        if not ctx.optimization_flag(OptFlag.extensions):
            for inst in func.body.walk():
                check_enabled(inst, ctx)
