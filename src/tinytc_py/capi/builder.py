"""The builder C API (capi/api/builder.toml): attributes, data types, values, instructions, regions,
functions and programs.

The `tinytc_<mnemonic>_inst_create` functions are made from the IR's instruction table
(ir/ops/) with the same rule tools/gen_capi.py uses for their C declarations:
properties, then operands, then result types, between the out-pointer and the location. An
instruction verifies itself when it is constructed, so an invalid combination returns its
`ir_*` status and no instruction is made. Placement (collective / SPMD) and yields are checked
when the program is compiled (the check-ir pass), since a region built from C may get its
parent only later.

Ownership (docs/design.md §C1.6): a new instruction or function belongs to the caller until a region or
program takes it; the handle stays valid afterwards as a borrowed pointer. Destroying or erasing
an instruction drops the handles of everything inside it.
"""

from __future__ import annotations

import re
from enum import IntEnum
from typing import Any

from ..errors import Status, TinytcError
from ..ir.attrs import Attr, DictionaryAttr, StringAttr
from ..ir.context import CompilerContext
from ..ir.enums import AddressSpace, MatrixUse
from ..ir.inst import Inst
from ..ir.ops import INSTRUCTIONS
from ..ir.region import Func, Prog, Region
from ..ir.types import (
    BooleanType,
    CoopmatrixType,
    NumberType,
    ScalarKind,
    Type,
    element_type,
)
from ..ir.values import Value
from .errors import invalid
from .handles import (
    fill_list,
    int64s,
    location,
    need,
    out,
    out_handle,
    purge_func,
    purge_inst,
    state,
    table,
    text,
)
from .registry import export, register

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _ctx(p: Any) -> CompilerContext:
    return table.get("compiler_context", p)


def _type(p: Any) -> Type:
    return table.get("type", p)


def _attr(p: Any) -> Attr:
    return table.get("attr", p)


def _value(p: Any) -> Value:
    return table.get("value", p)


def _enum(kind: type[IntEnum], value: int) -> IntEnum:
    try:
        return kind(value)
    except ValueError:
        invalid(f"{value} is not a {kind.__name__}")


# ---- attributes -----------------------------------------------------------------------------------


def _set_attr(p: Any, attr: Attr) -> None:
    need(p)
    out_handle(p, "attr", attr)


@export
def tinytc_array_attr_get(attr: Any, ctx: Any, array_size: int, array: Any) -> None:
    context = _ctx(ctx)
    _set_attr(attr, context.array_attr(table.get_many("attr", array_size, array)))


@export
def tinytc_boolean_attr_get(attr: Any, ctx: Any, value: int) -> None:
    _set_attr(attr, _ctx(ctx).boolean_attr(bool(value)))


@export
def tinytc_integer_attr_get(attr: Any, ctx: Any, value: int) -> None:
    _set_attr(attr, _ctx(ctx).integer_attr(value))


@export
def tinytc_string_attr_get(attr: Any, ctx: Any, str_length: int, str_: Any) -> None:
    context = _ctx(ctx)
    if str_length and str_ == state.ffi.NULL:
        invalid("NULL string")
    raw = state.ffi.buffer(str_, str_length)[:] if str_length else b""
    _set_attr(attr, context.string_attr(raw.decode("utf-8", errors="replace")))


def _named_items(count: int, items: Any) -> list[tuple[StringAttr, Attr]]:
    """The (name, attr) pairs of a tinytc_named_attr_t array."""
    pairs = table.get_many("attr", 2 * count, items)
    named = []
    for name, value in zip(pairs[::2], pairs[1::2]):
        if not isinstance(name, StringAttr):
            raise TinytcError(Status.ir_expected_string_attribute, "names must be strings")
        named.append((name, value))
    return named


def _sort_items(count: int, items: Any) -> list[tuple[StringAttr, Attr]]:
    named = sorted(_named_items(count, items), key=lambda kv: kv[0].value)
    dst = state.ffi.cast("uintptr_t *", items)
    for i, (name, value) in enumerate(named):
        dst[2 * i] = table.handle("attr", name)
        dst[2 * i + 1] = table.handle("attr", value)
    return named


@export
def tinytc_dictionary_attr_sort(items_size: int, items: Any) -> None:
    _sort_items(items_size, items)


@export
def tinytc_dictionary_attr_get(attr: Any, ctx: Any, items_size: int, items: Any) -> None:
    context = _ctx(ctx)
    _set_attr(attr, context.dictionary_attr(_sort_items(items_size, items)))


@export
def tinytc_dictionary_attr_get_with_sorted(
    attr: Any, ctx: Any, items_size: int, items: Any
) -> None:
    context = _ctx(ctx)
    _set_attr(attr, context.dictionary_attr(_named_items(items_size, items)))


# ---- data types -------------------------------------------------------------------------------------


def _set_type(p: Any, ty: Type) -> None:
    need(p)
    out_handle(p, "type", ty)


def _scalar_getter(name: str, get) -> None:
    def getter(ty_: Any, ctx: Any) -> None:
        _set_type(ty_, get(_ctx(ctx)))

    register(f"tinytc_{name}_type_get", getter)


_scalar_getter("boolean", lambda c: c.bool)
_scalar_getter("void", lambda c: c.void)
for _kind in ScalarKind:
    _scalar_getter(_kind.name, lambda c, k=_kind: c.number(k))


@export
def tinytc_coopmatrix_type_get(ty_: Any, component_ty: Any, rows: int, cols: int, use: int) -> None:
    component = _type(component_ty)
    if rows > 0 and rows & (rows - 1):
        raise TinytcError(
            Status.ir_unsupported_coopmatrix_shape, "coopmatrix rows must be a power of two"
        )
    ty = component.ctx.coopmatrix(component, rows, cols, _enum(MatrixUse, use))
    _set_type(ty_, ty)


@export
def tinytc_group_type_get(ty_: Any, element_ty: Any, size: int, offset: int) -> None:
    element = _type(element_ty)
    _set_type(ty_, element.ctx.group(element, size, offset))


@export
def tinytc_memref_type_get(
    ty_: Any,
    element_ty: Any,
    shape_size: int,
    shape: Any,
    stride_size: int,
    stride: Any,
    addrspace: int,
) -> None:
    element = _type(element_ty)
    space = _enum(AddressSpace, addrspace)
    if space not in (AddressSpace.global_, AddressSpace.local):
        invalid("address space must be global or local")
    strides = int64s(stride_size, stride) if stride_size else None
    _set_type(ty_, element.ctx.memref(element, int64s(shape_size, shape), strides, space))


@export
def tinytc_type_get_compiler_context(ty: Any, ctx: Any) -> None:
    need(ctx)
    out(ctx, table.context_handle(_type(ty).ctx, "the type's compiler context"))


# ---- values ---------------------------------------------------------------------------------------


@export
def tinytc_value_get_name(vl: Any, name: Any) -> None:
    need(name)
    entry = table.entry("value", vl)
    entry.keep = state.ffi.new("char[]", entry.obj.name.encode())
    name[0] = entry.keep


@export
def tinytc_value_get_type(vl: Any, ty: Any) -> None:
    need(ty)
    out_handle(ty, "type", _value(vl).type)


def _set_name(value: Value, name: str) -> None:
    if name and not name.isdigit() and not _NAME.match(name):
        invalid(f"invalid value name {name!r}")
    value.name = "" if name.isdigit() else name


@export
def tinytc_value_set_name(vl: Any, name: Any) -> None:
    _set_name(_value(vl), text(name))


@export
def tinytc_value_set_name_n(vl: Any, name_length: int, name: Any) -> None:
    _set_name(_value(vl), text(name, name_length) if name_length else "")


# ---- instruction creators ---------------------------------------------------------------------------


class _Args:
    """Reads a creator's C arguments in declaration order."""

    __slots__ = ("args", "i")

    def __init__(self, args: tuple) -> None:
        self.args = args
        self.i = 0

    def next(self) -> Any:
        a = self.args[self.i]
        self.i += 1
        return a

    def value(self, optional: bool = False) -> Value | None:
        p = self.next()
        if optional and p == state.ffi.NULL:
            return None
        return _value(p)

    def list(self, kind: str) -> list[Any]:
        count = self.next()
        return table.get_many(kind, count, self.next())


def _prop(args: _Args, prop) -> Any:
    if prop.kind == "ints":
        count = args.next()
        return int64s(count, args.next())
    raw = args.next()
    if isinstance(prop.kind, type) and issubclass(prop.kind, IntEnum):
        return _enum(prop.kind, raw)
    if prop.kind == "flag":
        return bool(raw)
    if prop.kind == "string":
        return text(raw)
    if prop.kind == "fence" and raw & ~int(AddressSpace.global_ | AddressSpace.local):
        invalid(f"unknown fence flags {raw:#x}")
    return int(raw)


def _creator(mnemonic: str, cls: type[Inst]):
    spec = cls.spec

    def create(instr: Any, *c_args: Any) -> None:
        need(instr)
        args = _Args(c_args)
        props = {p.name: _prop(args, p) for p in spec.props}
        operands: dict[str, Any] = {}
        for op in spec.operands:
            key = op.rstrip("?*")
            if op.endswith("*"):
                operands[key] = args.list("value")
            else:
                operands[key] = args.value(optional=op.endswith("?"))
        results: Type | list[Type] | None = None
        if spec.result == "result":
            results = _type(args.next())
        elif spec.result:
            results = args.list("type")
        inst = cls(operands, props, results, location(args.next()))
        out_handle(instr, "inst", inst)

    create.__name__ = f"tinytc_{mnemonic}_inst_create"
    return create


for _mnemonic, _cls in INSTRUCTIONS.items():
    if _mnemonic != "constant":
        register(f"tinytc_{_mnemonic}_inst_create", _creator(_mnemonic, _cls))


def _constant(instr: Any, value: Any, ty: Any, loc: Any) -> None:
    need(instr)
    inst = INSTRUCTIONS["constant"]({}, {"value": value}, _type(ty), location(loc))
    out_handle(instr, "inst", inst)


@export
def tinytc_constant_inst_create_boolean(instr: Any, value: int, ty: Any, loc: Any) -> None:
    _constant(instr, bool(value), ty, loc)


@export
def tinytc_constant_inst_create_complex(
    instr: Any, value_re: float, value_im: float, ty: Any, loc: Any
) -> None:
    _constant(instr, (float(value_re), float(value_im)), ty, loc)


@export
def tinytc_constant_inst_create_float(instr: Any, value: float, ty: Any, loc: Any) -> None:
    _constant(instr, float(value), ty, loc)


@export
def tinytc_constant_inst_create_int(instr: Any, value: int, ty: Any, loc: Any) -> None:
    _constant(instr, int(value), ty, loc)


def _unit(ty: Type, one: bool) -> Any:
    """The constant 1 (one) or 0 of a boolean, number or coopmatrix type."""
    scalar = element_type(ty)
    if isinstance(scalar, BooleanType) and not isinstance(ty, CoopmatrixType):
        return one
    if not isinstance(scalar, NumberType):
        raise TinytcError(Status.ir_expected_number, f"no unit constant of type {ty}")
    if scalar.is_integer:
        return int(one)
    if scalar.is_float:
        return float(one)
    return (float(one), 0.0)


@export
def tinytc_constant_inst_create_one(instr: Any, ty: Any, loc: Any) -> None:
    _constant(instr, _unit(_type(ty), True), ty, loc)


@export
def tinytc_constant_inst_create_zero(instr: Any, ty: Any, loc: Any) -> None:
    _constant(instr, _unit(_type(ty), False), ty, loc)


# ---- instructions -------------------------------------------------------------------------------


def _inst(p: Any) -> Inst:
    return table.get("inst", p)


@export
def tinytc_inst_get_parent_region(instr: Any, parent: Any) -> None:
    need(parent)
    region = _inst(instr).parent
    out(parent, 0 if region is None else table.handle("region", region))


@export
def tinytc_inst_get_regions(instr: Any, result_list_size: Any, result_list: Any) -> None:
    regions = _inst(instr).regions
    fill_list(result_list_size, result_list, [table.handle("region", r) for r in regions])


@export
def tinytc_inst_get_values(instr: Any, result_list_size: Any, result_list: Any) -> None:
    results = _inst(instr).results
    fill_list(result_list_size, result_list, [table.handle("value", v) for v in results])


@export
def tinytc_inst_destroy(instr: Any) -> None:
    inst = _inst(instr)
    if inst.parent is not None:
        return  # owned by a region: destroying it is the region's business
    inst.drop_uses()
    purge_inst(table, inst)


@export
def tinytc_inst_set_attr(instr: Any, a: Any) -> None:
    inst = _inst(instr)
    inst.attrs = None if a == state.ffi.NULL else _dictionary(a)


def _dictionary(a: Any) -> DictionaryAttr:
    attr = _attr(a)
    if not isinstance(attr, DictionaryAttr):
        raise TinytcError(Status.ir_expected_dictionary_attribute, "expected a dictionary")
    return attr


# ---- regions ----------------------------------------------------------------------------------------


def _region(p: Any) -> Region:
    return table.get("region", p)


def _free_inst(p: Any) -> Inst:
    inst = _inst(p)
    if inst.parent is not None:
        invalid("the instruction already belongs to a region")
    return inst


def _end(region: Region) -> int:
    """The past-the-end iterator of a region (a handle that is never an instruction)."""
    return table.handle("end", region)


def _iter_handle(region: Region, index: int) -> int:
    if index >= len(region.insts):
        return _end(region)
    return table.handle("inst", region.insts[index])


def _position(it: Any) -> tuple[Region, int]:
    """Region and index an iterator points at (index == len(insts) for end)."""
    need(it)
    entry = table.entry_at(int(state.ffi.cast("uintptr_t *", it)[0]))
    if entry.kind == "end":
        return entry.obj, len(entry.obj.insts)
    if entry.kind != "inst" or entry.obj.parent is None:
        invalid("not an iterator")
    region = entry.obj.parent
    return region, region.insts.index(entry.obj)


@export
def tinytc_region_append(reg: Any, instr: Any) -> None:
    region = _region(reg)
    region.append(_free_inst(instr))


@export
def tinytc_region_begin(reg: Any, iterator: Any) -> None:
    need(iterator)
    out(iterator, _iter_handle(_region(reg), 0))


@export
def tinytc_region_end(reg: Any, iterator: Any) -> None:
    need(iterator)
    out(iterator, _end(_region(reg)))


@export
def tinytc_region_erase(reg: Any, iterator: Any) -> None:
    region = _region(reg)
    where, index = _position(iterator)
    if where is not region or index >= len(region.insts):
        invalid("the iterator does not point at an instruction of this region")
    inst = region.insts[index]
    region.erase(inst)
    purge_inst(table, inst)
    out(iterator, _iter_handle(region, index))


@export
def tinytc_region_insert(reg: Any, iterator: Any, instr: Any) -> None:
    region = _region(reg)
    where, index = _position(iterator)
    if where is not region:
        invalid("the iterator does not belong to this region")
    inst = _free_inst(instr)
    region.insert(index, inst)
    out(iterator, table.handle("inst", inst))


@export
def tinytc_next_inst(iterator: Any) -> None:
    region, index = _position(iterator)
    if index >= len(region.insts):
        invalid("cannot advance the end iterator")
    out(iterator, _iter_handle(region, index + 1))


@export
def tinytc_prev_inst(iterator: Any) -> None:
    region, index = _position(iterator)
    if index == 0:
        invalid("cannot move before the first instruction")
    out(iterator, _iter_handle(region, index - 1))


@export
def tinytc_region_get_parameters(reg: Any, result_list_size: Any, result_list: Any) -> None:
    params = _region(reg).params
    fill_list(result_list_size, result_list, [table.handle("value", v) for v in params])


# ---- functions and programs -------------------------------------------------------------------------


def _func(p: Any) -> Func:
    return table.get("func", p)


@export
def tinytc_func_create(
    fun: Any,
    name_length: int,
    name: Any,
    num_params: int,
    param_type_list: Any,
    ty: Any,
    loc: Any,
) -> None:
    need(fun)
    fname = text(name, name_length)
    if not _NAME.match(fname):
        invalid(f"invalid function name {fname!r}")
    result = _type(ty)
    if result is not result.ctx.void:
        raise TinytcError(Status.compilation_error, "functions return void")
    params = table.get_many("type", num_params, param_type_list)
    func = Func(fname, params, location(loc))
    func.body.loc = func.loc
    out_handle(fun, "func", func)


@export
def tinytc_func_destroy(fun: Any) -> None:
    entry = table.entry("func", fun)
    if not entry.owned:
        purge_func(table, entry.obj)


@export
def tinytc_func_get_body(fun: Any, body: Any) -> None:
    need(body)
    out_handle(body, "region", _func(fun).body)


@export
def tinytc_func_set_attr(fun: Any, a: Any) -> None:
    func = _func(fun)
    func.attrs = None if a == state.ffi.NULL else _dictionary(a)


@export
def tinytc_func_set_parameter_attr(fun: Any, param_no: int, a: Any) -> None:
    func = _func(fun)
    if not 0 <= param_no < len(func.param_attrs):
        invalid(f"parameter {param_no} does not exist")
    func.param_attrs[param_no] = None if a == state.ffi.NULL else _dictionary(a)


@export
def tinytc_prog_create(prg: Any, ctx: Any, loc: Any) -> None:
    need(prg)
    context = _ctx(ctx)
    ctx_addr = table.context_handle(context)
    handle = table.new_shared("prog", Prog(context, location(loc)), (ctx_addr,))
    table.by_addr[handle].sole = True
    out(prg, handle)


@export
def tinytc_prog_add_function(prg: Any, fun: Any) -> None:
    prog: Prog = table.get("prog", prg)
    entry = table.entry("func", fun)
    if entry.owned:
        invalid("the function already belongs to a program")
    prog.add_function(entry.obj)
    entry.owned = True
