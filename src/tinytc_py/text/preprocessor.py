"""Compile-time `$variables` and the `!calc` reverse-Polish calculator (preprocessor reference).

Definitions are resolved while parsing and never reach the IR. A variable is visible in the scope
that defines it and in every nested region; it may be assigned once in that whole range, and must
be assigned before use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import CompilationError, Location, Status

INT_MIN = -(2**63) + 1
INT_MAX = 2**63 - 1


def _div(a: int, b: int) -> int:
    """C-style integer division (truncates toward zero), as the reference implementation does."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _rem(a: int, b: int) -> int:
    return a - b * _div(a, b)


def _pow(a: int, b: int) -> int:
    if b < 0:
        raise ValueError("negative exponent")
    if abs(a) > 1 and b >= 64:
        raise ValueError("!calc result out of range")
    return a**b


RPN_OPERATORS: dict[str, Callable[[int, int], int]] = {
    "^": _pow,
    "-": lambda a, b: a - b,
    "+": lambda a, b: a + b,
    "*": lambda a, b: a * b,
    "/": _div,
    "%": _rem,
    "min": min,
    "max": max,
}


def evaluate_rpn(items: list[tuple[str | int, Location]], loc: Location) -> int:
    """Evaluates a reverse-Polish expression of integers and operator names."""
    stack: list[int] = []
    for item, item_loc in items:
        if isinstance(item, int):
            stack.append(item)
            continue
        if len(stack) < 2:
            raise CompilationError(item_loc, Status.parse_error, f"'{item}' needs two operands")
        b = stack.pop()
        a = stack.pop()
        if b == 0 and item in ("/", "%"):
            raise CompilationError(
                item_loc, Status.ir_division_by_zero, "division by zero in !calc"
            )
        try:
            value = RPN_OPERATORS[item](a, b)
        except ValueError as exc:
            raise CompilationError(item_loc, Status.parse_error, str(exc)) from None
        if not INT_MIN <= value <= INT_MAX:
            raise CompilationError(item_loc, Status.parse_error, "!calc result out of range")
        stack.append(value)
    if len(stack) != 1:
        raise CompilationError(
            loc, Status.parse_error, "!calc expression must leave exactly one value"
        )
    return stack[0]


class Definitions:
    """Scoped table of compile-time variables; values are ints, floats, bools, types or attrs."""

    def __init__(self) -> None:
        self._scopes: list[dict[str, Any]] = [{}]

    def push(self) -> None:
        self._scopes.append({})

    def pop(self) -> None:
        self._scopes.pop()

    def define(self, name: str, value: Any, loc: Location) -> None:
        if self._find(name) is not None:
            raise CompilationError(loc, Status.parse_error, f"${name} is already defined")
        self._scopes[-1][name] = (value,)

    def lookup(self, name: str, loc: Location) -> Any:
        found = self._find(name)
        if found is None:
            raise CompilationError(
                loc, Status.parse_error, f"${name} is used before its definition"
            )
        return found[0]

    def _find(self, name: str) -> tuple[Any] | None:
        scopes = self._scopes
        for i in range(len(scopes) - 1, -1, -1):
            found = scopes[i].get(name)
            if found is not None:
                return found
        return None
