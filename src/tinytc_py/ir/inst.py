"""Instruction base class and the declarative instruction spec that drives parser, printer,
builder and (later) the C API creators.

An `InstSpec` row says, once per instruction: its mnemonic, its properties (modifiers and integer
parameters, in C API order), its operands (single, optional `?` or variadic `*`, in C API order),
whether it returns one value or a list, its regions, where it may appear (collective / spmd /
mixed), its memory effects, its text format, and whether it is a language extension (rejected
when the compiler context's `extensions` flag is off). The classes in ops/ supply the verification
that the language reference's "Restrictions" demand.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import UNKNOWN_LOCATION, CompilationError, Location, Status
from .enums import Exec, ResultUniformity, Syntax
from .region import Region
from .types import Type
from .values import Use, Value

if TYPE_CHECKING:
    from .attrs import DictionaryAttr


@dataclass(frozen=True)
class Prop:
    """A property: `kind` is "flag" (a `.name` modifier), an IntEnum class (a `.case` modifier),
    "int" / "ints" (integer constants in the operand list), or "fence" (barrier address spaces).
    `default` is the value when the modifier is absent."""

    name: str
    kind: Any
    default: Any = None


@dataclass(frozen=True)
class InstSpec:
    mnemonic: str
    props: tuple[Prop, ...] = ()
    operands: tuple[str, ...] = ()  # "name", "name?" (optional) or "name*" (variadic)
    result: str = ""  # "" (none), "result" (one value), "results*" (list: if / for)
    regions: tuple[str, ...] = ()  # region names; their kind comes from the class
    exec: Exec = Exec.mixed
    fmt: str | None = None  # None: hand-written text syntax (text/parser.py, text/printer.py)
    side_effects: bool = False
    reads: tuple[str, ...] = ()  # operand names read from memory
    writes: tuple[str, ...] = ()  # operand names written to memory
    builder_name: str = ""
    extra: dict = field(default_factory=dict)
    extension: bool = False  # a tinytc-py language extension (docs/extensions.md)
    # the hand-written text syntax of a row without `fmt` (its hooks: text/parser.py's
    # PARSE_HOOKS, text/printer.py's PRINT_HOOKS)
    syntax: Syntax | None = None
    # dynamic uniformity (ir/uniformity.py): the results' uniformity, the operands the
    # reference requires to be dynamically uniform (("*",): all of them) and whether the
    # region parameters are varying (foreach's loop variables, ...)
    uniformity: ResultUniformity = ResultUniformity.follows_operands
    uniform_operands: tuple[str, ...] = ()
    varying_params: bool = False
    # Derived once from the fields above, as every instruction created, parsed or printed reads
    # them: (name, "" / "?" / "*") of each operand, property name → default (in `props` order),
    # and the format's words as (kind, key) pairs (see format_steps).
    operand_slots: tuple[tuple[str, str], ...] = field(init=False, repr=False, compare=False)
    prop_defaults: dict[str, Any] = field(init=False, repr=False, compare=False)
    fmt_steps: tuple[tuple[str, str], ...] = field(init=False, repr=False, compare=False)
    # A row whose operands are all single and required (most rows): the operand names in order,
    # and the segments every instruction of the row has, shared by them (None for the others):
    # read-only, as every instruction of the row holds this one mapping.
    operand_keys: tuple[str, ...] = field(init=False, repr=False, compare=False)
    fixed_segments: Mapping[str, tuple[int, int]] | None = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        slots = tuple((o.rstrip("?*"), o[-1] if o[-1] in "?*" else "") for o in self.operands)
        object.__setattr__(self, "operand_slots", slots)
        object.__setattr__(self, "operand_keys", tuple(key for key, _ in slots))
        fixed = None
        if all(suffix == "" for _, suffix in slots):
            fixed = MappingProxyType({key: (i, i + 1) for i, (key, _) in enumerate(slots)})
        object.__setattr__(self, "fixed_segments", fixed)
        object.__setattr__(self, "prop_defaults", {p.name: p.default for p in self.props})
        object.__setattr__(self, "fmt_steps", format_steps(self.fmt or ""))
        if (self.fmt is None) != (self.syntax is not None):
            raise ValueError(f"{self.mnemonic}: a row has either a format or a hand-written syntax")
        if self.uniform_operands == ("*",):
            object.__setattr__(self, "uniform_operands", tuple(key for key, _ in slots))

    @property
    def python_name(self) -> str:
        return self.builder_name or self.mnemonic


def format_steps(fmt: str) -> tuple[tuple[str, str], ...]:
    """The words of a text format as (kind, key): ("$", operand), ("$*", variadic operand),
    ("#", integer property), ("@", global-name property), ("type", ""), ("attrs?", "") or
    ("", literal word)."""
    steps = []
    for word in fmt.split():
        if word in ("type", "attrs?"):
            steps.append((word, ""))
        elif word[0] == "$" and word[-1] == "*":
            steps.append(("$*", word[1:-1]))
        elif word[0] in "$#@":
            steps.append((word[0], word[1:]))
        else:
            steps.append(("", word))
    return tuple(steps)


class Inst:
    """An instruction: operands (with use lists), results, regions, properties and attributes.

    Each instruction's class is its table row's (see ops/__init__.py); verification lives in the
    family base classes' `verify` and runs in `__init__`, so no invalid instruction exists.
    """

    __slots__ = ("uses", "_segments", "results", "regions", "props", "attrs", "loc", "parent")

    spec: ClassVar[InstSpec]
    name: ClassVar[str]  # the spec's mnemonic, set on each leaf class (read very often)
    region_kinds: ClassVar[tuple[Exec, ...]] = ()
    # True on a family class (declared in its own body): each of its table rows gets a subclass
    is_family: ClassVar[bool] = False

    def __init__(
        self,
        operands: Mapping[str, object],
        props: dict[str, Any] | None = None,
        result_types: object = None,
        loc: Location = UNKNOWN_LOCATION,
        attrs: DictionaryAttr | None = None,
        verify: bool = True,
    ) -> None:
        """`operands` by name (a variadic one as a list), `result_types` a Type, a list of them
        or None; both as the builder and the C API got them from the user: checked here.
        `verify=False` only for a copy of a verified instruction (`copy_with`)."""
        # Every instruction parsed, built or made by a pass comes through here: attributes,
        # methods and globals go into locals first.
        self.loc = loc
        self.parent: Region | None = None
        self.attrs = attrs
        spec = self.spec
        # the spec's properties, given values replacing defaults (other keys are ignored)
        values: dict[str, Any] = dict(spec.prop_defaults)
        self.props = values
        if props:
            for key, value in props.items():
                if key in values:
                    values[key] = value
        results: list[Value] = []
        self.results = results
        try:
            self._bind_operands(spec, operands)
            if result_types is not None:
                for ty in result_types if isinstance(result_types, list) else (result_types,):
                    if not isinstance(ty, Type):  # the builder's `ty` list comes from the user
                        raise CompilationError(
                            loc, Status.invalid_arguments, f"expected a type, got {ty!r}"
                        )
                    v = Value(ty, "", loc)
                    v.defining_inst = self
                    results.append(v)
        except CompilationError:
            # the user's operands stay as they were: no use of an instruction that is not made
            for use in self.uses:
                use.drop()
            raise
        # the class attribute is a generic lookup each; the spec's region names (a native
        # field) say whether there are any (tests/test_ops.py: as many as region_kinds)
        kinds = self.region_kinds if spec.regions else ()
        if kinds:
            self.regions: list[Region] = [Region(kind, self) for kind in kinds]
        else:
            self.regions = []
        if verify:
            try:
                self.verify()
            except CompilationError:
                self.drop_uses()
                raise
        if kinds:
            for region, types in zip(self.regions, self.region_param_types()):
                region.set_params(types)

    def _bind_operands(self, spec: InstSpec, operands: Mapping[str, object]) -> None:
        """The use list in the spec's operand order and each operand's segment of it. The
        operands come from the builder and the C API as given (a variadic one as any iterable):
        each is checked to be a `Value` here."""
        uses: list[Use] = []
        self.uses = uses
        # every caller passes a dict: its `get` is a direct call, a Mapping's a method lookup
        given: dict[str, object] = operands if isinstance(operands, dict) else dict(operands)
        fixed = spec.fixed_segments
        if fixed is not None:  # single required operands: one use each, the row's segments
            self._segments = fixed
            for key in spec.operand_keys:
                value = given.get(key)
                if not isinstance(value, Value):
                    if value is None:
                        raise CompilationError(
                            self.loc, Status.invalid_arguments, f"missing operand '{key}'"
                        )
                    raise self._not_a_value(value)
                uses.append(Use(self, len(uses), value))
            return
        segments: dict[str, tuple[int, int]] = {}
        self._segments = segments
        for key, suffix in spec.operand_slots:
            value = given.get(key)
            start = len(uses)
            if suffix == "*":
                if value is None:
                    pass
                elif isinstance(value, (list, tuple)) or (
                    isinstance(value, Iterable) and not isinstance(value, str)
                ):
                    for v in value:
                        if not isinstance(v, Value):
                            raise self._not_a_value(v)
                        uses.append(Use(self, len(uses), v))
                else:
                    raise CompilationError(
                        self.loc,
                        Status.invalid_arguments,
                        f"operand '{key}' must be a sequence of values, got {value!r}",
                    )
            elif value is not None:
                if not isinstance(value, Value):
                    raise self._not_a_value(value)
                uses.append(Use(self, start, value))
            elif suffix != "?":
                raise CompilationError(
                    self.loc, Status.invalid_arguments, f"missing operand '{key}'"
                )
            segments[key] = (start, len(uses))

    def _not_a_value(self, value: Any) -> CompilationError:
        return CompilationError(
            self.loc, Status.invalid_arguments, f"expected a value, got {value!r}"
        )

    def copy_with(self, operands: list[Value]) -> Inst:
        """A copy of this instruction on `operands` (one per use, in order, each of the type of
        the operand it replaces) with unnamed results and empty regions, made without verifying
        again: `verify` reads only the operands' types, properties and attributes, all the same
        as here. The passes' cloning takes this path when the types allow it. (It goes through
        the constructor: a class compiled by mypyc cannot be made by `__new__` alone.)"""
        by_key: dict[str, object] = {}
        spec = self.spec
        if spec.fixed_segments is not None:  # one operand per name, in order
            for i, key in enumerate(spec.operand_keys):
                by_key[key] = operands[i]
        else:
            for key, suffix in spec.operand_slots:
                start, stop = self._segments[key]
                if suffix == "*":
                    by_key[key] = operands[start:stop]
                elif stop > start:
                    by_key[key] = operands[start]
        result_types = [r.type for r in self.results]
        return type(self)(by_key, self.props, result_types, self.loc, self.attrs, False)

    # ---- access -------------------------------------------------------------------------------

    @property
    def operands(self) -> list[Value]:
        return [u.value for u in self.uses]

    def operand(self, key: str) -> Value | None:
        start, stop = self._segments[key]
        return self.uses[start].value if stop > start else None

    def required(self, key: str) -> Value:
        """The operand `key` of a row without `?` or `*` (the verifiers' access: a `Value`, not
        an Optional). Such an operand is always bound (`_bind_operands` rejects its absence);
        asking for an absent one is a located error, not the next operand."""
        start, stop = self._segments[key]
        if stop == start:
            raise CompilationError(self.loc, Status.invalid_arguments, f"missing operand '{key}'")
        return self.uses[start].value

    def operand_list(self, key: str) -> list[Value]:
        start, stop = self._segments[key]
        return [u.value for u in self.uses[start:stop]]

    @property
    def result(self) -> Value:
        return self.results[0]

    @property
    def exec_kind(self) -> Exec:
        return self.spec.exec

    def drop_uses(self) -> None:
        for use in self.uses:
            use.drop()
        self.uses = []
        for region in self.regions:
            for inst in region.insts:
                inst.drop_uses()

    def error(self, status: Status, detail: str = "", *values: Value) -> CompilationError:
        """An error located at this instruction, pointing at the involved values."""
        return CompilationError(self.loc, status, detail, values)

    def verify(self) -> None:
        """Checks the instruction's own restrictions; overridden by the families."""

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        """The result type that follows from the operands, for the builder (None: ask the user)."""
        return None

    def region_param_types(self) -> list[list[Type]]:
        """Parameter types of each region (loop variables, loop-carried values, ...)."""
        return [[] for _ in self.regions]

    def check_attrs(self) -> None:
        """Checks the attribute dictionary, also when a parser sets it after the instruction's
        region; overridden by the instructions that read attributes."""

    def verify_subgroup_size(self, sgs: int) -> None:
        """Checks the restrictions that need the subgroup size, once the function fixes it;
        overridden by the instructions that have some."""

    def __repr__(self) -> str:
        return f"<inst {self.name} at {self.loc}>"
