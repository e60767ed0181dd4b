"""Lexing for the tensor language: a cursor over the source that matches tokens on demand.

The grammar is context dependent in small ways (`f32x4x?` inside `memref<...>` is a type followed
by a shape, `2x%n` in expand, `.t.rows_checked` modifiers), so the parser asks for the token kind
it expects next instead of consuming a fixed token stream. All patterns are compiled once.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right

from ..errors import CompilationError, Location, Position, Status

WS = re.compile(r"(?:[ \t\r\n]+|;[^\n]*)*")
_BLANK_STARTS = frozenset(" \t\r\n;")  # the first characters WS can match
# A keyword ends in a letter or digit, and must not run into an identifier character
# (str.isalnum, as the sets below for ASCII; `accept` asks isalnum about the others).
_WORD_ENDS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_IDENT_CHARS = _WORD_ENDS | {"_"}
LOCAL = re.compile(r"%([A-Za-z][A-Za-z0-9_]*|[0-9]+)")
GLOBAL = re.compile(r"@([A-Za-z][A-Za-z0-9_]*|[0-9]+)")
DEFVAR = re.compile(r"\$([A-Za-z][A-Za-z0-9_]*|[0-9]+)")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MNEMONIC = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
INTEGER = re.compile(r"[+-]?[0-9]+(?![0-9.eExX])")
_DEC_FLOAT = r"[+-]?(?:(?:[0-9]*\.[0-9]+|[0-9]+\.)(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)"
_HEX_FLOAT = (
    r"[+-]?0[xX](?:(?:[0-9a-fA-F]*\.[0-9a-fA-F]+|[0-9a-fA-F]+\.?)(?:[pP][+-]?[0-9]+)"
    r"|(?:[0-9a-fA-F]*\.[0-9a-fA-F]+|[0-9a-fA-F]+\.))"
)
FLOAT = re.compile(rf"(?:{_HEX_FLOAT}|{_DEC_FLOAT}|[+-]?(?:inf|nan)\b)")
STRING = re.compile(r'"([\x20\x21\x23-\x7e]*)"')
SHAPE_INT = re.compile(r"[0-9]+")
TOKEN = re.compile(r"[\w.$%@+\-]+|\S")

INT_MIN = -(2**63) + 1
INT_MAX = 2**63 - 1


def parse_integer_text(text: str) -> int | None:
    """The value of an integer constant, or None when outside -2^63+1 .. 2^63-1.

    Literals longer than any int64 are rejected before int(), which refuses (ValueError) or
    takes quadratic time on thousands of digits."""
    if len(text.lstrip("+-").lstrip("0")) > 19:
        return None
    value = int(text)
    return value if INT_MIN <= value <= INT_MAX else None


def hex_float_text(value: float) -> str:
    """C99 `%a` spelling of a finite double (`0x1.5p+5`, `0x0p+0`, `-0x1p-1`): exact, so the
    printed IR reads back bit for bit, and the spelling upstream tinytc's printers use."""
    significand, exponent = value.hex().split("p")
    return significand.rstrip("0").rstrip(".") + "p" + exponent


def parse_float_text(text: str) -> float | None:
    """The value of a floating constant (decimal, C hex float, inf, nan), or None when a finite
    literal overflows double precision."""
    body = text.lstrip("+-")
    neg = text.startswith("-")
    if body in ("inf", "nan"):
        value = math.inf if body == "inf" else math.nan
    elif body[:2] in ("0x", "0X"):
        if "p" not in body and "P" not in body:
            body += "p0"
        try:
            value = float.fromhex(body)
        except OverflowError:
            return None
    else:
        value = float(body)
        if math.isinf(value):
            return None
    return -value if neg else value


class Cursor:
    """Position in a source text with helpers to skip blanks/comments and match patterns."""

    __slots__ = ("text", "pos", "source_id", "_line_starts", "_skipped")

    def __init__(self, text: str, source_id: int = 0) -> None:
        self.text = text
        self.pos = 0
        self._skipped = -1  # an offset known to start no blank or comment
        self.source_id = source_id
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> Position:
        line = bisect_right(self._line_starts, offset)
        return Position(self.source_id, line, offset - self._line_starts[line - 1] + 1)

    def loc(self, begin: int, end: int | None = None) -> Location:
        """From `begin` to `end` (default: the current offset). Both ends on one line, the
        usual case (an instruction, a name, a type), take one line lookup."""
        if end is None:
            end = self.pos
        starts = self._line_starts
        line = bisect_right(starts, begin)
        start = starts[line - 1]
        if start <= end and (line == len(starts) or end < starts[line]):
            source_id = self.source_id
            return Location(
                Position(source_id, line, begin - start + 1),
                Position(source_id, line, end - start + 1),
            )
        return Location(self.position(begin), self.position(end))

    def skip(self) -> int:
        """Skips white space and comments; returns the new offset. Every accept/peek/match
        skips first, mostly at an offset just skipped to, which costs no new match (they test
        that case themselves: it is the parser's most frequent step, and a call costs more)."""
        pos = self.pos
        if pos != self._skipped:
            text = self.text
            # Tokens often touch ("%a," "[0:16]") or are one space apart ("%a, %b"): one or
            # two characters say so without a match.
            if text[pos : pos + 1] not in _BLANK_STARTS:
                self._skipped = pos
            elif text[pos] == " " and text[pos + 1 : pos + 2] not in _BLANK_STARTS:
                pos = self.pos = self._skipped = pos + 1
            else:
                m = WS.match(text, pos)  # matches (maybe nothing) everywhere
                assert m is not None
                pos = self.pos = self._skipped = m.end()
        return pos

    def at_end(self) -> bool:
        return self.skip() >= len(self.text)

    def peek(self, literal: str) -> bool:
        pos = self.pos if self.pos == self._skipped else self.skip()
        return self.text.startswith(literal, pos)

    def accept(self, literal: str) -> bool:
        """Consumes `literal` if it comes next. Keywords must not run into an identifier char."""
        pos = self.pos if self.pos == self._skipped else self.skip()
        text = self.text
        if not text.startswith(literal, pos):
            return False
        end = pos + len(literal)
        if literal[-1] in _WORD_ENDS and end < len(text):
            c = text[end]
            if c in _IDENT_CHARS or (c > "\x7f" and c.isalnum()):
                return False
        self.pos = end
        return True

    def expect(self, literal: str, what: str | None = None) -> None:
        if not self.accept(literal):
            raise self.error(f"expected {what or repr(literal)}")

    def match(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        m = pattern.match(self.text, self.pos if self.pos == self._skipped else self.skip())
        if m:
            self.pos = m.end()
        return m

    def error(self, message: str, begin: int | None = None) -> CompilationError:
        """A parse error at the current token (or from `begin` to the current offset)."""
        self.skip()
        if begin is None:
            m = TOKEN.match(self.text, self.pos)
            end = m.end() if m else self.pos + 1
            end = min(end, self.pos + 40)
            return CompilationError(self.loc(self.pos, end), Status.parse_error, message)
        return CompilationError(self.loc(begin), Status.parse_error, message)
