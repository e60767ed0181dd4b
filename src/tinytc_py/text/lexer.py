"""Lexing for the tensor language: a cursor over the source that matches tokens on demand.

The grammar is context dependent in small ways (`f32x4x?` inside `memref<...>` is a type followed
by a shape, `2x%n` in expand, `.t.rows_checked` modifiers), so the parser asks for the token kind
it expects next instead of consuming a fixed token stream. All patterns are compiled once.

The most frequent steps (blanks and comments, literals, `%names`, words and mnemonics) are
scanned character by character instead of matched: compiled by mypyc, `ord(text[i])` is a read
of the string's buffer, where a regular-expression match or `str.startswith(s, pos)` is a call
through the Python API (about a third of a compiled parse, when they were matched).
"""

from __future__ import annotations

import math
import re
from typing import Final

from ..errors import CompilationError, Location, Position, Status

_DEC_FLOAT = r"[+-]?(?:(?:[0-9]*\.[0-9]+|[0-9]+\.)(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)"
_HEX_FLOAT = (
    r"[+-]?0[xX](?:(?:[0-9a-fA-F]*\.[0-9a-fA-F]+|[0-9a-fA-F]+\.?)(?:[pP][+-]?[0-9]+)"
    r"|(?:[0-9a-fA-F]*\.[0-9a-fA-F]+|[0-9a-fA-F]+\.))"
)
FLOAT = re.compile(rf"(?:{_HEX_FLOAT}|{_DEC_FLOAT}|[+-]?(?:inf|nan)\b)")
STRING = re.compile(r'"([\x20\x21\x23-\x7e]*)"')
TOKEN: Final = re.compile(r"[\w.$%@+\-]+|\S")
"""The extent of the token an error points at (Cursor.error)."""


_NOT_AFTER_INTEGER: Final = frozenset(map(ord, ".eExX"))


def is_ident_code(c: int) -> bool:
    """Whether the character code `c` is one of `[A-Za-z0-9_]`."""
    return 97 <= c <= 122 or 65 <= c <= 90 or 48 <= c <= 57 or c == 95


def word_end(text: str, pos: int) -> int:
    """The end of the word `[A-Za-z_][A-Za-z0-9_]*` at `pos` (`pos` itself when none starts
    there)."""
    n = len(text)
    if pos >= n:
        return pos
    c = ord(text[pos])
    if not (97 <= c <= 122 or 65 <= c <= 90 or c == 95):
        return pos
    pos += 1
    while pos < n and is_ident_code(ord(text[pos])):
        pos += 1
    return pos


def name_end(text: str, pos: int) -> int:
    """The end of the name `[A-Za-z][A-Za-z0-9_]*|[0-9]+` after a sigil (`%`, `@`, `$`) at
    `pos` (`pos` itself when none starts there)."""
    n = len(text)
    if pos >= n:
        return pos
    c = ord(text[pos])
    if 48 <= c <= 57:
        return digits_end(text, pos + 1)
    if not (97 <= c <= 122 or 65 <= c <= 90):
        return pos
    pos += 1
    while pos < n and is_ident_code(ord(text[pos])):
        pos += 1
    return pos


def digits_end(text: str, pos: int) -> int:
    """The end of the digits `[0-9]*` at `pos`."""
    n = len(text)
    while pos < n and 48 <= ord(text[pos]) <= 57:
        pos += 1
    return pos


def integer_end(text: str, pos: int) -> int:
    """The end of the integer constant `[+-]?[0-9]+` at `pos`, which no `.`, exponent, hex
    digit marker or further digit may follow (`pos` itself when none is there: `1.5`, `1e3`
    and `0x1p3` are floating constants)."""
    n = len(text)
    start = pos + 1 if pos < n and (ord(text[pos]) == 43 or ord(text[pos]) == 45) else pos
    end = digits_end(text, start)
    if end == start:
        return pos
    if end < n and ord(text[end]) in _NOT_AFTER_INTEGER:
        return pos
    return end


def mnemonic_end(text: str, pos: int) -> int:
    """The end of a mnemonic with its modifiers, words joined by dots (`gemm.t.n`), at `pos`
    (`pos` itself when none starts there)."""
    end = word_end(text, pos)
    n = len(text)
    while end > pos and end < n and ord(text[end]) == 46:  # '.'
        after = word_end(text, end + 1)
        if after == end + 1:
            break
        end = after
    return end


def memref_spelling_end(text: str, pos: int) -> int:
    """The end of the memref spelling at `pos` whose value depends on its text alone: `memref<`
    up to its closing `>` on one line, without $variables or comments, with angle brackets
    nested at most once (`strided<...>`); -1 when none starts there (text/parser.py's
    parse_memref then reads it step by step). A scan of character codes, not a regular
    expression: the parser asks this of every memref type it reads, and a pattern's match,
    its group and its end are three calls through the Python API each time."""
    if text[pos : pos + 7] != "memref<":  # (a slice: str.startswith is a method call)
        return -1
    depth = 1
    i = pos + 7
    n = len(text)
    while i < n:
        c = ord(text[i])
        i += 1
        if c == 62:  # '>'
            depth -= 1
            if depth == 0:
                return i
        elif c == 60:  # '<'
            if depth == 2:
                return -1
            depth += 1
        elif c == 36 or c == 59 or c == 10:  # '$', ';', '\n'
            return -1
    return -1


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

    __slots__ = ("text", "pos", "source_id", "_line_starts", "_skipped", "_line")

    def __init__(self, text: str, source_id: int = 0) -> None:
        self.text = text
        self.pos = 0
        self._skipped = -1  # an offset known to start no blank or comment
        self.source_id = source_id
        starts = [0]
        newline = text.find("\n")
        while newline >= 0:  # str.find is a primitive of the compiled module, finditer is not
            starts.append(newline + 1)
            newline = text.find("\n", newline + 1)
        self._line_starts = starts
        self._line = 1  # the line last looked up (the parser asks about nearby offsets)

    def line(self, offset: int) -> int:
        """The line (from 1) of `offset`: the one asked about last, else a binary search."""
        starts = self._line_starts
        line = self._line
        if starts[line - 1] <= offset and (line == len(starts) or offset < starts[line]):
            return line
        # bisect_right(starts, offset) by hand: a call of the bisect module from compiled code
        # goes through the generic call protocol and costs several times this loop
        lo, hi = 0, len(starts)
        while lo < hi:
            mid = (lo + hi) // 2
            if offset < starts[mid]:
                hi = mid
            else:
                lo = mid + 1
        self._line = lo
        return lo

    def position(self, offset: int) -> Position:
        line = self.line(offset)
        return Position(self.source_id, line, offset - self._line_starts[line - 1] + 1)

    def loc(self, begin: int, end: int | None = None) -> Location:
        """From `begin` to `end` (default: the current offset). Both ends on one line, the
        usual case (an instruction, a name, a type), take one line lookup."""
        if end is None:
            end = self.pos
        starts = self._line_starts
        line = self.line(begin)
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
        skips first, mostly at an offset just skipped to, which costs no new scan (they test
        that case themselves: it is the parser's most frequent step, and a call costs more)."""
        pos = self.pos
        if pos != self._skipped:
            text = self.text
            n = len(text)
            while pos < n:
                c = ord(text[pos])
                if c == 32 or c == 10 or c == 9 or c == 13:  # space, \n, \t, \r
                    pos += 1
                elif c == 59:  # ';' starts a comment to the end of the line
                    newline = text.find("\n", pos)
                    pos = n if newline < 0 else newline + 1
                else:
                    break
            self.pos = self._skipped = pos
        return pos

    def at_end(self) -> bool:
        return self.skip() >= len(self.text)

    def at(self, literal: str, pos: int) -> bool:
        """Whether `literal` (not empty) comes at offset `pos`: `text.startswith(literal, pos)`
        without the method call (see the module docstring)."""
        text = self.text
        end = pos + len(literal)
        if end > len(text) or ord(text[pos]) != ord(literal[0]):
            return False
        return end == pos + 1 or text[pos:end] == literal

    def peek(self, literal: str) -> bool:
        return self.at(literal, self.pos if self.pos == self._skipped else self.skip())

    def accept(self, literal: str) -> bool:
        """Consumes `literal` if it comes next. Keywords must not run into an identifier char."""
        pos = self.pos if self.pos == self._skipped else self.skip()
        if not self.at(literal, pos):
            return False
        text = self.text
        end = pos + len(literal)
        if end < len(text) and is_ident_code(ord(literal[-1])) and ord(literal[-1]) != 95:
            c = ord(text[end])
            if is_ident_code(c) or (c > 127 and text[end].isalnum()):
                return False
        self.pos = end
        return True

    def expect(self, literal: str, what: str | None = None) -> None:
        if not self.accept(literal):
            raise self.error(f"expected {what or repr(literal)}")

    def name(self, sigil: str) -> str | None:
        """The name after `sigil` (`%`, `@` or `$`, then `[A-Za-z][A-Za-z0-9_]*|[0-9]+`) that
        comes next, consumed; None (nothing consumed) when none does."""
        pos = self.pos if self.pos == self._skipped else self.skip()
        text = self.text
        if pos >= len(text) or ord(text[pos]) != ord(sigil):
            return None
        end = name_end(text, pos + 1)
        if end == pos + 1:
            return None
        self.pos = end
        return text[pos + 1 : end]

    def word(self) -> str | None:
        """The word `[A-Za-z_][A-Za-z0-9_]*` that comes next, consumed; None when none does."""
        pos = self.pos if self.pos == self._skipped else self.skip()
        end = word_end(self.text, pos)
        if end == pos:
            return None
        self.pos = end
        return self.text[pos:end]

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
