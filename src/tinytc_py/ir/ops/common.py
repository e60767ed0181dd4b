"""What the instruction families share: the property declarations several families use, the
type sets their arithmetic rows allow, and the row type of the table (ops/__init__.py)."""

from __future__ import annotations

from typing import Any

from ..enums import CheckedFlag, Comp3, MemoryScope, MemorySemantics, ResultUniformity, Transpose
from ..inst import Inst, InstSpec, Prop
from ..types import Type

Row = tuple[type[Inst], InstSpec, dict[str, Any]]
"""A table row: the instruction's class (a family class, of which the table makes one subclass
per row, or the instruction's own class), its spec, and class attributes for a family's leaf."""

R = "result"

ATOMIC = Prop("atomic", "flag", False)
TRANS_A = Prop("tA", Transpose, Transpose.n)
TRANS_B = Prop("tB", Transpose, Transpose.n)
CHECKED = Prop("checked", CheckedFlag, CheckedFlag.none)
SCOPE = Prop("scope", MemoryScope, MemoryScope.work_group)
SEMANTICS = Prop("semantics", MemorySemantics, MemorySemantics.relaxed)
VARYING = ResultUniformity.varying  # a scan: one prefix per work-item
UNIFORM = ResultUniformity.uniform  # a reduction: one value for all

COMP3 = Prop("mode", Comp3, None)  # required: the grammar has no default component

# type families an arithmetic instruction accepts (ArithInst.allowed)
INT = frozenset({"int"})
NUM = frozenset({"int", "float", "complex"})
REAL = frozenset({"int", "float"})
LOGIC = frozenset({"bool", "int"})
FLOAT = frozenset({"float"})
FLOAT_COMPLEX = frozenset({"float", "complex"})
COMPLEX = frozenset({"complex"})


def result_type(inst: Inst) -> Type:
    return inst.results[0].type
