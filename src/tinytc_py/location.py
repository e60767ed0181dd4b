"""Source positions and ranges: where an instruction, a value or an error is in a source.

They live in a module of their own, listed among the compiled modules (compiled.py), so that
they are native classes: the parser makes a location for every instruction and every named
value it reads, and built by compiled code a native object costs a C call, where the
interpreted dataclasses cost three Python-level constructor calls per location (about a sixth of
a compiled parse). Plain classes, not dataclasses: mypyc keeps a dataclass's generated
`__init__` interpreted. errors.py, which reports them, re-exports them.

Positions and locations are values, never changed once made, equal and hashed by value.
"""

from __future__ import annotations

from typing import Final


class Position:
    """A point in a source: source id (0 = unknown), line and column counting from 1."""

    __slots__ = ("source_id", "line", "column")

    def __init__(self, source_id: int = 0, line: int = 0, column: int = 0) -> None:
        self.source_id = source_id
        self.line = line
        self.column = column

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Position):
            return NotImplemented
        return (
            self.source_id == other.source_id
            and self.line == other.line
            and self.column == other.column
        )

    def __hash__(self) -> int:
        return hash((self.source_id, self.line, self.column))

    def __repr__(self) -> str:
        return f"Position(source_id={self.source_id!r}, line={self.line!r}, column={self.column!r})"


UNKNOWN_POSITION: Final = Position()


class Location:
    """A half-open source range [begin, end)."""

    __slots__ = ("begin", "end")

    def __init__(
        self, begin: Position = UNKNOWN_POSITION, end: Position = UNKNOWN_POSITION
    ) -> None:
        self.begin = begin
        self.end = end

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Location):
            return NotImplemented
        return self.begin == other.begin and self.end == other.end

    def __hash__(self) -> int:
        return hash((self.begin, self.end))

    def __repr__(self) -> str:
        return f"Location(begin={self.begin!r}, end={self.end!r})"

    def __str__(self) -> str:
        """Upstream's range spelling: ``L.C``, ``L.C-E`` or ``L.C-L2.E`` with E the last column
        (inclusive; the range itself is half-open)."""
        b, e = self.begin, self.end
        if b.line == 0:
            return "<unknown>"
        last = max(0, e.column - 1)
        if b.line < e.line:
            return f"{b.line}.{b.column}-{e.line}.{last}"
        if b.column < last:
            return f"{b.line}.{b.column}-{last}"
        return f"{b.line}.{b.column}"

    @staticmethod
    def span(first: Location, last: Location) -> Location:
        """The range from the start of `first` to the end of `last`."""
        return Location(first.begin, last.end)


UNKNOWN_LOCATION: Final = Location()
