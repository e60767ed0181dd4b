"""Printer of the tensor language. Its output parses back to the same program
(`print(parse(print(p))) == print(p)`): named values keep their names (renamed only where a name
is already visible), unnamed values are numbered per function in text order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..ir.enums import Syntax
from ..ir.inst import Inst
from ..ir.nesting import check_nesting
from ..ir.region import Func, Prog, Region
from ..ir.types import DYNAMIC, dyn_str
from ..ir.values import Value
from . import extension_syntax
from .extension_syntax import print_globals
from .lexer import hex_float_text
from .syntax import modifiers_text

INDENT = "    "


def format_float(value: float) -> str:
    """A floating constant as upstream tinytc prints it: a C hex float (exact, so it reads back
    to the same double), `inf`, `-inf`, `nan` or `-nan` (the sign bit kept for a lossless round
    trip)."""
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return hex_float_text(value)


def format_constant(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, tuple):
        return f"[{format_float(value[0])},{format_float(value[1])}]"
    return format_float(value)


class Printer:
    def __init__(self) -> None:
        self.out: list[str] = []
        self.names: dict[Value, str] = {}
        self.visible: list[set[str]] = []
        self.counter = 0
        self.reserved: dict[Value, str] = {}  # numbers taken by unnamed results ahead of time

    # ---- values -------------------------------------------------------------------------------

    def define(self, value: Value) -> str:
        base = value.name
        if not base:
            name = self.reserved.pop(value, "")
            if not name:
                name = str(self.counter)
                self.counter += 1
        else:
            name, k = base, 0
            while any(name in scope for scope in self.visible):
                k += 1
                name = f"{base}_{k}"
        self.visible[-1].add(name)
        self.names[value] = name
        return "%" + name

    def ref(self, value: Value) -> str:
        return "%" + self.names.get(value, value.name or "<undefined>")

    def ref_operand(self, inst: Inst, key: str) -> str:
        """The name of a required operand (its instruction's constructor checked it is set)."""
        value = inst.operand(key)
        assert value is not None, key
        return self.ref(value)

    def refs(self, values: list[Value], sep: str = ", ") -> str:
        return sep.join(self.ref(v) for v in values)

    # ---- structure ----------------------------------------------------------------------------

    def print_func(self, func: Func) -> None:
        self.names, self.visible, self.counter, self.reserved = {}, [set()], 0, {}
        params = []
        for value, attrs in zip(func.params, func.param_attrs):
            text = f"{self.define(value)}: {value.type}"
            params.append(text + (f" {attrs}" if attrs is not None else ""))
        head = f"func @{func.name}({', '.join(params)})"
        if func.attrs is not None:
            head += f" attributes{func.attrs}"
        self.out.append(head + " {\n")
        self.print_region_body(func.body, 1)
        self.out.append("}\n")

    def print_region_body(self, region: Region, depth: int) -> None:
        for inst in region.insts:
            self.out.append(INDENT * depth)
            self.print_inst(inst, depth)
            self.out.append("\n")

    def region(self, region: Region, depth: int) -> None:
        """Prints '{ ... }' of a region; parameter names must already be defined by the caller."""
        self.out.append("{\n")
        self.print_region_body(region, depth + 1)
        self.out.append(INDENT * depth + "}")

    def print_inst(self, inst: Inst, depth: int) -> None:
        syntax = inst.spec.syntax  # hand-written syntax: its hook
        head = inst.name + modifiers_text(inst.spec.props, inst.props)
        start = len(self.out)
        self.reserve_numbers(inst)
        if syntax is not None:
            PRINT_HOOKS[syntax](self, inst, head, depth)
        else:
            body = self.format_operands(inst)
            self.out.append(head + (" " + body if body else ""))
        if inst.results:
            # Results are defined after the instruction's regions (they are not visible inside)
            # but printed in front of it.
            self.out.insert(start, ",".join(self.define(r) for r in inst.results) + " = ")

    def reserve_numbers(self, inst: Inst) -> None:
        """Upstream's printer numbers unnamed values in this order: an instruction's region
        parameters, then its results, then the instructions inside its regions
        (`%1 = for %0=... init(...)`, `%0 = if ... { %1 = ... }`)."""
        for v in [p for region in inst.regions for p in region.params] + inst.results:
            if not v.name:
                self.reserved[v] = str(self.counter)
                self.counter += 1

    def format_operands(self, inst: Inst) -> str:
        """Renders a regular instruction's operands by walking its format string."""
        text = ""
        in_brackets = False  # upstream separates by "," inside [...] and by ", " elsewhere
        for kind, key in inst.spec.fmt_steps:
            if kind == "type":
                piece = str(inst.results[0].type)
            elif kind == "attrs?":
                piece = str(inst.attrs) if inst.attrs is not None else ""
            elif kind in ("$", "$*"):
                piece = self.refs(inst.operand_list(key), "," if in_brackets else ", ")
            elif kind == "#":
                piece = str(inst.props[key])
            elif kind == "@":
                piece = "@" + inst.props[key]
            else:
                piece = key
                in_brackets = {"[": True, "]": False}.get(key, in_brackets)
            text = _join(text, piece, in_brackets)
        return text

    # ---- hand-written rules -------------------------------------------------------------------

    def print_constant(self, inst: Inst, head: str, depth: int) -> None:
        value = format_constant(inst.props["value"])
        self.out.append(f"{head} {value} : {inst.results[0].type}")

    def print_subview(self, inst: Inst, head: str, depth: int) -> None:
        offs = iter(inst.operand_list("offsets"))
        sizes = iter(inst.operand_list("sizes"))
        slices = []
        for o, s in zip(inst.props["static_offsets"], inst.props["static_sizes"]):
            text = self.ref(next(offs)) if o == DYNAMIC else str(o)
            if s != 0:
                text += ":" + (self.ref(next(sizes)) if s == DYNAMIC else str(s))
            slices.append(text)
        operand = self.ref_operand(inst, "operand")
        self.out.append(f"{head} {operand}[{','.join(slices)}] : {inst.results[0].type}")

    def print_expand(self, inst: Inst, head: str, depth: int) -> None:
        dyn = iter(inst.operand_list("expand_shape"))
        parts = [
            self.ref(next(dyn)) if s == DYNAMIC else dyn_str(s)
            for s in inst.props["static_expand_shape"]
        ]
        # An identifier followed by "x" would lex as a longer identifier (%n x 16 vs %nx16), so
        # the separator gets spaces next to identifiers, as in the reference's examples.
        shape = parts[0]
        for prev, part in zip(parts, parts[1:], strict=False):
            sep = " x " if prev.startswith("%") or part.startswith("%") else "x"
            shape += sep + part
        operand = self.ref_operand(inst, "operand")
        mode = inst.props["expanded_mode"]
        self.out.append(f"{head} {operand}[{mode}->{shape}] : {inst.results[0].type}")

    def close_scope(self) -> None:
        self.visible.pop()

    def print_for(self, inst: Inst, head: str, depth: int) -> None:
        step = inst.operand("step")
        body = inst.regions[0]
        rng = f"{self.ref_operand(inst, 'from')},{self.ref_operand(inst, 'to')}" + (
            f",{self.ref(step)}" if step else ""
        )
        results = inst.results
        init = inst.operand_list("iter_init")
        self.visible.append(set())
        params = [self.define(p) for p in body.params]
        text = f"{head} {params[0]}={rng}"
        if init:
            pairs = ",".join(f"{p}={self.ref(v)}" for p, v in zip(params[1:], init))
            types = ",".join(str(r.type) for r in results)
            text += f" init({pairs}) -> ({types})"
        self.out.append(text + " ")
        self.region(body, depth)
        self.close_scope()
        if inst.attrs is not None:
            self.out.append(f" attributes{inst.attrs}")

    def print_if(self, inst: Inst, head: str, depth: int) -> None:
        text = f"{head} {self.ref_operand(inst, 'condition')}"
        if inst.results:
            text += " -> (" + ",".join(str(r.type) for r in inst.results) + ")"
        self.out.append(text + " ")
        for k, region in enumerate(inst.regions):
            if k == 1:
                if not region.insts:
                    break
                self.out.append(" else ")
            self.visible.append(set())
            self.region(region, depth)
            self.close_scope()

    def print_foreach(self, inst: Inst, head: str, depth: int) -> None:
        body = inst.regions[0]
        self.visible.append(set())
        params = [self.define(p) for p in body.params]
        n = len(inst.operand_list("from"))
        text = (
            f"{head} ({','.join(params[:n])})=({self.refs(inst.operand_list('from'), ',')}),"
            f"({self.refs(inst.operand_list('to'), ',')})"
        )
        if inst.name == "foreach_tile":
            tile = ",".join(str(t) for t in inst.props["tile_shape"])
            text += f" as ({','.join(params[n:])})<=({tile})"
        self.out.append(text + " ")
        self.region(body, depth)
        self.close_scope()

    def print_parallel(self, inst: Inst, head: str, depth: int) -> None:
        self.out.append(head + " ")
        self.visible.append(set())
        self.region(inst.regions[0], depth)
        self.close_scope()

    def print_printf(self, inst: Inst, head: str, depth: int) -> None:
        extension_syntax.print_printf(self, inst, head, depth)

    def print_coop_apply(self, inst: Inst, head: str, depth: int) -> None:
        body = inst.regions[0]
        self.visible.append(set())
        params = [self.define(p) for p in body.params]
        a = self.ref_operand(inst, "a")
        self.out.append(f"{head} ({','.join(params)})={a} -> {inst.results[0].type} ")
        self.region(body, depth)
        self.close_scope()


PRINT_HOOKS: dict[Syntax, Callable[[Printer, Inst, str, int], None]] = {
    Syntax.constant: Printer.print_constant,
    Syntax.subview: Printer.print_subview,
    Syntax.expand: Printer.print_expand,
    Syntax.for_: Printer.print_for,
    Syntax.if_: Printer.print_if,
    Syntax.foreach: Printer.print_foreach,
    Syntax.parallel: Printer.print_parallel,
    Syntax.printf: Printer.print_printf,
    Syntax.coop_apply: Printer.print_coop_apply,
}
"""The print hook of each hand-written syntax (InstSpec.syntax): called with the printer, the
instruction, its mnemonic with modifiers and the nesting depth."""


def _join(text: str, piece: str, in_brackets: bool = False) -> str:
    """Spacing of format tokens: ', ' after commas (',' inside brackets), no space around
    brackets, else one space."""
    if not text:
        return piece
    if piece in (",", "]", ")") or piece == "":
        return text + piece
    if piece == "[" or text.endswith(("[", "(")) or (in_brackets and text.endswith(",")):
        return text + piece
    return text + " " + piece


def print_prog(prog: Prog) -> str:
    check_nesting(prog)
    printer = Printer()
    printer.out.append(print_globals(prog, format_constant))
    for k, func in enumerate(prog.funcs):
        if k:
            printer.out.append("\n")
        printer.print_func(func)
    return "".join(printer.out)


def print_func(func: Func) -> str:
    printer = Printer()
    printer.print_func(func)
    return "".join(printer.out)


class SummaryPrinter(Printer):
    """Prints single instructions of a function on one line each, regions shortened to `{...}`,
    with the names a full print of the function gives (the analysis dumps refer to values this
    way, so their output lines up with dump-ir's)."""

    def __init__(self, func: Func) -> None:
        super().__init__()
        full = Printer()
        full.print_func(func)  # fixes every value's name
        self.names = full.names

    def define(self, value: Value) -> str:
        return self.ref(value)

    def reserve_numbers(self, inst: Inst) -> None:
        """Nothing to number: every value already has its name from the full print."""

    def region(self, region: Region, depth: int) -> None:
        self.out.append("{...}")

    def inst(self, inst: Inst) -> str:
        """`inst` as one line: results, operands, and regions as `{...}`."""
        self.out = []
        self.print_inst(inst, 0)
        return "".join(self.out)
