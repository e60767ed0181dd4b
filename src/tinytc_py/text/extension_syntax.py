"""Text syntax of the language extensions that the format strings of the instruction table cannot
express: `printf "format", %a, ...` (a string and a list without closing bracket) and the
program-level `global @name : memref<...> = dense<[v, ...]>` definitions (docs/extensions.md).
The parser and printer call these functions; they keep the parser's conventions (located
errors, `expect`/`accept` on the cursor).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import CompilationError
from ..ir.enums import OptFlag
from ..ir.extensions import check_extension, disabled_error
from ..ir.global_data import add_global, make_global
from . import lexer as lx

if TYPE_CHECKING:
    from ..ir.inst import Inst
    from ..ir.region import Prog
    from .parser import Parser
    from .printer import Printer


def parse_string(parser: Parser) -> str:
    m = parser.c.match(lx.STRING)
    if not m:
        raise parser.c.error('expected string ("...")')
    return m.group(1)


def parse_global_name(parser: Parser) -> str:
    name = parser.c.name("@")
    if name is None:
        raise parser.c.error("expected global name (@name)")
    return name


def parse_printf(parser: Parser, cls: type[Inst], props: dict[str, Any], begin: int) -> Inst:
    c = parser.c
    props["format"] = parse_string(parser)
    args = []
    end = c.pos  # the location ends at the last argument, not at the next line's token
    while c.accept(","):
        args.append(parser.parse_value())
        end = c.pos
    return cls({"args": args}, props, None, c.loc(begin, end))


def print_printf(printer: Printer, inst: Inst, head: str, depth: int) -> None:
    args = "".join(", " + printer.ref(v) for v in inst.operand_list("args"))
    printer.out.append(f'{head} "{inst.props["format"]}"{args}')


def parse_global(parser: Parser, prog: Prog) -> None:
    """global @name : memref<...> = dense<[v, ...]>; `global` has been peeked."""
    c = parser.c
    begin = c.skip()
    c.expect("global")
    if not parser.ctx.optimization_flag(OptFlag.extensions):
        raise disabled_error(c.loc(begin), "'global'")
    name = parse_global_name(parser)
    c.expect(":")
    ty = parser.parse_type()
    c.expect("=")
    c.expect("dense")
    c.expect("<")
    c.expect("[")
    values: list[Any] = []
    value_locs = []
    if not c.accept("]"):
        while True:
            value_begin = c.skip()
            values.append(parser.parse_constant_value())
            value_locs.append(c.loc(value_begin))
            if c.accept("]"):
                break
            c.expect(",", "',' or ']'")
    c.expect(">")
    add_global(prog, make_global(name, ty, values, c.loc(begin), value_locs))


def print_globals(prog: Prog, format_constant) -> str:
    """The program's global definitions, each on a line, then an empty line."""
    lines = []
    for g in prog.globals.values():
        values = ", ".join(format_constant(v) for v in g.values)
        lines.append(f"global @{g.name} : {g.type} = dense<[{values}]>\n")
    return "".join(lines) + ("\n" if lines else "")


def check_parsed_extension(parser: Parser, inst: Inst) -> None:
    """The extension checks of ir/extensions.py (a global_ref sees the globals defined above)."""
    try:
        check_extension(inst, parser.ctx, parser.prog)
    except CompilationError:
        inst.drop_uses()
        raise
