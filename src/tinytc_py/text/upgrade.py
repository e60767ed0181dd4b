"""Rewrites legacy tensor-language text (tinytc v0.3, or yateto's transitional forms) in the
current language: the program is read by the legacy front end and printed by the current
printer, with the source's comments put back next to the instructions they annotated.

The result starts with a `; upgraded from ...` header and carries one `; note:` line per
construct whose meaning or signature changes (the same notes are returned, located, for the
command line to report). It is parsed again as current-language text before it is returned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import CompilationError, Location, Status
from ..ir.context import CompilerContext
from ..ir.inst import Inst
from ..ir.region import Func, Region
from ..ir.values import Value
from .legacy_parser import LegacyParser
from .parser import Parser
from .printer import INDENT, Printer

_COMMENT = re.compile(r";[^\n]*")


@dataclass
class Upgraded:
    text: str
    notes: list[tuple[Location, str]]


class CommentPrinter(Printer):
    """The current printer plus the source's comments: a comment on an instruction's lines ends
    that instruction's line, any other comment gets a line of its own before what follows it."""

    def __init__(self, comments: dict[int, str], immediates: set[Value]) -> None:
        super().__init__()
        self.comments = comments  # source line -> comment text (without ';')
        self.immediates = immediates

    def flush(self, before_line: int, depth: int) -> None:
        for line in sorted(k for k in self.comments if k < before_line):
            self.out.append(f"{INDENT * depth};{self.comments.pop(line)}\n")

    def print_func(self, func: Func) -> None:
        self.flush(func.loc.begin.line, 0)
        super().print_func(func)

    def print_region_body(self, region: Region, depth: int) -> None:
        for inst in region.insts:
            self.flush(inst.loc.begin.line, depth)
            self.out.append(INDENT * depth)
            self.print_inst(inst, depth)
            trailing = self.trailing(inst)
            self.out.append(f" ;{trailing}\n" if trailing else "\n")
        self.flush(region.loc.end.line + 1, depth)

    def trailing(self, inst: Inst) -> str:
        """The comments on the lines of an instruction without regions (not of a constant that
        stands for an immediate: the comment belongs to the instruction using it)."""
        if inst.regions or any(r in self.immediates for r in inst.results):
            return ""
        lines = range(inst.loc.begin.line, inst.loc.end.line + 1)
        return " ;".join(self.comments.pop(k) for k in lines if k in self.comments)


def comments_by_line(text: str) -> dict[int, str]:
    """Comments of a source (the legacy language has no strings, so ';' always starts one),
    by line as the lexer numbers them: only "\n" starts one (a CRLF line's "\r" is not
    part of its comment)."""
    found = {}
    for number, line in enumerate(text.split("\n"), 1):
        m = _COMMENT.search(line.removesuffix("\r"))
        if m:
            found[number] = m.group(0)[1:]
    return found


def upgrade(text: str, name: str = "<stdin>", ctx: CompilerContext | None = None) -> Upgraded:
    """The current-language text of a legacy program; raises (reported) CompilationError."""
    ctx = ctx or CompilerContext()
    parser = LegacyParser(ctx, text, name)
    try:
        prog = parser.parse_prog()
    except CompilationError as err:
        raise ctx.report(err) from None
    printer = CommentPrinter(comments_by_line(text), parser.immediates)
    for k, func in enumerate(prog.funcs):
        if k:
            printer.out.append("\n")
        printer.print_func(func)
    printer.flush(text.count("\n") + 2, 0)
    header = [f"; upgraded from {name} (legacy tensor language) by tinytc-upgrade\n"]
    for loc, note in parser.notes:
        header.append(f"; note: {loc.begin.line}.{loc.begin.column}: {note}\n")
    result = "".join(header + printer.out)
    check = CompilerContext()
    try:
        Parser(check, result, "<upgraded>").parse_prog()
    except CompilationError as err:
        detail = f"the upgraded program does not parse: {check.format(err)}"
        raise CompilationError(prog.loc, Status.internal_compiler_error, detail) from None
    return Upgraded(result, parser.notes)
