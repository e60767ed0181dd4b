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

The methods of the instructions without a hand-written one below are generated from the
instruction table (builder_methods.py, by tools/gen_langref.py), so that each has its real
signature. An instruction built without an explicit `loc` is located at the Python line that
called the builder, and its errors quote that line.
"""

from __future__ import annotations

import linecache
import re
import sys
from collections.abc import Sequence
from types import CodeType, FrameType
from typing import Any

from ..errors import UNKNOWN_LOCATION, CompilationError, Location, Position, Status
from . import builder_methods
from .attrs import DictionaryAttr
from .context import CompilerContext
from .enums import OptFlag
from .extensions import check_extension, disabled_error
from .global_data import GlobalData, add_global, make_global
from .inst import Inst
from .nesting import MAX_NESTING, nesting_error, region_depth
from .ops import new_inst
from .region import Func, Prog, Region
from .types import DYNAMIC, MemrefType, NumberType, Type, element_type
from .values import Value
from .verify import check_placement, check_region_end, finish_func

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
# Frames in these files are the builder's own; the caller's location is the first frame outside.
_BUILDER_FILES = frozenset({__file__, builder_methods.__file__})


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
            with self.builder._rendering():
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
            with self.then.builder._rendering():
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
            with self.builder._rendering():
                # Region instructions whose `with` block was never entered (e.g. a for with
                # init values) were not checked on the way.
                for inst in self.func.body.walk():
                    for region in inst.regions:
                        check_region_end(region)
                finish_func(self.func)
                self.builder.prog.add_function(self.func)


class _Rendering:
    """`with builder._rendering():` gives a CompilationError raised inside its message with the
    builder's sources (file:line and the quoted line), as parse errors have theirs."""

    def __init__(self, ctx: CompilerContext) -> None:
        self.ctx = ctx

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type, exc, tb) -> None:
        if isinstance(exc, CompilationError):
            _render(self.ctx, exc)


def _render(ctx: CompilerContext, exc: CompilationError) -> None:
    """Gives `exc` its message with the builder's sources, unless it has one or no source."""
    if exc.rendered is None and exc.loc.begin.source_id:
        exc.rendered = ctx.format(exc)


class IRBuilder(builder_methods.InstructionMethods):
    """Builds a program: `function(...)` opens a kernel, one method per instruction appends at
    the insertion point (`region`), and the methods of instructions with regions return context
    managers that move the insertion point into them. `prog` is the program built so far."""

    def __init__(self, ctx: CompilerContext | None = None, region: Region | None = None) -> None:
        self.ctx = ctx or CompilerContext()
        self.prog = Prog(self.ctx)
        self.region = region
        self._source_ids: dict[str, int] = {}  # Python file -> source id in ctx
        # code object -> its instructions' (line, end line, column, end column), read once
        self._positions: dict[CodeType, list[tuple[int | None, ...]]] = {}

    # ---- locations ----------------------------------------------------------------------------

    def _rendering(self) -> _Rendering:
        return _Rendering(self.ctx)

    def _where(self, loc: Location | None) -> Location:
        """`loc`, or where the user's code called the builder: the first frame outside the
        builder's files, with its source registered in the context for error messages."""
        if loc is not None:
            if not isinstance(loc, Location):
                detail = f"`loc` must be a Location, got {loc!r}"
                raise CompilationError(UNKNOWN_LOCATION, Status.invalid_arguments, detail)
            return loc
        frame: FrameType | None = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename in _BUILDER_FILES:
            frame = frame.f_back
        if frame is None:
            return UNKNOWN_LOCATION
        return self._frame_location(frame)

    def _frame_location(self, frame: FrameType) -> Location:
        path = frame.f_code.co_filename
        sid = self._source_ids.get(path)
        if sid is None:
            text = "".join(linecache.getlines(path, frame.f_globals))
            sid = self._source_ids[path] = self.ctx.add_source(path, text)
        code = frame.f_code
        positions = self._positions.get(code)
        if positions is None:
            positions = self._positions[code] = list(code.co_positions())
        unit = frame.f_lasti // 2  # the call's instruction (2-byte code units)
        line, end_line, col, end_col = (
            positions[unit] if unit < len(positions) else (None, None, None, None)
        )
        if line is None or col is None or end_col is None:
            line = end_line = frame.f_lineno or 0  # None in a frame without a line number
            col, end_col = 0, len(linecache.getline(path, line).rstrip())
        return Location(Position(sid, line, col + 1), Position(sid, end_line or line, end_col + 1))

    # ---- functions and insertion --------------------------------------------------------------

    def function(
        self,
        name: str,
        param_types: list[Type],
        param_names: list[str] | None = None,
        attrs: DictionaryAttr | dict | None = None,
        param_attrs: list[DictionaryAttr | dict | None] | None = None,
        loc: Location | None = None,
    ) -> FunctionScope:
        """Opens the kernel `name` (``with b.function(...) as f:``, parameters in ``f.params``);
        it is added to `prog` when the block ends. `attrs` are the function's attributes
        (``{"subgroup_size": 16}``), `param_attrs` one dictionary (or None) per parameter."""
        loc = self._where(loc)
        with self._rendering():
            func = Func(name, list(param_types), loc, self._dict(attrs))
            _set_names(func.params, param_names, loc)
            if param_attrs is not None:
                func.param_attrs = [self._dict(a) for a in param_attrs]
        return FunctionScope(self, func)

    def _dict(self, attrs: object) -> DictionaryAttr | None:
        if attrs is None or isinstance(attrs, DictionaryAttr):
            return attrs
        if not isinstance(attrs, dict):
            detail = f"attributes must be a dict or a DictionaryAttr, got {attrs!r}"
            raise CompilationError(self._where(None), Status.invalid_arguments, detail)
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
        loc: Location | None = None,
        attrs: DictionaryAttr | dict | None = None,
    ) -> Inst:
        """Creates and inserts the instruction `mnemonic` from its table row's operand and
        property names (what every instruction method does)."""
        loc = self._where(loc)
        try:
            inst = new_inst(self.ctx, mnemonic, operands, props, ty, loc, attrs, self._dict, False)
            return self.insert(inst, name)
        except CompilationError as exc:
            _render(self.ctx, exc)
            raise

    def _build(
        self,
        mnemonic: str,
        operands: dict[str, Any],
        props: dict[str, Any],
        ty: Type | None,
        name: str | None,
        loc: Location | None,
        attrs: DictionaryAttr | dict | None,
    ) -> Any:
        """The body of the generated instruction methods: checks the properties, infers the
        result type where the operands give it, creates, and returns the result (or the
        instruction when it has none)."""
        # The errors get the builder's sources as inside `_rendering()`; a try costs nothing
        # when nothing is raised, unlike a context manager's two calls (every instruction a
        # lowering pass emits comes through here).
        loc = self._where(loc)
        try:
            inst = new_inst(self.ctx, mnemonic, operands, props, ty, loc, attrs, self._dict, True)
            self.insert(inst, name)
        except CompilationError as exc:
            _render(self.ctx, exc)
            raise
        return inst.result if inst.spec.result == "result" else inst

    def _scope(self, inst: Inst, param_names: list[str] | None) -> RegionScope:
        try:
            with self._rendering():
                _set_names(inst.regions[0].params, param_names, inst.loc)
        except CompilationError:
            if inst.parent is not None:  # always set: create() inserted it
                inst.parent.erase(inst)
            raise
        return RegionScope(self, inst.regions[0], inst)

    def global_(
        self, symbol: str, ty: Type, values: Any, loc: Location | None = None
    ) -> GlobalData:
        """Defines program-level constant data (the global extension, docs/extensions.md) from
        the values in column-major order; functions read it with `global_ref(ty, symbol=...)`."""
        loc = self._where(loc)
        with self._rendering():
            if not self.ctx.optimization_flag(OptFlag.extensions):
                raise disabled_error(loc, "'global'")
            scalar = ty.element if isinstance(ty, MemrefType) else ty
            data = make_global(symbol, ty, [python_number(v, scalar) for v in values], loc)
            add_global(self.prog, data)
        return data

    # ---- instructions with hand-written signatures --------------------------------------------

    def constant(
        self, value: Any, ty: Type, name: str | None = None, loc: Location | None = None
    ) -> Value:
        """A constant of type `ty` (a number, bool or coopmatrix type): a bool, int, float or
        complex value (:ref:`reference <inst-constant>`)."""
        value = python_number(value, ty)
        return self.create("constant", {}, {"value": value}, ty, name, loc).result

    def subview(
        self,
        operand: Value,
        offsets: list[int | Value],
        sizes: list[int | Value],
        ty: Type,
        name: str | None = None,
        loc: Location | None = None,
    ) -> Value:
        """A view of a block of `operand`: per mode an offset and a size (ints or index values);
        a size of 0 selects a single index and drops the mode, as in the text syntax
        (:ref:`reference <inst-subview>`)."""
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
        loc: Location | None = None,
    ) -> Value:
        """A view with mode `mode` of `operand` split into modes of the sizes `shape` (ints or
        index values) (:ref:`reference <inst-expand>`)."""
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
        init: Sequence[Value] = (),
        types: list[Type] | None = None,
        name: str | list[str] | None = None,
        attrs: DictionaryAttr | dict | None = None,
        param_names: list[str] | None = None,
        loc: Location | None = None,
    ) -> RegionScope:
        """Loop over [lb, ub); loop-carried values start at `init` (types default to theirs).
        `param_names` names the loop variable and then the loop-carried values. ``with`` the
        returned scope to build the body (it gives the loop variable and loop-carried values);
        ``.results`` are the final values (:ref:`reference <inst-for>`)."""
        init = list(init)
        if types is not None:
            types = list(types)
        else:  # a non-value in `init` is create()'s error
            types = [v.type if isinstance(v, Value) else v for v in init]
        ops = {"from": lb, "to": ub, "step": step, "iter_init": init}
        inst = self.create("for", ops, None, types, name, loc, attrs)
        return self._scope(inst, param_names)

    def if_(
        self,
        condition: Value,
        types: Sequence[Type] = (),
        name: str | list[str] | None = None,
        loc: Location | None = None,
    ) -> IfScope:
        """``with b.if_(cond, [types]) as (then, otherwise):``, then ``with then:`` and ``with
        otherwise:`` build the branches; ``.results`` are the values the branches yield
        (:ref:`reference <inst-if>`)."""
        inst = self.create("if", {"condition": condition}, None, list(types), name, loc)
        return IfScope(self, inst)

    def foreach(
        self,
        lbs: list[Value],
        ubs: list[Value],
        param_names: list[str] | None = None,
        loc: Location | None = None,
    ) -> RegionScope:
        """A parallel loop over [lbs, ubs); ``with`` the returned scope to build the body, which
        gives the loop variables (:ref:`reference <inst-foreach>`)."""
        inst = self.create("foreach", {"from": list(lbs), "to": list(ubs)}, None, None, None, loc)
        return self._scope(inst, param_names)

    def foreach_tile(
        self,
        lbs: list[Value],
        ubs: list[Value],
        tile_shape: list[int],
        param_names: list[str] | None = None,
        loc: Location | None = None,
    ) -> RegionScope:
        """A parallel loop over tiles of at most `tile_shape`; ``with`` the returned scope gives
        the tile offsets, then the tile sizes, which `param_names` names in that order
        (:ref:`reference <inst-foreach_tile>`)."""
        ops = {"from": list(lbs), "to": list(ubs)}
        inst = self.create("foreach_tile", ops, {"tile_shape": tuple(tile_shape)}, None, None, loc)
        return self._scope(inst, param_names)

    def parallel(self, loc: Location | None = None) -> RegionScope:
        """An SPMD region run by every work-item; ``with`` the returned scope to build it
        (:ref:`reference <inst-parallel>`)."""
        inst = self.create("parallel", {}, None, None, None, loc)
        return RegionScope(self, inst.regions[0], inst)

    def cooperative_matrix_apply(
        self,
        a: Value,
        ty: Type | None = None,
        name: str | None = None,
        param_names: list[str] | None = None,
        loc: Location | None = None,
    ) -> RegionScope:
        """Computes each entry of the coopmatrix `a` anew; ``with`` the returned scope gives the
        body's (row, col, value), which `param_names` names; the body ends with ``yield_``
        (:ref:`reference <inst-cooperative_matrix_apply>`)."""
        inst = self.create("cooperative_matrix_apply", {"a": a}, None, ty or a.type, name, loc)
        return self._scope(inst, param_names)

    def yield_(self, *values: Value, loc: Location | None = None) -> None:
        """Ends a ``for_`` or ``if_`` region with the values it hands on
        (:ref:`reference <inst-yield>`)."""
        self.create("yield", {"yielded_vals": list(values)}, None, None, None, loc)


def python_number(value: Any, ty: Any) -> Any:
    """A Python number as a constant of the type `ty`, as the parser makes constants: an int
    becomes a float for a floating type, a real or complex number (re, im) for a complex type
    (the builder takes what Python code naturally passes; the text asks for the exact kind).
    `ty` is what the caller passed, which create() checks."""
    scalar = element_type(ty) if isinstance(ty, Type) else None
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


def _set_names(values: list[Value], names: list[str] | None, loc: Location) -> None:
    """Names must be identifiers; purely numeric names mean "unnamed" (as in the parser)."""
    if not names:
        return
    if not isinstance(names, (list, tuple)):
        detail = f"names must be a str or a list of them, got {names!r}"
        raise CompilationError(loc, Status.invalid_arguments, detail)
    names = list(names)
    if len(names) > len(values):
        detail = f"{len(names)} names for {len(values)} values"
        raise CompilationError(loc, Status.invalid_arguments, detail)
    for n in names:
        if not isinstance(n, str) or n and not n.isdigit() and not _NAME.match(n):
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
