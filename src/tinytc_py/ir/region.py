"""Regions (ordered instruction lists with parameters), functions and programs."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from ..errors import UNKNOWN_LOCATION, CompilationError, Location, Status
from .enums import Exec
from .types import CoopmatrixType, Type
from .values import Value

if TYPE_CHECKING:
    from .attrs import DictionaryAttr
    from .context import CompilerContext
    from .global_data import GlobalData
    from .inst import Inst


class Region:
    """`kind` is collective, spmd or mixed; a mixed region takes the kind of its enclosing one."""

    __slots__ = ("kind", "owner", "params", "insts", "loc")

    def __init__(self, kind: Exec, owner: Inst | Func | None = None) -> None:
        self.kind = kind
        self.owner = owner
        self.params: list[Value] = []
        self.insts: list[Inst] = []
        self.loc = UNKNOWN_LOCATION

    def add_param(self, ty: Type, name: str = "", loc: Location = UNKNOWN_LOCATION) -> Value:
        v = Value(ty, name, loc)
        v.region = self
        self.params.append(v)
        return v

    def set_params(self, types: list[Type]) -> None:
        self.params = []
        for ty in types:
            self.add_param(ty)

    @property
    def parent_region(self) -> Region | None:
        owner = self.owner
        if owner is None or isinstance(owner, Func):
            return None
        return owner.parent

    def effective_kind(self) -> Exec:
        """Collective or spmd: mixed regions inherit from the closest non-mixed ancestor."""
        region: Region | None = self
        while region is not None:
            if region.kind is not Exec.mixed:
                return region.kind
            region = region.parent_region
        return Exec.collective

    def append(self, inst: Inst) -> Inst:
        inst.parent = self
        self.insts.append(inst)
        return inst

    def insert(self, index: int, inst: Inst) -> Inst:
        inst.parent = self
        self.insts.insert(index, inst)
        return inst

    def erase(self, inst: Inst) -> None:
        """Removes an instruction whose results are unused."""
        for res in inst.results:
            if res.has_uses():
                raise CompilationError(
                    inst.loc, Status.ir_value_still_has_uses, "value still has uses", [res]
                )
        inst.drop_uses()
        self.insts.remove(inst)
        inst.parent = None

    def walk(self) -> Iterator[Inst]:
        """Every instruction in this region and its subregions, pre-order.

        One generator with a stack, not one generator per region: a nested instruction
        reaches the caller in one step instead of one per level. As a recursive walk would, it
        reads each instruction list when it gets there (instructions added meanwhile are seen)
        and an instruction's regions right after yielding it. The position in a list is an
        index: removing the instruction just yielded, or one before it in its list, makes the
        walk skip the one after it (a pass that erases collects the instructions first,
        `list(region.walk())`); a region whose list is replaced (`region.insts = [...]`) while
        the walk is in it goes on in the list it was reading. Each level of the stack is a
        list of regions (this region, or an instruction's), the index of the region being
        walked, its instruction list and the index of the next instruction: plain lists and
        ints, which the compiled module indexes directly (iterator objects it would call)."""
        regions: list[list[Region]] = [[self]]
        region_at: list[int] = [0]
        lists: list[list[Inst]] = [self.insts]
        inst_at: list[int] = [0]
        while regions:
            insts = lists[-1]
            i = inst_at[-1]
            if i < len(insts):
                inst = insts[i]
                inst_at[-1] = i + 1
                yield inst
                inner = inst.regions
                if inner:
                    regions.append(inner)
                    region_at.append(0)
                    lists.append(inner[0].insts)
                    inst_at.append(0)
                continue
            r = region_at[-1] + 1
            outer = regions[-1]
            if r < len(outer):
                region_at[-1] = r
                lists[-1] = outer[r].insts
                inst_at[-1] = 0
            else:
                regions.pop()
                region_at.pop()
                lists.pop()
                inst_at.pop()


class Func:
    """A kernel: name, parameters (the body's parameters) with attributes, body region."""

    def __init__(
        self,
        name: object,
        param_types: Sequence[object],
        loc: Location = UNKNOWN_LOCATION,
        attrs: DictionaryAttr | None = None,
    ) -> None:
        """`name` and `param_types` as the builder got them from the user: checked here."""
        if not isinstance(name, str):
            detail = f"the function name must be a str, got {name!r}"
            raise CompilationError(loc, Status.invalid_arguments, detail)
        self.name = name
        self.loc = loc
        self.attrs = attrs
        self.body = Region(Exec.collective, self)
        self.param_attrs: list[DictionaryAttr | None] = []
        # bounds-checked mode: the message template of each check id (insert-bounds-checks)
        self.bounds_checks: list[str] | None = None
        for ty in param_types:
            if not isinstance(ty, Type):
                detail = f"a parameter type must be a type, got {ty!r}"
                raise CompilationError(loc, Status.invalid_arguments, detail)
            if isinstance(ty, CoopmatrixType):
                raise CompilationError(
                    loc, Status.ir_coopmatrix_unsupported, "arguments must not have coopmatrix type"
                )
            self.body.add_param(ty)
            self.param_attrs.append(None)

    @property
    def params(self) -> list[Value]:
        return self.body.params


class Prog:
    """A program: functions sharing one compiler context, and the constant data they may read
    (`globals`, the global_data extension)."""

    def __init__(self, ctx: CompilerContext, loc: Location = UNKNOWN_LOCATION) -> None:
        self.ctx = ctx
        self.loc = loc
        self.funcs: list[Func] = []
        self.globals: dict[str, GlobalData] = {}
        # Set by the current-language parser (text/dialect.py) on the program it returns, whose
        # every function it verified as check-ir verifies one. It is not cleared by changes:
        # only a caller that hands the parse on unchanged may rely on it (compiler.compile_text
        # tells the pipeline so, passes/pipeline.py).
        self.verified_by_parser = False

    def add_function(self, func: Func) -> Func:
        """Appends `func`; raises if a global holds its name (a program's functions and globals
        share one namespace; two functions of one name are a check-ir error)."""
        if func.name in self.globals:
            raise CompilationError(
                func.loc,
                Status.ext_global_redefined,
                f"@{func.name} is already defined as a global; a function cannot have its name",
            )
        self.funcs.append(func)
        return func

    def has_function(self, name: str) -> bool:
        return any(f.name == name for f in self.funcs)
