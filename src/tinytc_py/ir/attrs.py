"""IR attributes: array, boolean, dictionary, integer, string. Interned by the context like types,
so that equal attributes are the same object.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import Status, TinytcError

if TYPE_CHECKING:
    from .context import CompilerContext

KNOWN_ATTR_NAMES = frozenset(
    ("alignment", "shape_gcd", "stride_gcd", "subgroup_size", "unroll", "work_group_size")
)
"""Attribute names the grammar spells as bare words; every other name is a quoted string."""

NONTEMPORAL = "nontemporal"
"""The attribute (true) of a cooperative_matrix_store whose data is not read again soon: a hint
that lowerings set (passes/lower_linalg_gemm.py `store_c`) and the SPIR-V conversion turns into
nontemporal stores where it can prove their alignment (spirv/convert/coopmatrix_memory.py)."""


class Attr:
    __slots__ = ("ctx",)

    def __init__(self, ctx: CompilerContext) -> None:
        self.ctx = ctx

    def __repr__(self) -> str:
        return f"<attr {self}>"


class BooleanAttr(Attr):
    __slots__ = ("value",)

    def __init__(self, ctx: CompilerContext, value: bool) -> None:
        super().__init__(ctx)
        self.value = value

    def __str__(self) -> str:
        return "true" if self.value else "false"


class IntegerAttr(Attr):
    __slots__ = ("value",)

    def __init__(self, ctx: CompilerContext, value: int) -> None:
        super().__init__(ctx)
        self.value = value

    def __str__(self) -> str:
        return str(self.value)


def int_value(attr: Attr) -> int:
    """The value of an attribute the verifier guaranteed to be an integer (e.g. an entry of
    work_group_size)."""
    if isinstance(attr, IntegerAttr):
        return attr.value
    raise TinytcError(Status.internal_compiler_error, f"expected an integer attribute, got {attr}")


class StringAttr(Attr):
    __slots__ = ("value",)

    def __init__(self, ctx: CompilerContext, value: str) -> None:
        super().__init__(ctx)
        self.value = value

    def __str__(self) -> str:
        return f'"{self.value}"'

    def as_name(self) -> str:
        """How the string prints as a dictionary key."""
        return self.value if self.value in KNOWN_ATTR_NAMES else str(self)


class ArrayAttr(Attr):
    __slots__ = ("values",)

    def __init__(self, ctx: CompilerContext, values: tuple[Attr, ...]) -> None:
        super().__init__(ctx)
        self.values = values

    def __str__(self) -> str:
        return "[" + ",".join(str(v) for v in self.values) + "]"


class DictionaryAttr(Attr):
    """Items sorted by name (as the C API's dictionary_attr_get does); names are unique."""

    __slots__ = ("items",)

    def __init__(self, ctx: CompilerContext, items: tuple[tuple[StringAttr, Attr], ...]) -> None:
        super().__init__(ctx)
        self.items = items

    def get(self, name: str) -> Attr | None:
        for key, value in self.items:
            if key.value == name:
                return value
        return None

    def __str__(self) -> str:
        return "{" + ", ".join(f"{k.as_name()}={v}" for k, v in self.items) + "}"


_PRINTABLE = re.compile(r"[\x20\x21\x23-\x7e]*")
"""Compiled once: `re.fullmatch(pattern, ...)` looks the pattern up in re's cache each call."""


def is_printable_string(text: str) -> bool:
    """Strings hold printable ASCII except the double quote (grammar: %x20-21 / %x23-7E)."""
    return _PRINTABLE.fullmatch(text) is not None
