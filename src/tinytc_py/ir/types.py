"""IR types. Instances are created and interned only by `CompilerContext` (see context.py), so
type equality is identity, as with the C API's type handles.

Scalar kinds, sizes and the promotion relation (⪯) of the language reference live here, because
every layer (verifier, lowering, SPIR-V conversion, C API) asks the same questions of types.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from ..errors import Status, TinytcError
from .enums import AddressSpace, MatrixUse

if TYPE_CHECKING:
    from .context import CompilerContext

DYNAMIC = -(2**63)
"""Marks a dynamic ('?') extent, stride, size or offset; equals the C API's TINYTC_DYNAMIC."""


def is_dynamic(v: int) -> bool:
    return v == DYNAMIC


def dyn_str(v: int) -> str:
    return "?" if v == DYNAMIC else str(v)


class ScalarKind(Enum):
    """Number types: (text name, size in bytes, family)."""

    i8 = ("i8", 1, "int")
    i16 = ("i16", 2, "int")
    i32 = ("i32", 4, "int")
    i64 = ("i64", 8, "int")
    index = ("index", 8, "int")
    bf16 = ("bf16", 2, "float")
    f16 = ("f16", 2, "float")
    f32 = ("f32", 4, "float")
    f64 = ("f64", 8, "float")
    c32 = ("c32", 8, "complex")
    c64 = ("c64", 16, "complex")

    # Plain attributes, set below from each member's value: the compiler asks for these
    # constantly, and an enum's `.value` is a descriptor call each time. (Set after the class,
    # not by an `__init__`, so that mypyc can compile the module.)
    text: str
    size: int  # bytes
    family: str

    # Members are singletons compared by identity (an Enum has no __eq__ of its own), so the
    # identity hash agrees with equality. Enum's own __hash__ is Python code (a hash of the
    # name, about 0.1 us a call): types are interned, folded and converted through dicts keyed
    # by the kind (CompilerContext.numbers, the fold and conversion tables). A set of kinds
    # iterates in no fixed order either way (a str's hash changes per process too).
    __hash__ = object.__hash__


for _kind in ScalarKind:
    _kind.text, _kind.size, _kind.family = _kind.value
del _kind


# α ⪯ β ("every value of α is exactly representable in β"). index is 64 bits wide, so it behaves
# like i64. The reference's printed matrix lost its empty cells; these rows follow its definition.
_PROMOTABLE: dict[str, frozenset[str]] = {
    "i8": frozenset("i8 i16 i32 i64 index bf16 f16 f32 f64 c32 c64".split()),
    "i16": frozenset("i16 i32 i64 index f32 f64 c32 c64".split()),
    "i32": frozenset("i32 i64 index f64 c64".split()),
    "i64": frozenset("i64 index".split()),
    "index": frozenset("i64 index".split()),
    "bf16": frozenset("bf16 f32 f64 c32 c64".split()),
    "f16": frozenset("f16 f32 f64 c32 c64".split()),
    "f32": frozenset("f32 f64 c32 c64".split()),
    "f64": frozenset("f64 c64".split()),
    "c32": frozenset("c32 c64".split()),
    "c64": frozenset(("c64",)),
}


class Type:
    """Base of all types; `ctx` is the owning compiler context."""

    __slots__ = ("ctx", "_text")

    def __init__(self, ctx: CompilerContext) -> None:
        self.ctx = ctx
        self._text = ""

    def __str__(self) -> str:
        if not self._text:
            self._text = self._format()
        return self._text

    def __repr__(self) -> str:
        return f"<type {self}>"

    def _format(self) -> str:
        raise TypeError("abstract type")


class VoidType(Type):
    __slots__ = ()

    def _format(self) -> str:
        return "void"


class BooleanType(Type):
    __slots__ = ()

    def _format(self) -> str:
        return "bool"


class NumberType(Type):
    """Integer, floating-point and complex scalar types."""

    __slots__ = ("kind", "is_integer", "is_float", "is_complex", "size")

    def __init__(self, ctx: CompilerContext, kind: ScalarKind) -> None:
        super().__init__(ctx)
        self.kind = kind
        # Plain attributes, not properties: every layer asks these of types constantly (the
        # SPIR-V conversion of three GEMMs about a thousand times), 11 types per context.
        family = kind.family  # (an enum member's attribute: a generic lookup each)
        self.is_integer = family == "int"
        self.is_float = family == "float"
        self.is_complex = family == "complex"
        self.size = kind.size  # bytes

    def _format(self) -> str:
        return self.kind.text

    @property
    def component_type(self) -> NumberType:
        """The real type of a complex type's parts; the type itself otherwise."""
        if self.kind is ScalarKind.c32:
            return self.ctx.f32
        if self.kind is ScalarKind.c64:
            return self.ctx.f64
        return self

    def promotable_to(self, other: NumberType) -> bool:
        """α ⪯ β of the language reference."""
        return other.kind.text in _PROMOTABLE[self.kind.text]


def promote(a: NumberType, b: NumberType) -> NumberType | None:
    """promote(α, β) of the language reference; None where it "fails"."""
    if a.promotable_to(b):
        return b
    if b.promotable_to(a):
        return a
    return None


def int_bits(ty: NumberType) -> int:
    """The width of an integer type: i8, i16 and i32 wrap around modulo 2^bits."""
    return 8 * ty.size


def wrap(x: int, ty: NumberType) -> int:
    """x modulo 2^bits as a signed number: an integer as the device holds it."""
    bits = int_bits(ty)
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


def canonical_stride(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The packed column-major layout; a stride after a dynamic mode is dynamic."""
    stride: list[int] = []
    s = 1
    for extent in shape:
        stride.append(s)
        s = DYNAMIC if s == DYNAMIC or extent == DYNAMIC else s * extent
    return tuple(stride)


class MemrefType(Type):
    __slots__ = ("element", "shape", "stride", "addrspace", "order")

    def __init__(
        self,
        ctx: CompilerContext,
        element: NumberType,
        shape: tuple[int, ...],
        stride: tuple[int, ...],
        addrspace: AddressSpace,
    ) -> None:
        super().__init__(ctx)
        self.element = element
        self.shape = shape
        self.stride = stride
        self.addrspace = addrspace
        self.order = len(shape)  # an attribute, as NumberType's (asked as often)

    @property
    def is_canonical(self) -> bool:
        return self.stride == canonical_stride(self.shape)

    @property
    def is_dynamic(self) -> bool:
        return DYNAMIC in self.shape or DYNAMIC in self.stride

    def size_in_bytes(self) -> int:
        """Bytes spanned by a static memref (used for local-memory allocation)."""
        if not self.shape:
            return self.element.size
        last = self.shape[-1] * self.stride[-1]
        return last * self.element.size

    def _format(self) -> str:
        parts = [self.element.kind.text] + [dyn_str(s) for s in self.shape]
        text = "memref<" + "x".join(parts)
        if not self.is_canonical:
            text += ",strided<" + ",".join(dyn_str(s) for s in self.stride) + ">"
        if self.addrspace is AddressSpace.local:
            text += ",local"
        return text + ">"


class GroupType(Type):
    __slots__ = ("memref", "size", "offset")

    def __init__(self, ctx: CompilerContext, memref: MemrefType, size: int, offset: int) -> None:
        super().__init__(ctx)
        self.memref = memref
        self.size = size
        self.offset = offset

    def _format(self) -> str:
        text = f"group<{self.memref}x{dyn_str(self.size)}"
        if self.offset != 0:
            text += f", offset: {dyn_str(self.offset)}"
        return text + ">"


class CoopmatrixType(Type):
    __slots__ = ("component", "rows", "cols", "use")

    def __init__(
        self, ctx: CompilerContext, component: NumberType, rows: int, cols: int, use: MatrixUse
    ) -> None:
        super().__init__(ctx)
        self.component = component
        self.rows = rows
        self.cols = cols
        self.use = use

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    def _format(self) -> str:
        return f"coopmatrix<{self.component}x{self.rows}x{self.cols},{self.use.text}>"


def element_type(ty: Type) -> Type:
    """The scalar type of a value that may be a scalar or a coopmatrix."""
    return ty.component if isinstance(ty, CoopmatrixType) else ty


# ---- narrowing accessors ----------------------------------------------------------------------
# Passes and the SPIR-V conversion run on verified IR, where the verifier has guaranteed each
# operand's kind of type; these say which kind they rely on (for the type checker) and turn a
# broken guarantee into an internal compiler error instead of an AttributeError.


def _broken(expected: str, ty: Type) -> TinytcError:
    return TinytcError(Status.internal_compiler_error, f"expected {expected} type, got {ty}")


def as_number(ty: Type) -> NumberType:
    """`ty` as the number type the verifier guaranteed."""
    if isinstance(ty, NumberType):
        return ty
    raise _broken("a number", ty)


def as_memref(ty: Type) -> MemrefType:
    """`ty` as the memref type the verifier guaranteed."""
    if isinstance(ty, MemrefType):
        return ty
    raise _broken("a memref", ty)


def as_coopmatrix(ty: Type) -> CoopmatrixType:
    """`ty` as the coopmatrix type the verifier guaranteed."""
    if isinstance(ty, CoopmatrixType):
        return ty
    raise _broken("a coopmatrix", ty)
