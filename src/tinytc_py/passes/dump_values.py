"""The layout the analysis dumps (dump-def-use, dump-gcd) share, as upstream's tinytc-opt prints
them: a title line, then each instruction that defines values or holds regions on one line
(`> %0 = add %a, %b : f32`, regions shortened to `{...}`), each followed by the lines a dump
writes about the values it defines (its results, then its regions' parameters); a blank line
ends the function. Values are named as a full print of the function names them, so the lines
match dump-ir's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TextIO

from ..ir.region import Func
from ..ir.values import Value
from ..text.printer import SummaryPrinter

#: The lines a dump writes about one value.
Describe = Callable[[SummaryPrinter, Value], Iterable[str]]


def dump_values(
    func: Func, out: TextIO, title: str, describe: Describe, with_params: bool = False
) -> None:
    """Writes `title in @name`, then (with_params) the lines about each function parameter,
    then every defining instruction with the lines about the values it defines."""
    printer = SummaryPrinter(func)
    out.write(f"{title} in @{func.name}\n")
    for param in func.params if with_params else ():
        out.writelines(line + "\n" for line in describe(printer, param))
    for inst in func.body.walk():
        if not inst.results and not inst.regions:
            continue
        out.write(f"> {printer.inst(inst)}\n")
        for value in [*inst.results, *(p for r in inst.regions for p in r.params)]:
            out.writelines(line + "\n" for line in describe(printer, value))
    out.write("\n")
