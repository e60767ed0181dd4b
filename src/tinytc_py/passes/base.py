"""The interface every function pass implements."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, TextIO

if TYPE_CHECKING:
    from ..ir.context import CompilerContext
    from ..ir.region import Func


class FunctionPass:
    """`name` is what `tinytc-opt -p` and tinytc_run_function_pass accept. Dump passes write to
    `out`; transformation passes change the function in place."""

    name: ClassVar[str]
    dumps: ClassVar[bool] = False

    def run(self, func: Func, ctx: CompilerContext, out: TextIO) -> None:
        raise TypeError(f"pass {self.name} does not implement run")
