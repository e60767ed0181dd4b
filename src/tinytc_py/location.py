"""Source positions and ranges: where an instruction, a value or an error is in a source.

They live in a module of their own, listed among the compiled modules (compiled.py), so that
they are native classes: the parser makes a location for every instruction and every named
value it reads, and built by compiled code a native object costs a C call, where the same
dataclass interpreted cost three Python-level constructor calls per location (a third of the
text front end's time on compiled modules). errors.py, which reports them, re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True, unsafe_hash=True)
class Position:
    """A point in a source: source id (0 = unknown), line and column counting from 1.

    Positions and locations are values, never changed once made (equal and hashed by value),
    but not frozen dataclasses: a frozen dataclass's constructor sets each field through
    object.__setattr__, which made the two positions and the location a parser attaches to
    every instruction and value about a tenth of a parse."""

    source_id: int = 0
    line: int = 0
    column: int = 0


@dataclass(slots=True, unsafe_hash=True)
class Location:
    """A half-open source range [begin, end)."""

    begin: Position = Position()
    end: Position = Position()

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


UNKNOWN_LOCATION = Location()
