"""Spelling of instruction modifiers (`.atomic`, `.t`, `.rows_checked`, `.device`, `.row`, `.x`,
`.global`…): shared by the parser and the printer so that both read one definition."""

from __future__ import annotations

from enum import IntEnum
from functools import cache
from typing import Any

from ..ir.enums import AddressSpace, CheckedFlag, Transpose
from ..ir.inst import Prop


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


@cache
def modifier_props(props: tuple[Prop, ...]) -> tuple[tuple[Prop, dict[str, Any]], ...]:
    """The properties of an instruction that are spelled as modifiers, with their tables."""
    return tuple((p, modifier_table(p)) for p in props if modifier_table(p))


def modifiers_text(props: tuple[Prop, ...], values: dict[str, Any]) -> str:
    """The dot-suffixes of an instruction's properties. As upstream's printer, transposes are
    printed up to the last one that is not `.n` (`gemm.n.t`, `gemm.t`): the words are
    positional, a lone `.t` reads as the first one."""
    trans = [p for p in props if p.kind is Transpose]
    shown = max((k + 1 for k, p in enumerate(trans) if values[p.name] != p.default), default=0)
    return "".join(
        "." + enum_spelling(Transpose, values[p.name])
        if p in trans[:shown]
        else modifier_text(p, values[p.name])
        for p in props
    )


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
    # As upstream's printer: a modifier at its default value (`.n`, no check, work-group scope,
    # relaxed) is left out; a property without default (`.x`) is always printed.
    if value is None or value == prop.default:
        return ""
    return "." + enum_spelling(prop.kind, value)
