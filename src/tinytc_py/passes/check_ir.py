"""check-ir: the full structural verification of a function (see ir/verify.py), and the
rejection of language extensions when the context's extensions flag is off."""

from __future__ import annotations

from ..ir.enums import OptFlag
from ..ir.extensions import check_enabled
from ..ir.verify import verify_func
from .base import FunctionPass


class CheckIr(FunctionPass):
    name = "check-ir"

    def run(self, func, ctx, out) -> None:
        verify_func(func)
        if not ctx.optimization_flag(OptFlag.extensions):
            for inst in func.body.walk():
                check_enabled(inst, ctx)
