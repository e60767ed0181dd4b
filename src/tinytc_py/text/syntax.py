"""Spelling of instruction modifiers (`.atomic`, `.t`, `.rows_checked`, `.device`, `.row`, `.x`,
`.global`…): shared by the parser and the printer so that both read one definition."""

from __future__ import annotations

from enum import IntEnum
from functools import cache
from typing import Any

from ..ir.enums import AddressSpace, CheckedFlag, Comp3, MemoryScope, MemorySemantics, Transpose
from ..ir.inst import Prop

_ALWAYS_PRINTED = (Transpose, Comp3)


def enum_spelling(kind: type[IntEnum], member: IntEnum) -> str:
    if kind is CheckedFlag:
        return f"{member.name}_checked"
    return member.name


@cache
def modifier_table(prop: Prop) -> dict[str, Any]:
    """Modifier word → property value, for one property."""
    if prop.kind == "flag":
        return {prop.name: True}
    if prop.kind == "fence":
        return {"global": AddressSpace.global_, "local": AddressSpace.local}
    if isinstance(prop.kind, type) and issubclass(prop.kind, IntEnum):
        return {
            enum_spelling(prop.kind, m): m
            for m in prop.kind
            if not (prop.kind is CheckedFlag and m is CheckedFlag.none)
        }
    return {}


def is_modifier(prop: Prop) -> bool:
    return bool(modifier_table(prop))


def modifier_text(prop: Prop, value: Any) -> str:
    """The dot-suffixes that print a property value ("" for a default that is left out)."""
    if not modifier_table(prop):
        return ""
    if prop.kind == "flag":
        return f".{prop.name}" if value else ""
    if prop.kind == "fence":
        flags = AddressSpace(value or 0)
        return "".join(
            f".{f.text}" for f in (AddressSpace.global_, AddressSpace.local) if f & flags
        )
    kind = prop.kind
    if kind in _ALWAYS_PRINTED or (
        value is not None
        and value != prop.default
        and kind in (CheckedFlag, MemoryScope, MemorySemantics)
    ):
        return "." + enum_spelling(kind, value)
    if value is not None and prop.default is None:
        return "." + enum_spelling(kind, value)
    return ""
