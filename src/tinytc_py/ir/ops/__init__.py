"""The instruction table: every instruction of the tensor language and of the tinytc-py
extensions, defined once.

Each family module (blas, arith, memory, control, spmd, coopmatrix, extensions) holds its
instruction classes, which carry the verification of the reference's "Restrictions", and its
`ROWS`, which say each instruction's spec (`ir/inst.py`). This module imports the families in
one fixed order and makes `INSTRUCTIONS`: a row whose class is the instruction's own class makes
that class the instruction's; a row of a family class (`is_family`, e.g. ArithBinaryInst for add,
sub, ...) gets a subclass of its own, named after the mnemonic (`add` -> AddInst), that carries
the row's class attributes.
"""

from __future__ import annotations

from typing import Any

from ..inst import Inst, InstSpec
from . import arith, blas, control, coopmatrix, extensions, memory, spmd
from .common import Row

FAMILIES = (blas, arith, memory, control, spmd, coopmatrix, extensions)
"""The family modules, in table order."""

INSTRUCTIONS: dict[str, type[Inst]] = {}
"""Mnemonic -> instruction class."""


def _class_name(mnemonic: str) -> str:
    return "".join(p.capitalize() for p in mnemonic.split("_")) + "Inst"


def _register(cls: type[Inst], spec: InstSpec, class_attrs: dict[str, Any]) -> None:
    if spec.mnemonic in INSTRUCTIONS:
        raise TypeError(f"two rows for '{spec.mnemonic}'")
    attrs: dict[str, Any] = {
        "spec": spec,
        "name": spec.mnemonic,
        "variadic": frozenset(key for key, kind in spec.operand_slots if kind == "*"),
        **class_attrs,
    }
    if vars(cls).get("is_family", False):
        leaf_name = _class_name(spec.mnemonic)
        if leaf_name == cls.__name__:
            raise TypeError(f"{leaf_name}: the family class needs a name of its own")
        leaf = type(leaf_name, (cls,), {"__slots__": (), "__module__": cls.__module__, **attrs})
    else:
        if "spec" in vars(cls) or class_attrs:
            raise TypeError(f"{cls.__name__}: one row per instruction class ({spec.mnemonic})")
        for key, value in attrs.items():
            setattr(cls, key, value)
        leaf = cls
    INSTRUCTIONS[spec.mnemonic] = leaf


def _build(families: tuple[Any, ...]) -> None:
    rows: list[Row] = [row for family in families for row in family.ROWS]
    for cls, spec, class_attrs in rows:
        _register(cls, spec, class_attrs)


_build(FAMILIES)
