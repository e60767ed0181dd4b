"""check-ir: the full structural verification of a function (see ir/verify.py)."""

from __future__ import annotations

from ..ir.verify import verify_func
from .base import FunctionPass


class CheckIr(FunctionPass):
    name = "check-ir"

    def run(self, func, ctx, out) -> None:
        verify_func(func)
