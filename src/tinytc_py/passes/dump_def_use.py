"""dump-def-use: lists every value an instruction defines (its results and the parameters of its
regions) with the instructions that use it, as upstream's tinytc-opt prints it:

    Def-use in @f
    > %0 = add %a, %b : f32        (an instruction that defines values or holds regions)
      def %0                       (each value it defines)
        > store %0, %A[]           (each use of that value, the newest use first)

Instructions with regions show them as `{...}`; the function's parameters are not listed.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..ir.values import Value
from ..text.printer import SummaryPrinter
from .base import FunctionPass
from .dump_values import dump_values


def _def_use(printer: SummaryPrinter, value: Value) -> Iterator[str]:
    yield f"  def {printer.ref(value)}"
    # The newest use first (for parsed code: the last in program order), as upstream.
    for use in reversed(list(value.uses)):
        yield f"    > {printer.inst(use.owner)}"


class DumpDefUse(FunctionPass):
    name = "dump-def-use"
    dumps = True

    def run(self, func, ctx, out) -> None:
        dump_values(func, out, "Def-use", _def_use)
