"""dump-def-use: lists every value an instruction defines (its results and the parameters of its
regions) with the instructions that use it, as upstream's tinytc-opt prints it:

    Def-use in @f
    > %0 = add %a, %b : f32        (an instruction that defines values or holds regions)
      def %0                       (each value it defines)
        > store %0, %A[]           (each use of that value, the newest use first)

Instructions with regions show them as `{...}`; the function's parameters are not listed.
"""

from __future__ import annotations

from ..text.printer import SummaryPrinter
from .base import FunctionPass


class DumpDefUse(FunctionPass):
    name = "dump-def-use"
    dumps = True

    def run(self, func, ctx, out) -> None:
        printer = SummaryPrinter(func)
        out.write(f"Def-use in @{func.name}\n")
        for inst in func.body.walk():
            if not inst.results and not inst.regions:
                continue
            out.write(f"> {printer.inst(inst)}\n")
            for value in [*inst.results, *(p for r in inst.regions for p in r.params)]:
                out.write(f"  def {printer.ref(value)}\n")
                # The newest use first (for parsed code: the last in program order), as upstream.
                for use in reversed(list(value.uses)):
                    out.write(f"    > {printer.inst(use.owner)}\n")
        out.write("\n")
