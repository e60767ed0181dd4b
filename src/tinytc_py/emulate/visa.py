"""Parse the vISA assembly text of an OpAsmINTEL into declarations and instructions.

The grammar followed is the public vISA specification (intel/intel-graphics-compiler,
documentation/visa): `.decl` of general variables (with aliases), instructions
`[(pred)] op[.modifiers] (M1, exec_size) operands`, operands as regions `V(r,c)<v;w,h>`
(destinations `V(r,c)<h>`), raw operands `V.byte_offset`, immediates `value:type`, `%null`,
and the inline-assembly operand references `$k`. Nothing here knows which compiler wrote the
text: anything outside the grammar below is an `UnsupportedConstruct` naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import Status, TinytcError

#: vISA element types: (size in bytes, kind) with kind "s" signed, "u" unsigned, "f" float,
#: "bf" bfloat16
TYPES: dict[str, tuple[int, str]] = {
    "ub": (1, "u"), "b": (1, "s"), "uw": (2, "u"), "w": (2, "s"), "ud": (4, "u"),
    "d": (4, "s"), "uq": (8, "u"), "q": (8, "s"), "hf": (2, "f"), "bf": (2, "bf"),
    "f": (4, "f"), "df": (8, "f"),
}  # fmt: skip


class UnsupportedConstruct(TinytcError):
    """The input uses something the emulator does not implement (named in the message)."""

    def __init__(self, what: str) -> None:
        super().__init__(Status.not_implemented, f"tinytc-emulate: unsupported {what}")
        self.what = what


@dataclass(frozen=True)
class Decl:
    name: str
    type: str
    num_elts: int
    alias: tuple[str, int] | None = None


@dataclass(frozen=True)
class Operand:
    """`var` is a declared name, "$k", or "%null"; for an immediate `var` is "" and `imm`
    holds the value. `byte` is the byte offset of the first element (raw operands and
    regions alike); `region` is (vstride, width, hstride) for sources, (hstride,) for
    destinations, () for raw operands."""

    var: str
    byte: int = 0
    row: int = 0
    col: int = 0
    region: tuple[int, ...] = ()
    imm: int | float | None = None
    type: str | None = None  # of an immediate
    raw: bool = False


@dataclass(frozen=True)
class Instruction:
    op: str
    modifiers: tuple[str, ...]
    exec_size: int
    operands: tuple[Operand, ...]
    text: str


@dataclass
class Program:
    decls: dict[str, Decl] = field(default_factory=dict)
    code: list[Instruction] = field(default_factory=list)


_DECL = re.compile(r"\.decl\s+(\S+)\s+(.*)$")
_INST = re.compile(r"^(?P<op>[a-z_0-9.]+)\s*\(\s*M1\s*,\s*(?P<es>\d+)\s*\)\s*(?P<rest>.*)$")
_REGION = re.compile(r"^(?P<var>[$%]?[\w]+)\((?P<r>\d+),(?P<c>\d+)\)(?:<(?P<reg>[\d;,]+)>)?$")
_RAW = re.compile(r"^(?P<var>[$%]?[\w]+)\.(?P<off>\d+)$")
_IMM = re.compile(r"^(?P<val>-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:e[-+]?\d+)?)):(?P<ty>\w+)$")


def parse(text: str) -> Program:
    prog = Program()
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("//")[0].strip()
        if not line or line in "{}":
            continue
        try:
            if line.startswith(".decl"):
                decl = _parse_decl(line)
                prog.decls[decl.name] = decl
            else:
                prog.code.append(_parse_instruction(line))
        except UnsupportedConstruct as e:
            raise UnsupportedConstruct(f"{e.what} (vISA line {number}: {line!r})") from None
    return prog


def _parse_decl(line: str) -> Decl:
    m = _DECL.match(line)
    if m is None:
        raise UnsupportedConstruct("declaration")
    attrs = dict(kv.split("=", 1) for kv in m.group(2).split() if "=" in kv)
    if attrs.get("v_type") != "G":
        raise UnsupportedConstruct(f"variable kind v_type={attrs.get('v_type')}")
    ty = attrs.get("type", "")
    if ty not in TYPES:
        raise UnsupportedConstruct(f"vISA type {ty!r}")
    alias = None
    if "alias" in attrs:
        am = re.fullmatch(r"<([$%]?\w+),(\d+)>", attrs["alias"])
        if am is None:
            raise UnsupportedConstruct(f"alias {attrs['alias']}")
        alias = (am.group(1), int(am.group(2)))
    return Decl(m.group(1), ty, int(attrs.get("num_elts", "1")), alias)


def _parse_instruction(line: str) -> Instruction:
    if line.startswith("("):
        raise UnsupportedConstruct("predicated instruction")
    m = _INST.match(line)
    if m is None:
        raise UnsupportedConstruct("instruction syntax")
    op, *mods = m.group("op").split(".")
    operands = tuple(_parse_operand(tok) for tok in m.group("rest").split())
    return Instruction(op, tuple(mods), int(m.group("es")), operands, line)


def _parse_operand(tok: str) -> Operand:
    m = _IMM.match(tok)
    if m is not None:
        ty = m.group("ty")
        if ty not in TYPES:
            raise UnsupportedConstruct(f"immediate type {ty!r}")
        val = m.group("val")
        num: int | float = float(val) if TYPES[ty][1] == "f" else int(val, 0)
        return Operand("", imm=num, type=ty)
    m = _RAW.match(tok)
    if m is not None:
        return Operand(m.group("var"), byte=int(m.group("off")), raw=True)
    m = _REGION.match(tok)
    if m is not None:
        region = tuple(int(x) for x in re.split("[;,]", m.group("reg"))) if m.group("reg") else ()
        if region and len(region) not in (1, 3):
            raise UnsupportedConstruct(f"region <{m.group('reg')}>")
        return Operand(m.group("var"), row=int(m.group("r")), col=int(m.group("c")), region=region)
    raise UnsupportedConstruct(f"operand {tok!r}")
