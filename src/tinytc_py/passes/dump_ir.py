"""dump-ir: prints the function as tensor-language text."""

from __future__ import annotations

from ..text.printer import print_func
from .base import FunctionPass


class DumpIr(FunctionPass):
    name = "dump-ir"
    dumps = True

    def run(self, func, ctx, out) -> None:
        out.write(print_func(func))
