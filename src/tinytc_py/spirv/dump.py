"""Text dump of a SPIR-V binary in the style of `spirv-dis --raw-id` (docs/design.md §B6.5).

Used by `tinytc -S`, FileCheck tests and error messages. It decodes the binary with the
generated grammar tables rather than printing from the module model, so what is shown is what
the driver gets. Format: one instruction per line; `%id = ` right-aligned to end in column 15
(instructions without a result are indented 15 spaces); enums by SPIR-V name, masks as `A|B`;
integers unsigned decimal (signed for int types declared signed); floats, halves and doubles as
C hexfloats (`0x1.8p+0`); strings quoted; OpenCL.std instructions by name.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from ..text.lexer import hex_float_text
from .assembler import GENERATOR, to_words, words_from_binary
from .module import Module, iter_instructions
from .tables import (
    COMPOSITE_PARTS,
    ENUM_NAMES,
    ENUM_PARAMS,
    MAGIC_NUMBER,
    OP_NAMES,
    OPENCL_STD_NAMES,
    OPENCL_STD_OPERANDS,
    OPERAND_CATEGORIES,
    OPERANDS,
    Op,
)

_ID_KINDS = frozenset({"IdResultType", "IdRef", "IdScope", "IdMemorySemantics"})
_FLOAT_LAYOUT = {16: ("<e", 10), 32: ("<f", 23), 64: ("<d", 52)}


def hexfloat(bits: int, width: int) -> str:
    """C `%a` spelling of an IEEE float bit pattern; inf/NaN as spirv-dis writes them."""
    fmt, mantissa_bits = _FLOAT_LAYOUT[width]
    exponent_bits = width - 1 - mantissa_bits
    mantissa = bits & ((1 << mantissa_bits) - 1)
    sign = "-" if bits >> (width - 1) else ""
    if (bits >> mantissa_bits) & ((1 << exponent_bits) - 1) == (1 << exponent_bits) - 1:
        shift = -mantissa_bits % 4
        digits = f"{mantissa << shift:0{(mantissa_bits + shift) // 4}x}".rstrip("0")
        return f"{sign}0x1{'.' + digits if digits else ''}p+{1 << (exponent_bits - 1)}"
    return hex_float_text(struct.unpack(fmt, bits.to_bytes(width // 8, "little"))[0])


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _Disassembler:
    """Decodes instructions one by one, remembering what later operands depend on."""

    def __init__(self, words: Sequence[int]) -> None:
        self.words = words
        self.scalar_types: dict[int, tuple[int, int, int]] = {}  # id -> (opcode, width, sign)
        self.value_types: dict[int, int] = {}
        self.ext_sets: dict[int, str] = {}
        self.pos = 0
        self.end = 0
        self.number_type: tuple[int, int, int] | None = None

    def instruction(self, opcode: int, offset: int, count: int) -> str:
        self.pos, self.end = offset + 1, offset + count
        kinds = OPERANDS.get(opcode)
        if kinds is None:
            raw = " ".join(str(w) for w in self.words[self.pos : self.end])
            return f"{'':15}OpUnknown{opcode} {raw}".rstrip()
        result_type = result = 0
        if kinds[:1] == ("IdResultType",):
            result_type, kinds = self.words[self.pos], kinds[1:]
            self.pos += 1
        if kinds[:1] == ("IdResult",):
            result, kinds = self.words[self.pos], kinds[1:]
            self.pos += 1
        start = self.pos
        self._context(opcode, result_type)
        text = " ".join(([f"%{result_type}"] if result_type else []) + self.operands(kinds))
        self._remember(opcode, start, result, result_type)
        line = f"{OP_NAMES[opcode]} {text}".rstrip()
        if result:
            return f"{'%' + str(result):>12} = {line}"
        return f"{'':15}{line}"

    def _context(self, opcode: int, result_type: int) -> None:
        """The type that gives context-dependent literals (OpConstant, OpSwitch) their width."""
        self.number_type = None
        if opcode in (Op.Constant, Op.SpecConstant):
            self.number_type = self.scalar_types.get(result_type)
        elif opcode == Op.Switch:
            selector_type = self.value_types.get(self.words[self.pos], 0)
            self.number_type = self.scalar_types.get(selector_type)

    def _remember(self, opcode: int, start: int, result: int, result_type: int) -> None:
        """Record what later instructions' operands depend on (scalar widths, ext sets)."""
        if opcode == Op.TypeInt:
            self.scalar_types[result] = (opcode, self.words[start], self.words[start + 1])
        elif opcode == Op.TypeFloat:
            self.scalar_types[result] = (opcode, self.words[start], 0)
        elif opcode == Op.ExtInstImport:
            self.ext_sets[result] = self._string_at(start)
        if result_type:
            self.value_types[result] = result_type

    def operands(self, kinds: Sequence[str]) -> list[str]:
        out: list[str] = []
        pending = list(reversed(kinds))
        while pending:
            spec = pending.pop()
            if spec[-1] in "?*":
                if self.pos >= self.end:
                    continue
                if spec[-1] == "*":
                    pending.append(spec)
                spec = spec[:-1]
            out.append(self.operand(spec, pending))
        return out

    def operand(self, kind: str, pending: list[str]) -> str:
        """Format one operand of `kind`; may push follow-up kinds (enum parameters) on pending."""
        if kind in _ID_KINDS:
            self.pos += 1
            return f"%{self.words[self.pos - 1]}"
        category = OPERAND_CATEGORIES[kind]
        if category == "ValueEnum":
            value = self._word()
            pending.extend(reversed(ENUM_PARAMS.get(kind, {}).get(value, ())))
            return ENUM_NAMES[kind].get(value, str(value))
        if category == "BitEnum":
            return self._mask(kind, self._word(), pending)
        if category == "Composite":
            first, second = COMPOSITE_PARTS[kind]
            if first == "LiteralInteger" and self.number_type is not None:
                first = "LiteralContextDependentNumber"
            pending.extend((second, first))
            return self.operand(pending.pop(), pending)
        return self._literal(kind, pending)

    def _literal(self, kind: str, pending: list[str]) -> str:
        if kind == "LiteralString":
            text = self._string_at(self.pos)
            self.pos += len(text.encode()) // 4 + 1
            return _quote(text)
        if kind == "LiteralContextDependentNumber":
            return self._number()
        if kind == "LiteralExtInstInteger":
            number = self._word()
            if self.ext_sets.get(self.words[self.pos - 2]) != "OpenCL.std":
                return str(number)
            if number in OPENCL_STD_OPERANDS and pending and pending[-1] == "IdRef*":
                pending[-1:] = reversed(OPENCL_STD_OPERANDS[number])
            return OPENCL_STD_NAMES.get(number, str(number))
        if kind == "LiteralSpecConstantOpInteger":
            opcode = self._word()
            inner = [k for k in OPERANDS.get(opcode, ()) if k not in ("IdResultType", "IdResult")]
            pending.extend(reversed(inner))
            return OP_NAMES.get(opcode, f"Op{opcode}")[2:]
        return str(self._word())

    def _mask(self, kind: str, value: int, pending: list[str]) -> str:
        if value == 0:
            return "None"
        names: list[str] = []
        params: list[str] = []
        rest = value
        for bit in range(32):
            flag = 1 << bit
            if value & flag and flag in ENUM_NAMES[kind]:
                names.append(ENUM_NAMES[kind][flag])
                params.extend(ENUM_PARAMS.get(kind, {}).get(flag, ()))
                rest &= ~flag
        if rest:
            names.append(f"{rest:#x}")
        pending.extend(reversed(params))
        return "|".join(names)

    def _number(self) -> str:
        opcode, width, signed = self.number_type or (Op.TypeInt, 32, 0)
        bits = self._word()
        if width > 32:
            bits |= self._word() << 32
        if opcode == Op.TypeFloat:
            return hexfloat(bits, width)
        bits &= (1 << width) - 1
        if signed and bits >> (width - 1):
            bits -= 1 << width
        return str(bits)

    def _word(self) -> int:
        self.pos += 1
        return self.words[self.pos - 1]

    def _string_at(self, pos: int) -> str:
        data = bytearray()
        for word in self.words[pos : self.end]:
            data += word.to_bytes(4, "little")
            if data[-1] == 0:
                break
        return data.split(b"\0", 1)[0].decode(errors="replace")


def _as_words(binary: bytes | Sequence[int] | Module) -> Sequence[int]:
    if isinstance(binary, Module):
        return to_words(binary)
    if isinstance(binary, (bytes, bytearray, memoryview)):
        return words_from_binary(binary)
    return binary


def dump(binary: bytes | Sequence[int] | Module) -> str:
    """The text form of a binary (bytes or words) or of a Module, ending in a newline."""
    words = _as_words(binary)
    if len(words) < 5 or words[0] != MAGIC_NUMBER:
        raise ValueError("not a SPIR-V binary (bad magic number or truncated header)")
    version, generator, bound = words[1], words[2], words[3]
    generator_text = (
        "Tiny Tensor Compiler"
        if generator == GENERATOR
        else f"{generator >> 16}; {generator & 0xFFFF}"
    )
    lines = [
        "; SPIR-V",
        f"; Version {version >> 16}.{(version >> 8) & 0xFF}",
        f"; Generator: {generator_text}",
        f"; Bound: {bound}",
        f"; Schema: {words[4]}",
    ]
    disassembler = _Disassembler(words)
    lines += [disassembler.instruction(*inst) for inst in iter_instructions(words, 5)]
    return "\n".join(lines) + "\n"
