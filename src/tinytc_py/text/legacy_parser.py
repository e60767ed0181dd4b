"""Front end for the legacy tensor language (tinytc v0.3) and the transitional forms that code
generators of that period emit (yateto: immediates, `arith.add`, `for %i=0,4 {`).

It reads into our IR, so verification, passes, SPIR-V and the C API are shared with the current
language. What differs from the current language is handled here and in `legacy_insts`:
immediates become `constant` instructions in front of the instruction that uses them, operand
type annotations are checked against the operands, and legacy types map onto current ones
(`i1` is `bool`, a group without size is a group of dynamic size, `alloca ->` memrefs are local).
Constructs whose meaning or signature changes leave a located note in `notes` (the upgrade tool
prints them). Current-language instructions the legacy grammar does not define are read by the
current rules, which makes mixed transitional programs readable.
"""

from __future__ import annotations

from ..errors import CompilationError, Location, Status
from ..ir.attrs import Attr, DictionaryAttr, StringAttr
from ..ir.context import CompilerContext
from ..ir.enums import AddressSpace
from ..ir.inst import Inst
from ..ir.ops import INSTRUCTIONS
from ..ir.types import DYNAMIC, BooleanType, GroupType, MemrefType, NumberType, Type
from ..ir.values import Value
from .legacy_insts import LEGACY_RULES, Immediate, Operand
from .parser import Parser

SIZELESS_GROUP_NOTE = (
    "a legacy group without size is read as a group of dynamic size ('x?'): as a kernel "
    "parameter it takes one more argument, the group size as an i64, in front of a dynamic offset"
)


def same_legacy_type(annotated: Type, actual: Type) -> bool:
    """Legacy annotations name memrefs without address space (alloca results are local now)."""
    if annotated is actual:
        return True
    if isinstance(annotated, MemrefType) and isinstance(actual, MemrefType):
        return (annotated.element, annotated.shape, annotated.stride) == (
            actual.element,
            actual.shape,
            actual.stride,
        )
    return False


class LegacyParser(Parser):
    def __init__(self, ctx: CompilerContext, text: str, name: str = "", source_id: int = 0) -> None:
        super().__init__(ctx, text, name, source_id)
        self.notes: list[tuple[Location, str]] = []
        self.immediates: set[Value] = set()  # constants made from immediates
        self.sizeless = False  # whether the group type being read has no size

    def note(self, loc: Location, text: str) -> None:
        self.notes.append((loc, text))

    # ---- functions and types ------------------------------------------------------------------

    def parse_func_attrs(self) -> DictionaryAttr | None:
        """`work_group_size(M, N)` and `subgroup_size(S)` become the attribute dictionary."""
        c = self.c
        begin = c.skip()
        items: list[tuple[StringAttr | str, Attr]] = []
        while True:
            if c.accept("work_group_size"):
                c.expect("(")
                rows = self.parse_integer()
                c.expect(",")
                cols = self.parse_integer()
                c.expect(")")
                sizes: list[Attr] = [self.ctx.integer_attr(rows), self.ctx.integer_attr(cols)]
                items.append(("work_group_size", self.ctx.array_attr(sizes)))
            elif c.accept("subgroup_size"):
                c.expect("(")
                items.append(("subgroup_size", self.ctx.integer_attr(self.parse_integer())))
                c.expect(")")
            else:
                break
        if not items:
            return super().parse_func_attrs()
        return self.ctx.dictionary_attr(items, c.loc(begin))

    def parse_type(self) -> Type:
        if self.c.accept("i1"):
            return self.ctx.bool
        return super().parse_type()

    def parse_group_body(self, begin: int) -> Type:
        """`group<memref, offset: off>` of the legacy grammar, or the current form with a size."""
        self.sizeless = False
        ty = super().parse_group_body(begin)
        if self.sizeless and not self.regions:  # a parameter: the kernel's signature changes
            self.note(self.c.loc(begin), SIZELESS_GROUP_NOTE)
        return ty

    def parse_group_size(self) -> int:
        if self.accept_x():
            return self.parse_extent()
        self.sizeless = True
        return DYNAMIC

    def parse_condition(self) -> Value:
        return self.value(self.parse_operand(), self.ctx.bool)

    # ---- operands -----------------------------------------------------------------------------

    def parse_operand(self) -> Operand:
        """A local identifier or an immediate (integer, floating, true/false)."""
        c = self.c
        begin = c.skip()
        if c.peek("%"):
            return self.parse_value()
        if c.accept("true") or c.accept("false"):
            return Immediate(c.text[begin : c.pos] == "true", c.loc(begin))
        number = self.parse_optional_number()
        if number is None:
            raise c.error("expected local identifier or constant")
        return Immediate(number, c.loc(begin))

    def parse_operand_list(self, close: str) -> list[Operand]:
        return self.parse_list(close, self.parse_operand)

    def parse_plain_type_list(self) -> list[tuple[Type, Location]]:
        """`T1, T2, ...` of operand annotations, each with its location."""
        c = self.c
        types = []
        while True:
            begin = c.skip()
            types.append((self.parse_type(), c.loc(begin)))
            if not c.accept(","):
                return types

    def value(self, op: Operand, ty: Type | None, ann_loc: Location | None = None) -> Value:
        """The value of an operand: a value is checked against its annotation (when `ann_loc`
        says that `ty` was written), an immediate becomes a constant of type `ty`."""
        if isinstance(op, Value):
            if ann_loc is not None and ty is not None and not same_legacy_type(ty, op.type):
                raise CompilationError(
                    ann_loc,
                    Status.parse_error,
                    f"type annotation {ty} does not match the operand's type {op.type}",
                    [op],
                )
            return op
        if ty is None:
            raise CompilationError(
                op.loc, Status.parse_error, "the type of this constant is unknown: annotate it"
            )
        return self.constant(op.value, ty, op.loc)

    def constant(self, value: int | float | bool, ty: Type, loc: Location) -> Value:
        """A `constant` instruction in the region being parsed, in front of its user."""
        constant: int | float | bool | tuple[float, float] = value
        if isinstance(ty, NumberType) and ty.is_float and type(value) is int:
            constant = float(value)
        if isinstance(ty, NumberType) and ty.is_complex and not isinstance(value, bool):
            constant = (float(value), 0.0)
        if not isinstance(ty, (NumberType, BooleanType)):
            raise CompilationError(loc, Status.parse_error, f"a constant cannot have type {ty}")
        inst = INSTRUCTIONS["constant"]({}, {"value": constant}, ty, loc)
        self.regions[-1].append(inst)
        self.immediates.add(inst.results[0])
        return inst.results[0]

    def index_values(self, ops: list[Operand]) -> list[Value]:
        return [self.value(op, self.ctx.index) for op in ops]

    # ---- instructions -------------------------------------------------------------------------

    def parse_inst_body(self, mnemonic: str, mbegin: int, begin: int) -> Inst:
        base, *mods = mnemonic.split(".")
        rule = LEGACY_RULES.get(base)
        inst = rule(self, mods, mbegin, begin) if rule else None
        if inst is None:
            return super().parse_inst_body(mnemonic, mbegin, begin)
        return inst

    def local_memref(self, ty: Type, loc: Location) -> MemrefType:
        """The memref of a legacy `alloca -> memref<...>`: the same layout in local memory."""
        if not isinstance(ty, MemrefType):
            raise CompilationError(loc, Status.ir_expected_memref, "alloca must return a memref")
        return self.ctx.memref(ty.element, ty.shape, ty.stride, AddressSpace.local, loc)

    def annotation_is_operand_type(self, ann: Type, operand: Value, view: bool = True) -> bool:
        """Legacy views, loads and sizes annotate the operand's type, current ones the result's
        type: an annotation of the operand's kind (group for a group; memref for a memref unless
        `view`, whose current result is a memref too) is the legacy one, which the caller then
        checks against the operand (a view's memref annotation is legacy only when it is the
        operand's type)."""
        actual = operand.type
        if same_legacy_type(ann, actual):
            return True
        if isinstance(actual, GroupType):
            return isinstance(ann, GroupType)
        return not view and isinstance(actual, MemrefType) and isinstance(ann, MemrefType)
