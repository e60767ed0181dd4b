"""The compiler context: owns interned types and attributes, the registered sources, the error
reporter, and the optimization settings. One context can serve many programs.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Final, TypeVar

from ..errors import (
    UNKNOWN_LOCATION,
    CompilationError,
    Location,
    Status,
    format_error,
)
from .attrs import (
    ArrayAttr,
    Attr,
    BooleanAttr,
    DictionaryAttr,
    IntegerAttr,
    StringAttr,
    is_printable_string,
)
from .enums import OPT_FLAG_DEFAULTS, AddressSpace, MatrixUse, OptFlag
from .types import (
    DYNAMIC,
    BooleanType,
    CoopmatrixType,
    GroupType,
    MemrefType,
    NumberType,
    ScalarKind,
    Type,
    VoidType,
    canonical_stride,
    dyn_str,
)

ErrorReporter = Callable[[str, Location], None]
_T = TypeVar("_T", bound="Type | Attr")


INT64_MAX = 2**63 - 1


def _check_span(shape: tuple[int, ...], stride: tuple[int, ...], loc: Location) -> None:
    """Static strides and the static part of the largest element offset fit int64, the type of
    the addresses the SPIR-V conversion computes."""
    span = 0
    for n, s in zip(shape, stride):
        if s != DYNAMIC and s > INT64_MAX:
            raise CompilationError(loc, Status.ir_invalid_stride, f"stride {s} exceeds 2^63-1")
        if DYNAMIC not in (n, s) and n > 0:
            span += (n - 1) * s
    if span > INT64_MAX:
        raise CompilationError(
            loc, Status.ir_invalid_shape, f"memref spans {span + 1} elements, more than 2^63-1"
        )


def _not_a(kind: type, what: str, value: object, loc: Location) -> CompilationError:
    """The located error for an argument that is no `kind` (an int given for an enum member)."""
    detail = f"{what} must be of type {kind.__name__}, got {value!r}"
    return CompilationError(loc, Status.invalid_arguments, detail)


def _check_column_major(shape: tuple[int, ...], stride: tuple[int, ...], loc: Location) -> None:
    """The strided layout restrictions 1 <= S_1 and S_{i-1} s_{i-1} <= S_i (static entries only)."""
    if stride and stride[0] != DYNAMIC and stride[0] < 1:
        raise CompilationError(
            loc, Status.ir_invalid_stride, f"the first stride must be at least 1, got {stride[0]}"
        )
    for i in range(1, len(stride)):
        s0, n0, s1 = stride[i - 1], shape[i - 1], stride[i]
        if DYNAMIC not in (s0, n0, s1) and s0 * n0 > s1:
            raise CompilationError(
                loc,
                Status.ir_invalid_stride,
                f"stride {s1} of mode {i} must be at least stride x size of mode {i - 1} "
                f"({s0}x{n0} = {s0 * n0})",
            )


#: The statuses `memref` hands to `_extents` on every call, read once: in the compiled module a
#: Status member costs a lookup through the enum class, a tenth of a memref type's checks.
_INVALID_SHAPE: Final = Status.ir_invalid_shape
_INVALID_STRIDE: Final = Status.ir_invalid_stride


def _extents(values: object, what: str, status: Status, loc: Location) -> tuple[int, ...]:
    """Sizes, strides or offsets as ints: None stands for DYNAMIC ('?'); anything but an int
    is a located error (a float or a string would otherwise fail deep in a comparison), and so
    is anything but a sequence of them (the builder's and the C API's arguments as given)."""
    if not isinstance(values, (list, tuple)) and (
        isinstance(values, str) or not isinstance(values, Iterable)
    ):
        detail = f"{what}s must be a sequence of ints, DYNAMIC or None ('?'), got {values!r}"
        raise CompilationError(loc, status, detail)
    out = []
    for v in values:
        if type(v) is int:  # nearly always: no conversion
            out.append(v)
            continue
        if v is None:
            out.append(DYNAMIC)
            continue
        try:
            if isinstance(v, bool):
                raise TypeError
            out.append(operator.index(v))  # int, NumPy integers
        except TypeError:
            detail = f"{what} must be an int, DYNAMIC or None ('?'), got {v!r}"
            raise CompilationError(loc, status, detail) from None
    return tuple(out)


_KINDS = tuple(ScalarKind)
"""The number kinds in their order of definition, listed once: iterating an enum is slow
enough to be most of the cost of a new context (a kernel-cache hit makes one)."""


def _lines(text: str) -> list[str]:
    """The lines of `text` as CompilerContext.source gives them."""
    lines = text.split("\n")
    if not lines[-1]:
        lines.pop()  # the end of the last line, or of an empty text
    return [line[:-1] if line.endswith("\r") else line for line in lines]


class CompilerContext:
    """Interns types/attributes through dicts keyed by their defining parts."""

    def __init__(self) -> None:
        self._interned: dict[tuple, Type | Attr] = {}
        # the name and text of each source, and its lines once an error message asks for them
        self._sources: list[tuple[str, str]] = []
        self._source_lines: list[list[str] | None] = []
        self.reporter: ErrorReporter | None = None
        self.opt_level = 2
        self._opt_flags: dict[OptFlag, int] = {}
        self.void = self._add(("void",), VoidType(self))
        self.bool = self._add(("bool",), BooleanType(self))
        made = [NumberType(self, kind) for kind in _KINDS]
        self.numbers: dict[ScalarKind, NumberType] = {}
        for ty in made:
            self.numbers[ty.kind] = ty
        # ScalarKind's order; assigned by name, not by setattr (a generic call when compiled)
        (
            self.i8,
            self.i16,
            self.i32,
            self.i64,
            self.index,
            self.bf16,
            self.f16,
            self.f32,
            self.f64,
            self.c32,
            self.c64,
        ) = made

    # Typed aliases for the attributes set in __init__ (for readers and type checkers).
    i8: NumberType
    i16: NumberType
    i32: NumberType
    i64: NumberType
    index: NumberType
    bf16: NumberType
    f16: NumberType
    f32: NumberType
    f64: NumberType
    c32: NumberType
    c64: NumberType

    def _add(self, key: tuple, obj: _T) -> _T:
        """Interns `obj`, made after `key` was not found. (Each maker looks its key up itself:
        a callback making the object would turn the maker's locals into a closure's, slow in
        the compiled module.)"""
        self._interned[key] = obj
        return obj

    # ---- sources and errors -------------------------------------------------------------------

    def add_source(self, name: str, text: str) -> int:
        """Registers a source for diagnostics; ids start at 1 (0 means unknown)."""
        self._sources.append((name, text))
        self._source_lines.append(None)
        return len(self._sources)

    def source(self, source_id: int) -> tuple[str, list[str]]:
        """The name and the lines of a source. The lines are split on the first request: only
        an error message quotes them, and splitting every parsed text cost about 2 % of a
        parse. They are split as the lexer counts them (text/lexer.py): a line starts only
        after "\n" (str.splitlines also splits at "\r", "\x0c", "\u2028"... and would quote
        the wrong line), and a line's "\r" of a CRLF end, whitespace to the lexer, is left
        out; no line follows a final "\n"."""
        if 1 <= source_id <= len(self._sources):
            name, text = self._sources[source_id - 1]
            lines = self._source_lines[source_id - 1]
            if lines is None:
                lines = self._source_lines[source_id - 1] = _lines(text)
            return name, lines
        return ("", [])

    def format(self, err: CompilationError) -> str:
        return format_error(self, err)

    def report(self, err: CompilationError) -> CompilationError:
        """Renders the message once, hands it to the reporter, and returns the error to raise."""
        if err.rendered is None:
            err.rendered = self.format(err)
            if self.reporter is not None:
                self.reporter(err.rendered, err.loc)
        return err

    # ---- optimization settings ----------------------------------------------------------------

    def set_optimization_flag(self, flag: object, state: object) -> None:
        """state < 0 restores the flag's default (`OPT_FLAG_DEFAULTS`)."""
        if not isinstance(flag, OptFlag):
            raise _not_a(OptFlag, "the optimization flag", flag, UNKNOWN_LOCATION)
        if not isinstance(state, int):
            raise _not_a(int, "the flag's state", state, UNKNOWN_LOCATION)
        if state < 0:
            self._opt_flags.pop(flag, None)
        else:
            self._opt_flags[flag] = 1 if state else 0

    def optimization_flag(self, flag: OptFlag) -> bool:
        if flag in self._opt_flags:
            return bool(self._opt_flags[flag])
        return OPT_FLAG_DEFAULTS[flag]

    # ---- types --------------------------------------------------------------------------------

    def number(self, kind: object) -> NumberType:
        if not isinstance(kind, ScalarKind):
            raise _not_a(ScalarKind, "the number kind", kind, UNKNOWN_LOCATION)
        return self.numbers[kind]

    def memref(
        self,
        element: object,
        shape: Sequence[int | None],
        stride: Sequence[int | None] | None = None,
        addrspace: object = AddressSpace.global_,
        loc: Location = UNKNOWN_LOCATION,
    ) -> MemrefType:
        """The memref type ``memref<element x shape, strided<stride>, addrspace>``: each entry
        of `shape` and `stride` is an int, or `DYNAMIC` (or None) for a size known only at run
        time ('?'); the stride defaults to the packed column-major one."""
        if not isinstance(element, NumberType):
            raise CompilationError(
                loc, Status.ir_expected_number, "memref element must be a number type"
            )
        if not isinstance(addrspace, AddressSpace):
            raise _not_a(AddressSpace, "the address space", addrspace, loc)
        shape = _extents(shape, "mode size", _INVALID_SHAPE, loc)
        for s in shape:
            if s < 0 and s != DYNAMIC:
                raise CompilationError(loc, Status.ir_invalid_shape, f"invalid mode size {s}")
        if stride is None or len(stride) == 0 and len(shape) == 0:
            stride = canonical_stride(shape)
        stride = _extents(stride, "stride", _INVALID_STRIDE, loc)
        if len(stride) != len(shape):
            raise CompilationError(
                loc, Status.ir_shape_stride_mismatch, "shape and stride must have the same length"
            )
        for s in stride:
            if s < 0 and s != DYNAMIC:
                raise CompilationError(loc, Status.ir_invalid_stride, f"invalid stride {s}")
        _check_column_major(shape, stride, loc)
        _check_span(shape, stride, loc)
        key = ("memref", element, shape, stride, addrspace)
        found = self._interned.get(key)
        return (
            found
            if isinstance(found, MemrefType)
            else self._add(key, MemrefType(self, element, shape, stride, addrspace))
        )

    def group(
        self,
        memref: object,
        size: object,
        offset: object = 0,
        loc: Location = UNKNOWN_LOCATION,
    ) -> GroupType:
        """The group type ``group<memref x size, offset: offset>``: `size` and `offset` are
        ints, or `DYNAMIC` (or None) for '?'."""
        if not isinstance(memref, MemrefType):
            raise CompilationError(loc, Status.ir_expected_memref, "group element must be a memref")
        (size,) = _extents([size], "group size", Status.ir_invalid_shape, loc)
        (offset,) = _extents([offset], "group offset", Status.ir_invalid_offset, loc)
        if size < 0 and size != DYNAMIC:
            raise CompilationError(loc, Status.ir_invalid_shape, f"invalid group size {size}")
        if offset < 0 and offset != DYNAMIC:
            raise CompilationError(loc, Status.ir_invalid_offset, f"invalid group offset {offset}")
        key = ("group", memref, size, offset)
        found = self._interned.get(key)
        return (
            found
            if isinstance(found, GroupType)
            else self._add(key, GroupType(self, memref, size, offset))
        )

    def coopmatrix(
        self,
        component: object,
        rows: object,
        cols: object,
        use: object,
        loc: Location = UNKNOWN_LOCATION,
    ) -> CoopmatrixType:
        if not isinstance(component, NumberType):
            raise CompilationError(
                loc, Status.ir_expected_number, "coopmatrix component must be a number type"
            )
        rows, cols = _extents((rows, cols), "coopmatrix size", Status.ir_invalid_shape, loc)
        if not isinstance(use, MatrixUse):
            raise _not_a(MatrixUse, "the matrix use", use, loc)
        if rows <= 0 or cols <= 0 or rows == DYNAMIC or cols == DYNAMIC:
            raise CompilationError(
                loc,
                Status.ir_invalid_shape,
                f"coopmatrix rows and columns must be positive, got {dyn_str(rows)}x{dyn_str(cols)}",
            )
        key = ("coopmatrix", component, rows, cols, use)
        found = self._interned.get(key)
        return (
            found
            if isinstance(found, CoopmatrixType)
            else self._add(key, CoopmatrixType(self, component, rows, cols, use))
        )

    # ---- attributes ---------------------------------------------------------------------------

    def boolean_attr(self, value: object) -> BooleanAttr:
        value = bool(value)
        key = ("battr", value)
        found = self._interned.get(key)
        return found if isinstance(found, BooleanAttr) else self._add(key, BooleanAttr(self, value))

    def integer_attr(self, value: object) -> IntegerAttr:
        if not isinstance(value, int):
            raise _not_a(int, "an integer attribute", value, UNKNOWN_LOCATION)
        key = ("iattr", value)
        found = self._interned.get(key)
        return found if isinstance(found, IntegerAttr) else self._add(key, IntegerAttr(self, value))

    def string_attr(self, value: object, loc: Location = UNKNOWN_LOCATION) -> StringAttr:
        if not isinstance(value, str) or not is_printable_string(value):
            raise CompilationError(
                loc, Status.ir_expected_string_attribute, "strings hold printable ASCII except '\"'"
            )
        key = ("sattr", value)
        found = self._interned.get(key)
        return found if isinstance(found, StringAttr) else self._add(key, StringAttr(self, value))

    def array_attr(self, values: object) -> ArrayAttr:
        if not isinstance(values, (list, tuple)):
            raise _not_a(list, "an array attribute's values", values, UNKNOWN_LOCATION)
        items: list[Attr] = []
        for v in values:
            if not isinstance(v, Attr):
                raise _not_a(Attr, "an array attribute's entry", v, UNKNOWN_LOCATION)
            items.append(v)
        frozen = tuple(items)
        key = ("aattr", frozen)
        found = self._interned.get(key)
        return found if isinstance(found, ArrayAttr) else self._add(key, ArrayAttr(self, frozen))

    def dictionary_attr(
        self,
        items: object,
        loc: Location = UNKNOWN_LOCATION,
    ) -> DictionaryAttr:
        """From a dict or a list of (name, attribute) pairs; a name is a str or a StringAttr."""
        if isinstance(items, dict):
            pairs: list[object] = list(items.items())
        elif isinstance(items, (list, tuple)):
            pairs = list(items)
        else:
            raise _not_a(dict, "a dictionary attribute's items", items, loc)
        named: list[tuple[StringAttr, Attr]] = []
        for pair in pairs:
            if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], Attr)):
                raise _not_a(Attr, "a dictionary attribute's entry", pair, loc)
            key, value = pair
            name = key if isinstance(key, StringAttr) else self.string_attr(key, loc)
            named.append((name, value))
        named.sort(key=lambda kv: kv[0].value)
        for (a, _), (b, _) in zip(named, named[1:]):
            if a is b:
                raise CompilationError(
                    loc, Status.ir_duplicate_key_in_dictionary, f"duplicate key {a.value}"
                )
        frozen = tuple(named)
        key = ("dattr", frozen)
        found = self._interned.get(key)
        return (
            found
            if isinstance(found, DictionaryAttr)
            else self._add(key, DictionaryAttr(self, frozen))
        )
