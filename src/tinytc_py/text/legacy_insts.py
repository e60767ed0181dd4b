"""The instruction rules of the legacy front end: one function per legacy mnemonic, each making
the current language's equivalent (`arith.add` is `add`, `group_size` is `num_groups.x`,
`hadamard_product` is `hadamard`, a `cmp.lt` returns `bool`).

A rule returns None, before consuming anything, when what follows is the current language's
form of the same mnemonic; the current rules read it then. The legacy parser (legacy_parser.py)
looks the rules up here; the operands they take (a value or an immediate) are defined here too,
so that this module needs the parser only for its annotations.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import CompilationError, Location, Status
from ..ir.enums import AddressSpace, Comp3, Transpose
from ..ir.inst import Inst
from ..ir.ops import INSTRUCTIONS
from ..ir.ops.memory import expand_layout, fuse_layout, subview_layout
from ..ir.types import DYNAMIC, MemrefType, NumberType, Type
from ..ir.values import Value
from .parser import OperandMap

if TYPE_CHECKING:
    from .legacy_parser import LegacyParser


@dataclass
class Immediate:
    """A constant written in place of an operand; its type comes from the instruction."""

    value: int | float | bool
    loc: Location


Operand = Value | Immediate


Rule = Callable[["LegacyParser", list[str], int, int], Inst | None]

# `arith.<op>` of the legacy grammar: the current mnemonics have the same names.
ARITH_BINARY = ("add", "sub", "mul", "div", "rem", "shl", "shr", "and", "or", "xor")
ARITH_UNARY = ("neg", "not")
CMP = {
    "eq": "equal",
    "ne": "not_equal",
    "gt": "greater_than",
    "ge": "greater_than_equal",
    "lt": "less_than",
    "le": "less_than_equal",
}
# BLAS-like instructions: legacy mnemonic → (current mnemonic, number of transpose modifiers,
# operand names; the last one is written).
BLAS = {
    "axpby": ("axpby", 1, ("alpha", "A", "beta", "B")),
    "sum": ("sum", 1, ("alpha", "A", "beta", "B")),
    "gemm": ("gemm", 2, ("alpha", "A", "B", "beta", "C")),
    "gemv": ("gemv", 1, ("alpha", "A", "B", "beta", "C")),
    "ger": ("ger", 0, ("alpha", "A", "B", "beta", "C")),
    "hadamard_product": ("hadamard", 0, ("alpha", "A", "B", "beta", "C")),
    "hadamard": ("hadamard", 0, ("alpha", "A", "B", "beta", "C")),
}


def _modifier_error(p: LegacyParser, mbegin: int, text: str) -> CompilationError:
    return CompilationError(p.c.loc(mbegin), Status.parse_error, text)


def _one_modifier(p: LegacyParser, mods: list[str], names, mbegin: int) -> str:
    """The single `.name` modifier of arith/cmp, one of `names`."""
    if len(mods) != 1 or mods[0] not in names:
        choices = ", ".join("." + k for k in names)
        raise _modifier_error(p, mbegin, f"expected one of the modifiers {choices}")
    return mods[0]


def _type_suffix(p: LegacyParser) -> tuple[Type, Location]:
    c = p.c
    c.expect(":")
    begin = c.skip()
    return p.parse_type(), c.loc(begin)


def arith(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst:
    """`arith.op a, b : T` and `arith.op a : T` (unary)."""
    name = _one_modifier(p, mods, ARITH_BINARY + ARITH_UNARY, mbegin)
    if name in ARITH_UNARY:
        a = p.parse_operand()
        ty, loc = _type_suffix(p)
        unary: OperandMap = {"a": p.value(a, ty, loc)}
        return INSTRUCTIONS[name](unary, {}, ty, p.c.loc(begin))
    a = p.parse_operand()
    p.c.expect(",")
    b = p.parse_operand()
    ty, loc = _type_suffix(p)
    ops: OperandMap = {"a": p.value(a, ty, loc), "b": p.value(b, ty, loc)}
    return INSTRUCTIONS[name](ops, {}, ty, p.c.loc(begin))


def cmp(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst:
    """`cmp.cond a, b : T` returns bool."""
    name = CMP[_one_modifier(p, mods, tuple(CMP), mbegin)]
    a = p.parse_operand()
    p.c.expect(",")
    b = p.parse_operand()
    ty, loc = _type_suffix(p)
    ops: OperandMap = {"a": p.value(a, ty, loc), "b": p.value(b, ty, loc)}
    if ty is p.ctx.bool and name in ("equal", "not_equal"):
        # The current comparisons take numbers only: on i1, a != b is xor, a == b its negation.
        differ = INSTRUCTIONS["xor"](ops, {}, ty, p.c.loc(begin))
        if name == "not_equal":
            return differ
        p.regions[-1].append(differ)
        return INSTRUCTIONS["not"]({"a": differ.results[0]}, {}, ty, p.c.loc(begin))
    return INSTRUCTIONS[name](ops, {}, p.ctx.bool, p.c.loc(begin))


def cast(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst | None:
    """`cast a : T -> U` (legacy) or `cast %a : U` (current)."""
    if mods:
        return None
    a = p.parse_operand()
    ty, loc = _type_suffix(p)
    if p.c.accept("->"):
        src = p.value(a, ty, loc)
        ty = p.parse_type()
    else:
        src = p.value(a, None)
    return INSTRUCTIONS["cast"]({"a": src}, {}, ty, p.c.loc(begin))


def _builtin(p: LegacyParser, name: str, begin: int) -> Inst:
    return INSTRUCTIONS[name]({}, {"mode": Comp3.x}, p.ctx.index, p.c.loc(begin))


def group_id(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst | None:
    """Legacy `group_id` is the current `group_id.x : index`."""
    return None if mods else _builtin(p, "group_id", begin)


def group_size(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst:
    """Legacy `group_size` (number of work groups) is the current `num_groups.x : index`."""
    if mods:
        raise _modifier_error(p, mbegin, "group_size takes no modifiers")
    return _builtin(p, "num_groups", begin)


def alloca(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst | None:
    """`alloca -> memref<...>`: the memref lives in local memory."""
    c = p.c
    if mods or not c.accept("->"):
        return None
    tbegin = c.skip()
    ty = p.local_memref(p.parse_type(), c.loc(tbegin))
    return INSTRUCTIONS["alloca"]({}, {}, ty, c.loc(begin))


def barrier(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst | None:
    """A legacy `barrier` fences global and local memory; with modifiers it is the current one."""
    if mods:
        return None
    fences = AddressSpace.global_ | AddressSpace.local
    return INSTRUCTIONS["barrier"]({}, {"fence_flags": fences}, None, p.c.loc(begin))


def _blas_modifiers(p: LegacyParser, mods: list[str], n_trans: int, mbegin: int) -> dict[str, Any]:
    """Transposes in order and `.atomic` anywhere (legacy writes it last, current first)."""
    trans = [Transpose[m] for m in mods if m in ("n", "t")]
    others = [m for m in mods if m not in ("n", "t", "atomic")]
    if others or len(trans) > n_trans or mods.count("atomic") > 1:
        raise _modifier_error(p, mbegin, f"unexpected modifiers '.{'.'.join(mods)}'")
    if "atomic" in mods[1:] and len(trans) != n_trans:
        # `.atomic` after a transpose is the legacy order, where every transpose is written
        raise _modifier_error(p, mbegin, f"expected {n_trans} transposes before '.atomic'")
    props: dict[str, Any] = {"atomic": "atomic" in mods}
    for key, t in zip(("tA", "tB"), trans):
        props[key] = t
    return props


def blas(p: LegacyParser, mods: list[str], mbegin: int, begin: int, mnemonic: str) -> Inst:
    """gemm/gemv/ger/axpby/sum/hadamard_product with immediate or annotated scalars."""
    name, n_trans, names = BLAS[mnemonic]
    props = _blas_modifiers(p, mods, n_trans, mbegin)
    c = p.c
    ops = [p.parse_operand()]
    for _ in names[1:]:
        c.expect(",")
        ops.append(p.parse_operand())
    annotations: list[tuple[Type | None, Location | None]] = [(None, None)] * len(ops)
    if c.accept(":"):
        annotations = list(p.parse_plain_type_list())
        if len(annotations) != len(ops):
            raise c.error(f"expected {len(ops)} types, one per operand", begin)
    out = ops[-1]
    if not isinstance(out, Value) or not isinstance(out.type, MemrefType):
        raise CompilationError(
            getattr(out, "loc", c.loc(begin)), Status.ir_expected_memref, "expected a memref"
        )
    values: OperandMap = {}
    for key, op, (ty, loc) in zip(names, ops, annotations):
        values[key] = p.value(op, ty if ty is not None else out.type.element, loc)
    return INSTRUCTIONS[name](values, props, None, c.loc(begin))


def _blas_rule(mnemonic: str) -> Rule:
    return lambda p, mods, mbegin, begin: blas(p, mods, mbegin, begin, mnemonic)


def _index_list(p: LegacyParser) -> list[Value]:
    p.c.expect("[")
    ops = p.parse_operand_list("]")
    p.c.expect("]")
    return p.index_values(ops)


def load(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst | None:
    """`load %A[i, 2] : T`, T the operand's type (legacy) or the result's (current)."""
    if mods:
        return None
    operand = p.parse_value()
    index = _index_list(p)
    ann, loc = _type_suffix(p)
    result: Type | None = ann
    if p.annotation_is_operand_type(ann, operand, view=False):
        p.value(operand, ann, loc)
        result = INSTRUCTIONS["load"].infer_result_type({"operand": operand})
    return INSTRUCTIONS["load"](
        {"operand": operand, "index_list": index}, {}, result, p.c.loc(begin)
    )


def store(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst | None:
    """`store v, %A[i] [: memref]` where v may be an immediate of the element type."""
    if mods:
        return None
    c = p.c
    val = p.parse_operand()
    c.expect(",")
    operand = p.parse_value()
    index = _index_list(p)
    if c.peek(":"):
        ann, loc = _type_suffix(p)
        p.value(operand, ann, loc)
    if not isinstance(operand.type, MemrefType):
        raise CompilationError(
            c.loc(begin), Status.ir_expected_memref, "store needs a memref", [operand]
        )
    ops: OperandMap = {
        "val": p.value(val, operand.type.element),
        "operand": operand,
        "index_list": index,
    }
    return INSTRUCTIONS["store"](ops, {}, None, c.loc(begin))


def _modes_and_type(p: LegacyParser, count: int) -> tuple[Value, list[int], Type, Any]:
    """`%A[m, ...] : T` of size and fuse: the operand, `count` mode numbers, T and its place."""
    operand = p.parse_value()
    p.c.expect("[")
    modes = [p.parse_integer()]
    while len(modes) < count:
        p.c.expect(",")
        modes.append(p.parse_integer())
    p.c.expect("]")
    return (operand, modes, *_type_suffix(p))


def size(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst | None:
    """`size %A[m] : memref` (legacy) or `size %A[m] : index` (current)."""
    if mods:
        return None
    operand, (mode,), ann, loc = _modes_and_type(p, 1)
    if p.annotation_is_operand_type(ann, operand, view=False):
        p.value(operand, ann, loc)
        ann = p.ctx.index
    return INSTRUCTIONS["size"]({"operand": operand}, {"mode": mode}, ann, p.c.loc(begin))


def _rest_of_mode(p: LegacyParser, operand: Value, mode: int, offset: int | Value, loc) -> Any:
    """The size of a `offset:?` slice: mode size minus offset, static when both are."""
    ty = typing.cast(MemrefType, operand.type)
    ext = ty.shape[mode]
    if ext != DYNAMIC and isinstance(offset, int):
        return ext - offset
    if ext != DYNAMIC:
        extent = p.constant(ext, p.ctx.index, loc)
    else:
        inst = INSTRUCTIONS["size"]({"operand": operand}, {"mode": mode}, p.ctx.index, loc)
        p.regions[-1].append(inst)
        extent = inst.results[0]
    if isinstance(offset, int):
        if offset == 0:
            return extent
        offset = p.constant(offset, p.ctx.index, loc)
    inst = INSTRUCTIONS["sub"]({"a": extent, "b": offset}, {}, p.ctx.index, loc)
    p.regions[-1].append(inst)
    return inst.results[0]


def _static_or_value(p: LegacyParser, op: Operand, static: list[int], dyn: list[Value]) -> None:
    if isinstance(op, Immediate):
        if type(op.value) is not int:
            raise CompilationError(op.loc, Status.parse_error, "expected integer constant")
        static.append(op.value)
    else:
        static.append(DYNAMIC)
        dyn.append(p.value(op, p.ctx.index))


def subview(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst | None:
    """Slices `off`, `off:size`, `off:?` (rest of the mode) and `:` (whole mode); the annotation
    is the operand's type (legacy; the result type is computed) or the result's."""
    if mods:
        return None
    c = p.c
    operand = p.parse_value()
    if not isinstance(operand.type, MemrefType):
        raise CompilationError(
            c.loc(begin), Status.ir_expected_memref, "expected a memref", [operand]
        )
    offs: list[int] = []
    sizes: list[int] = []
    dyn_offs: list[Value] = []
    dyn_sizes: list[Value] = []
    c.expect("[")
    mode = 0
    while not c.peek("]"):
        sbegin = c.skip()
        if c.peek(":"):
            off: Operand = Immediate(0, c.loc(sbegin))
        else:
            off = p.parse_operand()
        _static_or_value(p, off, offs, dyn_offs)
        if not c.accept(":"):
            sizes.append(0)
        elif c.accept("?") or c.peek(",") or c.peek("]"):
            if mode >= operand.type.order:
                raise c.error("more slices than modes", begin)
            offset = offs[-1] if offs[-1] != DYNAMIC else dyn_offs[-1]
            rest = _rest_of_mode(p, operand, mode, offset, c.loc(sbegin))
            _static_or_value(
                p,
                Immediate(rest, c.loc(sbegin)) if isinstance(rest, int) else rest,
                sizes,
                dyn_sizes,
            )
        else:
            size = p.parse_operand()
            if isinstance(size, Immediate) and size.value == 0:
                # a size of 0 would mean a single index (the mode dropped) in our IR
                raise CompilationError(
                    size.loc, Status.ir_invalid_slice, "slice size must be positive"
                )
            _static_or_value(p, size, sizes, dyn_sizes)
        mode += 1
        if not c.accept(","):
            break
    c.expect("]")
    ann, loc = _type_suffix(p)
    result: Type | None = ann
    if p.annotation_is_operand_type(ann, operand) and len(sizes) == operand.type.order:
        result = _view_type(p, operand.type, *subview_layout(operand.type, tuple(sizes)), loc)
    props = {"static_offsets": tuple(offs), "static_sizes": tuple(sizes)}
    ops: OperandMap = {"operand": operand, "offsets": dyn_offs, "sizes": dyn_sizes}
    return INSTRUCTIONS["subview"](ops, props, result, c.loc(begin))


def _view_type(p: LegacyParser, src: MemrefType, shape, stride, loc) -> Type:
    return p.ctx.memref(src.element, shape, stride, src.addrspace, loc)


def expand(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst | None:
    """`expand %A[m -> 2x?x%n] : T`: '?' is the entry that makes the product the mode size."""
    if mods:
        return None
    c = p.c
    operand = p.parse_value()
    c.expect("[")
    mode = p.parse_integer()
    c.expect("->")
    entries: list[int | Value | None] = []
    while True:
        c.skip()
        if c.peek("%"):
            entries.append(p.parse_value())
        elif c.accept("?"):
            entries.append(None)
        else:
            entries.append(p.parse_extent())
        if not p.accept_x():
            break
    c.expect("]")
    ann, loc = _type_suffix(p)
    ty = operand.type
    if not isinstance(ty, MemrefType) or not 0 <= mode < ty.order:
        raise CompilationError(
            c.loc(begin), Status.ir_out_of_bounds, "invalid expanded mode", [operand]
        )
    if entries.count(None) > 1:
        raise CompilationError(
            c.loc(begin), Status.ir_expand_shape_mismatch, "at most one '?' in the expand shape"
        )
    if None in entries:
        entries[entries.index(None)] = _inferred_extent(p, operand, mode, entries, c.loc(begin))
    static = tuple(e if isinstance(e, int) else DYNAMIC for e in entries)
    dyn = [e for e in entries if isinstance(e, Value)]
    result = ann
    if p.annotation_is_operand_type(ann, operand):
        result = _view_type(p, ty, *expand_layout(ty, mode, static), loc)
    props = {"expanded_mode": mode, "static_expand_shape": static}
    return INSTRUCTIONS["expand"](
        {"operand": operand, "expand_shape": dyn}, props, result, c.loc(begin)
    )


def _inferred_extent(p: LegacyParser, operand: Value, mode: int, entries: list, loc) -> int | Value:
    """The '?' entry of an expand shape: mode size over the product of the others."""
    ext = typing.cast(MemrefType, operand.type).shape[mode]
    known = 1
    for e in entries:
        if isinstance(e, int):
            known *= e
    if ext != DYNAMIC and all(not isinstance(e, Value) for e in entries):
        if known <= 0 or ext % known:
            raise CompilationError(
                loc,
                Status.ir_invalid_shape,
                f"expand shape does not divide mode size {ext}",
                [operand],
            )
        return ext // known
    inst = INSTRUCTIONS["size"]({"operand": operand}, {"mode": mode}, p.ctx.index, loc)
    p.regions[-1].append(inst)
    quotient = inst.results[0]
    divisors: list[Value] = [e for e in entries if isinstance(e, Value)]
    if known != 1:
        divisors.append(p.constant(known, p.ctx.index, loc))
    for d in divisors:
        div = INSTRUCTIONS["div"]({"a": quotient, "b": d}, {}, p.ctx.index, loc)
        p.regions[-1].append(div)
        quotient = div.results[0]
    return quotient


def fuse(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst | None:
    """`fuse %A[i, j] : T`, T the operand's type (legacy) or the result's."""
    if mods:
        return None
    c = p.c
    operand, (frm, to), ann, loc = _modes_and_type(p, 2)
    result = ann
    ty = operand.type
    if (
        p.annotation_is_operand_type(ann, operand)
        and isinstance(ty, MemrefType)
        and 0 <= frm < to < ty.order
    ):
        result = _view_type(p, ty, *fuse_layout(ty, frm, to), loc)
    return INSTRUCTIONS["fuse"]({"operand": operand}, {"from": frm, "to": to}, result, c.loc(begin))


def _loop_header(p: LegacyParser, with_step: bool) -> tuple[Any, list[Value]]:
    """`%i = from, to [, step] [: T]`; T (default: the bounds' type, else index) types the
    immediates among the bounds."""
    c = p.c
    var = p.parse_new_name()
    c.expect("=")
    ops = [p.parse_operand()]
    c.expect(",")
    ops.append(p.parse_operand())
    if with_step and c.accept(","):
        ops.append(p.parse_operand())
    ty: Type | None = None
    loc = None
    if c.accept(":"):
        tbegin = c.skip()
        ty = p.parse_type()
        loc = c.loc(tbegin)
        if not (isinstance(ty, NumberType) and ty.is_integer):
            raise CompilationError(
                loc, Status.parse_error, f"the loop type must be an integer type, not {ty}"
            )
    else:
        ty = next((op.type for op in ops if isinstance(op, Value)), p.ctx.index)
    return var, [p.value(op, ty, loc) for op in ops]


def for_(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst | None:
    """`for %i = 0, %n [, 2] [: T] { ... }` (no loop-carried values in the legacy grammar)."""
    if mods:
        return None
    var, bounds = _loop_header(p, True)
    ops = {"from": bounds[0], "to": bounds[1], "step": bounds[2] if len(bounds) > 2 else None}
    inst = INSTRUCTIONS["for"]({**ops, "iter_init": []}, {}, [], p.c.loc(begin))
    return p.parse_for_body(inst, [var])


def foreach(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst | None:
    """Legacy one-dimensional `foreach %i = from, to [: T] { ... }`."""
    if mods or p.c.peek("("):
        return None
    var, bounds = _loop_header(p, False)
    inst = INSTRUCTIONS["foreach"]({"from": bounds[:1], "to": bounds[1:]}, {}, None, p.c.loc(begin))
    p.parse_region(inst.regions[0], [var])
    return inst


def yield_(p: LegacyParser, mods: list[str], mbegin: int, begin: int) -> Inst | None:
    """`yield a, 2 : T, U` (legacy); `yield (...)` is the current form."""
    c = p.c
    if mods or c.peek("("):
        return None
    ops = p.parse_operand_list(":")
    c.expect(":")
    types = p.parse_plain_type_list() if ops else []
    if len(types) != len(ops):
        end = types[-1][1].end if types else c.loc(c.pos).begin
        loc = Location(c.loc(begin).begin, end)
        raise CompilationError(loc, Status.parse_error, "expected one type per yielded value")
    vals = [p.value(op, ty, loc) for op, (ty, loc) in zip(ops, types)]
    return INSTRUCTIONS["yield"]({"yielded_vals": vals}, {}, None, c.loc(begin))


LEGACY_RULES: dict[str, Rule] = {
    "arith": arith,
    "cmp": cmp,
    "cast": cast,
    "group_id": group_id,
    "group_size": group_size,
    "alloca": alloca,
    "barrier": barrier,
    "load": load,
    "store": store,
    "size": size,
    "subview": subview,
    "expand": expand,
    "fuse": fuse,
    "for": for_,
    "foreach": foreach,
    "yield": yield_,
    **{name: _blas_rule(name) for name in BLAS},
}
