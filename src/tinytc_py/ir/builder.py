"""Python builder: an explicit insertion point, one method per instruction (named after the
mnemonic, `_` appended to Python keywords), regions as context managers.

    b = IRBuilder(ctx)
    with b.function("axpy", [ctx.f32, vec, vec]) as f:
        alpha, x, y = f.params
        with b.foreach([c0], [n]) as (i,):
            ...
    prog = b.prog

Instructions verify themselves when created, and the builder checks placement, visibility of the
operands and region yields exactly where the parser does, so no invalid program can be built.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..errors import UNKNOWN_LOCATION, CompilationError, Location, Status
from .attrs import DictionaryAttr
from .context import CompilerContext
from .enums import OptFlag
from .extensions import check_extension, disabled_error
from .global_data import GlobalData, add_global, make_global
from .inst import Inst
from .instructions import INSTRUCTIONS
from .nesting import MAX_NESTING, nesting_error, region_depth
from .region import Func, Prog, Region
from .types import DYNAMIC, MemrefType, NumberType, Type, element_type
from .values import Value
from .verify import check_placement, check_region_end, finish_func

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


class RegionScope:
    """Context manager that moves the insertion point into a region and checks the region's
    yields on exit. `__enter__` returns the region parameters (one value, a tuple, or None)."""

    def __init__(self, builder: IRBuilder, region: Region, inst: Inst | None = None) -> None:
        self.builder = builder
        self.region = region
        self.inst = inst
        self._saved: Region | None = None

    @property
    def results(self) -> list[Value]:
        return self.inst.results if self.inst is not None else []

    def __enter__(self) -> Any:
        self._saved = self.builder.region
        self.builder.region = self.region
        params = self.region.params
        if not params:
            return None
        return params[0] if len(params) == 1 else tuple(params)

    def __exit__(self, exc_type, exc, tb) -> None:
        self.builder.region = self._saved
        if exc_type is None:
            check_region_end(self.region)


class IfScope:
    """`with b.if_(cond) as (then, otherwise):` — each branch is a RegionScope."""

    def __init__(self, builder: IRBuilder, inst: Inst) -> None:
        self.inst = inst
        self.then = RegionScope(builder, inst.regions[0], inst)
        self.otherwise = RegionScope(builder, inst.regions[1], inst)

    @property
    def results(self) -> list[Value]:
        return self.inst.results

    def __enter__(self) -> tuple[RegionScope, RegionScope]:
        return self.then, self.otherwise

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            check_region_end(self.inst.regions[0])
            check_region_end(self.inst.regions[1])


class FunctionScope:
    def __init__(self, builder: IRBuilder, func: Func) -> None:
        self.builder = builder
        self.func = func
        self.body = RegionScope(builder, func.body)

    @property
    def params(self) -> list[Value]:
        return self.func.params

    def __enter__(self) -> FunctionScope:
        self.body.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.body.__exit__(exc_type, exc, tb)
        if exc_type is None:
            # Region instructions whose `with` block was never entered (e.g. a for with init
            # values) were not checked on the way.
            for inst in self.func.body.walk():
                for region in inst.regions:
                    check_region_end(region)
            finish_func(self.func)
            self.builder.prog.add_function(self.func)


class IRBuilder:
    def __init__(self, ctx: CompilerContext | None = None, region: Region | None = None) -> None:
        self.ctx = ctx or CompilerContext()
        self.prog = Prog(self.ctx)
        self.region = region

    # ---- functions and insertion --------------------------------------------------------------

    def function(
        self,
        name: str,
        param_types: list[Type],
        param_names: list[str] | None = None,
        attrs: DictionaryAttr | dict | None = None,
        param_attrs: list[DictionaryAttr | dict | None] | None = None,
        loc: Location = UNKNOWN_LOCATION,
    ) -> FunctionScope:
        func = Func(name, list(param_types), loc, self._dict(attrs))
        _set_names(func.params, param_names, loc)
        if param_attrs is not None:
            func.param_attrs = [self._dict(a) for a in param_attrs]
        return FunctionScope(self, func)

    def _dict(self, attrs: DictionaryAttr | dict | None) -> DictionaryAttr | None:
        if attrs is None or isinstance(attrs, DictionaryAttr):
            return attrs
        return self.ctx.dictionary_attr({k: self.attr(v) for k, v in attrs.items()})

    def attr(self, value: Any):
        """Python value → attribute (bool, int, str, list and dict convert recursively)."""
        if isinstance(value, bool):
            return self.ctx.boolean_attr(value)
        if isinstance(value, int):
            return self.ctx.integer_attr(value)
        if isinstance(value, str):
            return self.ctx.string_attr(value)
        if isinstance(value, (list, tuple)):
            return self.ctx.array_attr([self.attr(v) for v in value])
        if isinstance(value, dict):
            return self._dict(value)
        return value

    def insert(self, inst: Inst, name: str | list[str] | None = None) -> Inst:
        """Checks placement and operand visibility, then appends at the insertion point."""
        region = self.region
        if region is None:
            inst.drop_uses()
            raise CompilationError(inst.loc, Status.invalid_arguments, "no insertion point set")
        try:
            if inst.spec.extension:
                check_extension(inst, self.ctx, self.prog)
            check_placement(inst, region)
            if inst.regions and region_depth(region) >= MAX_NESTING:
                raise nesting_error(inst.loc)
            for v in inst.operands:
                if not _visible(v, region):
                    raise inst.error(
                        Status.compilation_error, f"value {v} is not visible at this point", v
                    )
            _set_names(inst.results, [name] if isinstance(name, str) else name, inst.loc)
        except CompilationError:
            inst.drop_uses()
            raise
        region.append(inst)
        return inst

    def create(
        self,
        mnemonic: str,
        operands: dict,
        props: dict | None = None,
        ty: Type | list[Type] | None = None,
        name: str | list[str] | None = None,
        loc: Location = UNKNOWN_LOCATION,
        attrs: DictionaryAttr | dict | None = None,
    ) -> Inst:
        cls = INSTRUCTIONS[mnemonic]
        if cls.spec.result == "result" and ty is None:
            raise _type_required(mnemonic, loc)
        return self.insert(cls(operands, props, ty, loc, self._dict(attrs)), name)

    def _scope(self, inst: Inst, param_names: list[str] | None) -> RegionScope:
        try:
            _set_names(inst.regions[0].params, param_names, inst.loc)
        except CompilationError:
            inst.parent.erase(inst)
            raise
        return RegionScope(self, inst.regions[0], inst)

    def global_(
        self, symbol: str, ty: Type, values: Any, loc: Location = UNKNOWN_LOCATION
    ) -> GlobalData:
        """Defines program-level constant data (the global extension, docs/extensions.md) from
        the values in column-major order; functions read it with `global_ref(ty, symbol=...)`."""
        if not self.ctx.optimization_flag(OptFlag.extensions):
            raise disabled_error(loc, "'global'")
        scalar = ty.element if isinstance(ty, MemrefType) else ty
        data = make_global(symbol, ty, [_python_number(v, scalar) for v in values], loc)
        add_global(self.prog, data)
        return data

    # ---- instructions with hand-written signatures --------------------------------------------

    def constant(
        self, value: Any, ty: Type, name: str | None = None, loc: Location = UNKNOWN_LOCATION
    ) -> Value:
        value = _python_number(value, element_type(ty))
        return self.create("constant", {}, {"value": value}, ty, name, loc).result

    def subview(
        self,
        operand: Value,
        offsets: list[int | Value],
        sizes: list[int | Value],
        ty: Type,
        name: str | None = None,
        loc: Location = UNKNOWN_LOCATION,
    ) -> Value:
        """`sizes[i] == 0` selects a single index (the mode is dropped), as in the text syntax."""
        so, do = _split(offsets)
        ss, ds = _split(sizes)
        props = {"static_offsets": so, "static_sizes": ss}
        ops = {"operand": operand, "offsets": do, "sizes": ds}
        return self.create("subview", ops, props, ty, name, loc).result

    def expand(
        self,
        operand: Value,
        mode: int,
        shape: list[int | Value],
        ty: Type,
        name: str | None = None,
        loc: Location = UNKNOWN_LOCATION,
    ) -> Value:
        static, dynamic = _split(shape)
        props = {"expanded_mode": mode, "static_expand_shape": static}
        return self.create(
            "expand", {"operand": operand, "expand_shape": dynamic}, props, ty, name, loc
        ).result

    def for_(
        self,
        lb: Value,
        ub: Value,
        step: Value | None = None,
        init: list[Value] = (),
        types: list[Type] | None = None,
        name: str | list[str] | None = None,
        attrs: DictionaryAttr | dict | None = None,
        param_names: list[str] | None = None,
        loc: Location = UNKNOWN_LOCATION,
    ) -> RegionScope:
        """Loop over [lb, ub); loop-carried values start at `init` (types default to theirs).
        `param_names` names the loop variable and then the loop-carried values."""
        types = list(types) if types is not None else [v.type for v in init]
        ops = {"from": lb, "to": ub, "step": step, "iter_init": list(init)}
        inst = self.create("for", ops, None, types, name, loc, attrs)
        return self._scope(inst, param_names)

    def if_(
        self,
        condition: Value,
        types: list[Type] = (),
        name: str | list[str] | None = None,
        loc: Location = UNKNOWN_LOCATION,
    ) -> IfScope:
        inst = self.create("if", {"condition": condition}, None, list(types), name, loc)
        return IfScope(self, inst)

    def foreach(
        self,
        lbs: list[Value],
        ubs: list[Value],
        param_names: list[str] | None = None,
        loc: Location = UNKNOWN_LOCATION,
    ) -> RegionScope:
        inst = self.create("foreach", {"from": list(lbs), "to": list(ubs)}, None, None, None, loc)
        return self._scope(inst, param_names)

    def foreach_tile(
        self,
        lbs: list[Value],
        ubs: list[Value],
        tile_shape: list[int],
        param_names: list[str] | None = None,
        loc: Location = UNKNOWN_LOCATION,
    ) -> RegionScope:
        """`param_names` names the loop variables, then the tile sizes."""
        ops = {"from": list(lbs), "to": list(ubs)}
        inst = self.create("foreach_tile", ops, {"tile_shape": tuple(tile_shape)}, None, None, loc)
        return self._scope(inst, param_names)

    def parallel(self, loc: Location = UNKNOWN_LOCATION) -> RegionScope:
        inst = self.create("parallel", {}, None, None, None, loc)
        return RegionScope(self, inst.regions[0], inst)

    def cooperative_matrix_apply(
        self,
        a: Value,
        ty: Type | None = None,
        name: str | None = None,
        param_names: list[str] | None = None,
        loc: Location = UNKNOWN_LOCATION,
    ) -> RegionScope:
        """`param_names` names (row, col, value) of the body."""
        inst = self.create("cooperative_matrix_apply", {"a": a}, None, ty or a.type, name, loc)
        return self._scope(inst, param_names)

    def yield_(self, *values: Value, loc: Location = UNKNOWN_LOCATION) -> None:
        self.create("yield", {"yielded_vals": list(values)}, None, None, None, loc)


def _python_number(value: Any, scalar: Type) -> Any:
    """A Python number as a constant of the scalar type, as the parser makes constants: an int
    becomes a float for a floating type, a real or complex number (re, im) for a complex type
    (the builder takes what Python code naturally passes; the text asks for the exact kind)."""
    if isinstance(value, bool) or not isinstance(scalar, NumberType):
        return value
    if isinstance(value, complex):
        return (value.real, value.imag)
    if scalar.is_float and isinstance(value, int):
        return float(value)
    if scalar.is_complex and isinstance(value, (int, float)):
        return (float(value), 0.0)
    return value


def _split(entries: list[int | Value]) -> tuple[tuple[int, ...], list[Value]]:
    static, dynamic = [], []
    for e in entries:
        if isinstance(e, Value):
            static.append(DYNAMIC)
            dynamic.append(e)
        else:
            static.append(int(e))
    return tuple(static), dynamic


def _type_required(mnemonic: str, loc: Location) -> CompilationError:
    return CompilationError(loc, Status.invalid_arguments, f"{mnemonic}: result type `ty` required")


def _set_names(values: list[Value], names: list[str] | None, loc: Location) -> None:
    """Names must be identifiers; purely numeric names mean "unnamed" (as in the parser)."""
    if not names:
        return
    names = list(names)
    if len(names) > len(values):
        detail = f"{len(names)} names for {len(values)} values"
        raise CompilationError(loc, Status.invalid_arguments, detail)
    for n in names:
        if n and not n.isdigit() and not _NAME.match(n):
            raise CompilationError(loc, Status.invalid_arguments, f"invalid value name {n!r}")
    for value, n in zip(values, names, strict=False):
        value.name = "" if n.isdigit() else n


def _visible(value: Value, region: Region) -> bool:
    home = value.defining_inst.parent if value.defining_inst is not None else value.region
    r: Region | None = region
    while r is not None:
        if r is home:
            return True
        r = r.parent_region
    return False


def _make_method(mnemonic: str) -> Callable[..., Any]:
    """A builder method from the table row: operands positionally (variadic ones as lists), then
    the result type `ty`, then properties as keywords."""
    cls = INSTRUCTIONS[mnemonic]
    spec = cls.spec
    keys = [o.rstrip("?*") for o in spec.operands]
    has_result = spec.result == "result"
    prop_names = {p.name for p in spec.props}
    required = [p.name for p in spec.props if p.default is None]
    fixed_kind = getattr(cls, "result_kind", None)  # builtins: the type is fixed by the language

    def method(
        self: IRBuilder,
        *args: Any,
        ty: Type | None = None,
        name: str | None = None,
        loc: Location = UNKNOWN_LOCATION,
        attrs: Any = None,
        **props: Any,
    ) -> Any:
        if len(args) > len(keys) + has_result:
            raise CompilationError(loc, Status.invalid_arguments, f"{mnemonic}: too many arguments")
        operands = dict(zip(keys, args, strict=False))
        if has_result and len(args) == len(keys) + 1:
            ty = args[-1]
        # Python keywords take a trailing underscore: fuse(..., from_=0, to=1).
        props = {k[:-1] if k.endswith("_") else k: v for k, v in props.items()}
        for key in keys:
            if key in props:
                operands[key] = props.pop(key)
        unknown = [k for k in props if k not in prop_names]
        missing = [k for k in required if props.get(k) is None]
        if unknown or missing:
            what = f"unknown property {unknown[0]!r}" if unknown else f"{missing[0]!r} required"
            raise CompilationError(loc, Status.invalid_arguments, f"{mnemonic}: {what}")
        if has_result and ty is None:
            try:
                ty = cls.infer_result_type(operands)
            except (KeyError, AttributeError):
                ty = None
            if ty is None and fixed_kind is not None:
                ty = self.ctx.number(fixed_kind)
            if ty is None:
                raise _type_required(mnemonic, loc)
        inst = self.create(mnemonic, operands, props, ty if has_result else None, name, loc, attrs)
        return inst.result if has_result else inst

    method.__name__ = spec.python_name
    method.__doc__ = (
        f"Creates `{mnemonic}` (operands: {', '.join(spec.operands) or 'none'}; "
        f"properties: {', '.join(p.name for p in spec.props) or 'none'})."
    )
    return method


for _mnemonic, _cls in INSTRUCTIONS.items():
    _attr = _cls.spec.python_name
    if not hasattr(IRBuilder, _attr):
        setattr(IRBuilder, _attr, _make_method(_mnemonic))
