"""The builder the rewriting passes (lower-linalg, lower-foreach, lower-coopmatrix) emit code with.

`IRBuilder.insert` checks every instruction the way the parser does (the extensions flag,
collective / SPMD placement, visibility of the operands, the syntax of value names), because a
program built by hand may break any rule. What a pass appends is either a copy of an instruction
that passed those checks already or code of the lowering's own making, and the pipeline ends
with check-ir, which verifies the whole function again; repeating the checks per instruction
cost about a fifth of a lowering. `PassBuilder` keeps only the nesting limit (a lowering adds
region levels, and deeper nesting must stay a located error) and the instruction's own
verification, which runs when it is created.

Two of the skipped checks are not made again by check-ir. The lookup of a global_ref's symbol
is done by the SPIR-V conversion against the real program (the lowerings run with no program
at hand: IRBuilder's lookup against an empty one rejected every global_ref inside a foreach or
cooperative_matrix_apply body, tests/exec/test_exec_global.py::test_global_ref_inside_*), and
the syntax of result names, which the lowerings copy from checked code or make themselves.
A lowering's output is verified only by the pipeline's final check-ir: running a lowering
alone (`tinytc-opt -p lower-foreach`) is not followed by a verification.

The lowerings make their instructions with `emit` / `value` rather than the builder's
instruction methods: ir/builder.py and the generated builder_methods.py stay interpreted (their
annotations serve the user's type checker, their locations come from the caller's frame), so a
method call costs 1-2 us of interpreted frames on top of the compiled `new_inst`, and a GEMM's
lowering makes hundreds of instructions. `emit` makes the instruction as the method of that
name does (`new_inst` with the method's property checks and result-type inference), so the
output is the same instruction, located where the pass says. `for_` and `if_` are overridden
for the same reason (their scopes check the regions' ends on exit as the builder's do, without
its error rendering).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import CodeType
from typing import Any, cast

from ..errors import UNKNOWN_LOCATION, Location
from ..ir.attrs import DictionaryAttr
from ..ir.builder import IfScope, IRBuilder, RegionScope, python_number
from ..ir.context import CompilerContext
from ..ir.inst import Inst
from ..ir.nesting import MAX_NESTING, nesting_error, region_depth
from ..ir.ops import new_inst
from ..ir.region import Prog, Region
from ..ir.types import Type
from ..ir.values import Value
from ..ir.verify import check_region_end


class PassRegionScope(RegionScope):
    """RegionScope whose exit checks the region's end without the builder's error rendering
    (a pass's errors are rendered when the pipeline reports them, as `emit`'s are). Its
    `__init__` and `__enter__` do what RegionScope's do, here so that they run compiled (the
    interpreted ones cost about 1 us per loop or branch a lowering makes)."""

    def __init__(self, builder: IRBuilder, region: Region, inst: Inst | None = None) -> None:
        self.builder = builder
        self.region = region
        self.inst = inst
        self._saved: Region | None = None

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


class PassIfScope(IfScope):
    """IfScope of two PassRegionScopes, checking both ends on exit without rendering."""

    def __init__(self, builder: IRBuilder, inst: Inst) -> None:
        self.inst = inst
        self.then = PassRegionScope(builder, inst.regions[0], inst)
        self.otherwise = PassRegionScope(builder, inst.regions[1], inst)

    def __enter__(self) -> tuple[RegionScope, RegionScope]:
        """IfScope.__enter__ again: here it runs compiled, as the scope's other methods do
        (tests/test_pass_builder_copies.py checks that the copies match the originals)."""
        return self.then, self.otherwise

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            check_region_end(self.inst.regions[0])
            check_region_end(self.inst.regions[1])


class PassBuilder(IRBuilder):
    """An IRBuilder that appends without the checks made for hand-built code, and whose
    instructions are located where the pass says (never at the pass's own Python line)."""

    def __init__(self, ctx: CompilerContext, region: Region | None = None) -> None:
        """IRBuilder.__init__, compiled (a lowering makes a builder per instruction it lowers)."""
        self.ctx = ctx
        self.prog = Prog(ctx)
        self.region = region
        self._source_ids: dict[str, int] = {}
        self._positions: dict[CodeType, list[tuple[int | None, ...]]] = {}

    def _where(self, loc: Location | None) -> Location:
        return UNKNOWN_LOCATION if loc is None else loc

    def insert(self, inst: Inst, name: str | list[str] | None = None) -> Inst:
        """Appends at the insertion point; `name` (one or one per result) names the results."""
        region = self.region
        if inst.regions and region_depth(region) >= MAX_NESTING:
            inst.drop_uses()
            raise nesting_error(inst.loc)
        if name is not None:
            for value, n in zip(inst.results, [name] if isinstance(name, str) else name):
                value.name = n
        region.append(inst)
        return inst

    def emit(
        self,
        mnemonic: str,
        operands: dict[str, Any],
        props: dict[str, Any] | None = None,
        ty: Type | None = None,
        loc: Location = UNKNOWN_LOCATION,
    ) -> Inst:
        """Appends the instruction `mnemonic` as the builder's method of that name makes it
        (`ty` None: the type the operands give); `props` holds every property the method
        passes, defaults included."""
        inst = new_inst(self.ctx, mnemonic, operands, props, ty, loc, None, self._dict, True)
        return self.insert(inst)

    def value(
        self,
        mnemonic: str,
        operands: dict[str, Any],
        props: dict[str, Any] | None = None,
        ty: Type | None = None,
        loc: Location = UNKNOWN_LOCATION,
    ) -> Value:
        """The result of `emit(...)`."""
        return self.emit(mnemonic, operands, props, ty, loc).results[0]

    def constant(
        self, value: Any, ty: Type, name: str | None = None, loc: Location | None = None
    ) -> Value:
        """IRBuilder.constant without its interpreted frames (the number converted as it
        converts it)."""
        inst = self.emit("constant", {}, {"value": python_number(value, ty)}, ty, self._where(loc))
        if name is not None:
            inst.results[0].name = name
        return inst.results[0]

    def yield_(self, *values: Value, loc: Location | None = None) -> None:
        """IRBuilder.yield_ without its interpreted frames."""
        self.emit("yield", {"yielded_vals": list(values)}, None, None, self._where(loc))

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
        """IRBuilder.for_ without its interpreted frames (a lowering makes a loop or two per
        foreach and per GEMM block). Names, which no lowering gives, and a non-value in `init`
        (IRBuilder.for_ reports it as a located CompilationError) take the builder's way."""
        given: list[object] = list(init)  # not list[Value]: compiled code would check each item
        if (
            name is not None
            or param_names is not None
            or not all(isinstance(v, Value) for v in given)
        ):
            return IRBuilder.for_(self, lb, ub, step, init, types, name, attrs, param_names, loc)
        iter_init = cast(list[Value], given)
        result_types = list(types) if types is not None else [v.type for v in iter_init]
        ops = {"from": lb, "to": ub, "step": step, "iter_init": iter_init}
        where = self._where(loc)
        inst = new_inst(self.ctx, "for", ops, None, result_types, where, attrs, self._dict, False)
        self.insert(inst)
        return PassRegionScope(self, inst.regions[0], inst)

    def if_(
        self,
        condition: Value,
        types: Sequence[Type] = (),
        name: str | list[str] | None = None,
        loc: Location | None = None,
    ) -> IfScope:
        """IRBuilder.if_ without its interpreted frames."""
        if name is not None:
            return IRBuilder.if_(self, condition, types, name, loc)
        ops = {"condition": condition}
        where = self._where(loc)
        inst = new_inst(self.ctx, "if", ops, None, list(types), where, None, self._dict, False)
        self.insert(inst)
        return PassIfScope(self, inst)
