"""SSA values with use lists, so replace-all-uses and dead-code checks cost O(uses)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import UNKNOWN_LOCATION, Location
from .types import Type

if TYPE_CHECKING:
    from .inst import Inst
    from .region import Region


class Use:
    """One operand slot of an instruction; registered in the used value's use list."""

    __slots__ = ("owner", "index", "value")

    def __init__(self, owner: Inst, index: int, value: Value) -> None:
        self.owner = owner
        self.index = index
        self.value = value
        value.uses[self] = None

    def set(self, value: Value) -> None:
        del self.value.uses[self]
        self.value = value
        value.uses[self] = None

    def drop(self) -> None:
        del self.value.uses[self]


class Value:
    """A result of an instruction or a parameter of a region.

    `name` is the user-visible name (without '%'); empty for unnamed values, which the printer
    numbers. `defining_inst` is None for region parameters (`region` is set instead).
    """

    __slots__ = ("type", "name", "loc", "uses", "defining_inst", "region")

    def __init__(self, ty: Type, name: str = "", loc: Location = UNKNOWN_LOCATION) -> None:
        self.type = ty
        self.name = name
        self.loc = loc
        # an insertion-ordered set: adding and removing a use is O(1) however many uses there are
        self.uses: dict[Use, None] = {}
        self.defining_inst: Inst | None = None
        self.region: Region | None = None

    def __str__(self) -> str:
        return f"%{self.name}" if self.name else "%<unnamed>"

    def __repr__(self) -> str:
        return f"<value {self}: {self.type}>"

    def has_uses(self) -> bool:
        return bool(self.uses)

    def replace_all_uses_with(self, other: Value) -> None:
        for use in list(self.uses):
            use.set(other)
