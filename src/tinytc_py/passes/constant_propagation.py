"""constant-propagation: folds instructions on constants and algebraic identities
(docs/design.md §B5, step 2). Each arithmetic, math and comparison instruction carries its rules
(`folds`, ir/ops/folds.py); casts and known values are in fold.py.

Folded: binary and unary arithmetic, math functions, casts and comparisons of constants (in the
type's semantics); x+0, 0+x, x-0, x*1, 1*x, x*-1 -> neg x, x*0, x/1, x%1 -> 0 (integers), shifts
by 0 and of 0, and/or/xor with 0 / all ones / false / true (xor with all ones -> not x); on
floating point only the identities exact in IEEE arithmetic (x + -0.0, x - +0.0, x*±1, x/1),
the others (x + +0.0, x - -0.0, x*0) only with the unsafe-fp-math flag; a cast to the operand's
own type;
`size` of a static memref mode or group; subgroup_broadcast of a constant.

The uses of a folded instruction move to its replacement: an existing value, or a new unnamed
`constant`, `neg` or `not` (with the instruction's location) inserted right before it. The
folded instruction itself stays where it is, now unused, and is left to dead-code-elimination
with the operands that became unused; upstream tinytc does the same, so the printed values are
numbered as upstream numbers them. Instructions are visited in program order, so chains fold
in one run.
"""

from __future__ import annotations

from ..errors import CompilationError, Status
from ..ir.enums import OptFlag
from ..ir.inst import Inst
from ..ir.ops import INSTRUCTIONS
from ..ir.ops.arith import (
    ArithBinaryInst,
    ArithUnaryInst,
    CastInst,
    CompareInst,
    ConstantInst,
    MathInst,
)
from ..ir.ops.folds import Scalar
from ..ir.ops.memory import SizeInst
from ..ir.ops.spmd import SubgroupBroadcastInst
from ..ir.region import Region
from ..ir.types import CoopmatrixType, as_number, element_type
from ..ir.values import Value
from . import fold
from .base import FunctionPass

Replacement = Value | tuple[str, object]
"""An existing value, ("constant", value) or ("neg" | "not", operand value)."""


class Folder:
    def __init__(self, unsafe_fp_math: bool) -> None:
        self.unsafe = unsafe_fp_math
        # value -> its known constant, once normalised: a constant is usually read by many
        # instructions (a chain of 1000 on one scalar normalised it 1000 times)
        self._known: dict[Value, Scalar] = {}

    def known(self, v: Value) -> Scalar | None:
        """fold.known(v), remembered for the values found constant."""
        d = v.defining_inst
        if not isinstance(d, (ConstantInst, SizeInst)):  # most operands: no lookup, no call
            return None
        found = self._known.get(v)
        if found is None:
            found = fold.known(v)
            if found is not None:
                self._known[v] = found
        return found

    def region(self, region: Region) -> None:
        """Folds in program order; the instruction list is rebuilt once (no O(n) insert each)."""
        out: list[Inst] = []
        for inst in region.insts:
            for sub in inst.regions:
                self.region(sub)
            found = self.fold(inst)
            if found is not None:
                new = self.replace(inst, found)
                if new is not None:
                    new.parent = region
                    out.append(new)
            out.append(inst)
        region.insts = out

    # ---- rules --------------------------------------------------------------------------------

    def fold(self, inst: Inst) -> Replacement | None:
        if isinstance(inst, ArithBinaryInst):
            return self.binary(inst)
        if isinstance(inst, ArithUnaryInst):
            return self.unary(inst)
        if isinstance(inst, MathInst):
            ca = self.known(inst.operand("a"))
            value = None if ca is None else inst.folds.evaluate(inst.result.type, ca)
            return None if value is None else ("constant", value)
        if isinstance(inst, CompareInst):
            return self.compare(inst)
        if isinstance(inst, CastInst):
            return self.cast(inst)
        if isinstance(inst, SizeInst):
            size = self.known(inst.result)
            return None if size is None else ("constant", size)
        if isinstance(inst, SubgroupBroadcastInst):
            a = inst.operand("a")
            return a if self.known(a) is not None else None
        return None

    def binary(self, inst: ArithBinaryInst) -> Replacement | None:
        a, b = inst.operand("a"), inst.operand("b")
        ca, cb = self.known(a), self.known(b)
        if ca is None and cb is None:  # neither a value nor an identity (folds.py) to apply
            return None
        ty = element_type(inst.result.type)
        if (
            isinstance(inst.result.type, CoopmatrixType)
            and inst.result.type.component.is_complex
            and not self.unsafe
        ):
            # The conversion multiplies complex coopmatrix components with the full formula, not
            # the real-factor scaling the scalar folds assume ((inf,1)*(1,0) is (inf,NaN) there).
            return None
        if inst.folds.divides and as_number(ty).is_integer and cb == 0:
            raise CompilationError(
                inst.loc,
                Status.ir_division_by_zero,
                f"integer {inst.name} by zero",
                [b] if b is not None else [],
            )
        if ca is not None and cb is not None:
            value = inst.folds.evaluate(ty, ca, cb)
            if value is not None:
                return ("constant", value)
        rewrite = inst.folds.simplify(ty, ca, cb, self.unsafe)
        if rewrite is None:
            return None
        operand = (a, b)[rewrite.operand]
        if rewrite.kind == "operand":
            return operand
        if rewrite.kind == "constant":
            return ("constant", rewrite.value)
        return (rewrite.kind, operand)

    def unary(self, inst: ArithUnaryInst) -> Replacement | None:
        a = inst.operand("a")
        ca = self.known(a)
        value = None if ca is None else inst.folds.evaluate(element_type(a.type), ca)
        return None if value is None else ("constant", value)

    def compare(self, inst: CompareInst) -> Replacement | None:
        a, b = inst.operand("a"), inst.operand("b")
        ca, cb = self.known(a), self.known(b)
        if ca is None or cb is None:
            return None
        value = inst.folds.evaluate(a.type, ca, cb)
        return None if value is None else ("constant", value)

    def cast(self, inst: Inst) -> Replacement | None:
        a = inst.operand("a")
        if a.type is inst.result.type:
            return a
        ca = self.known(a)
        if ca is None:
            return None
        value = fold.cast(element_type(a.type), element_type(inst.result.type), ca)
        return None if value is None else ("constant", value)

    # ---- rewriting ----------------------------------------------------------------------------

    def replace(self, inst: Inst, found: Replacement) -> Inst | None:
        """Moves the uses of inst to the replacement; returns the instruction made for the
        replacement (None for an existing value), to be inserted before inst."""
        result = inst.result
        new = None
        if isinstance(found, Value):
            new_value = found
        else:
            kind, arg = found
            if kind == "constant":
                new = INSTRUCTIONS["constant"]({}, {"value": arg}, result.type, inst.loc)
            else:
                new = INSTRUCTIONS[kind]({"a": arg}, {}, result.type, inst.loc)
            new_value = new.result
        result.replace_all_uses_with(new_value)
        return new


class ConstantPropagation(FunctionPass):
    name = "constant-propagation"

    def run(self, func, ctx, out) -> None:
        Folder(ctx.optimization_flag(OptFlag.unsafe_fp_math)).region(func.body)
