"""Program-level constant data (the `global` extension, docs/extensions.md): a named memref with
static shape and canonical stride in the global address space, initialized from a `dense<[...]>`
list of numbers in column-major order. Every function of the program reads it through
`global_ref @name : type`; the SPIR-V conversion turns it into one read-only CrossWorkgroup
variable with an initializer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UNKNOWN_LOCATION, CompilationError, Location, Status
from .enums import AddressSpace
from .types import DYNAMIC, MemrefType, Type

if TYPE_CHECKING:
    from .region import Prog


@dataclass(frozen=True)
class GlobalData:
    """A global: name, memref type and its values (int, float or (re, im) per element)."""

    name: str
    type: MemrefType
    values: tuple[Any, ...]
    loc: Location = UNKNOWN_LOCATION

    @property
    def count(self) -> int:
        return len(self.values)


def element_count(ty: MemrefType) -> int:
    n = 1
    for s in ty.shape:
        n *= s
    return n


def _check_value(value: Any, ty: MemrefType, k: int, loc: Location) -> Any:
    """The value converted to the element type's Python form; raises for a wrong kind."""
    el = ty.element
    if isinstance(value, bool):
        raise CompilationError(
            loc, Status.ext_invalid_global, f"value {k} is a boolean, not a number"
        )
    if el.is_complex:
        if isinstance(value, complex):
            return (value.real, value.imag)
        if isinstance(value, tuple) and len(value) == 2:
            return (float(value[0]), float(value[1]))
        return (float(value), 0.0)
    if el.is_integer:
        if not isinstance(value, int):
            raise CompilationError(
                loc, Status.ext_invalid_global, f"value {k} ({value}) is not an integer of {el}"
            )
        bits = 8 * el.size
        if not -(1 << (bits - 1)) <= value < (1 << bits):
            raise CompilationError(
                loc, Status.ext_invalid_global, f"value {k} ({value}) does not fit {el}"
            )
        return value
    if isinstance(value, tuple):
        raise CompilationError(loc, Status.ext_invalid_global, f"value {k} is complex, not {el}")
    return float(value)


def make_global(name: str, ty: Type, values: list[Any], loc: Location) -> GlobalData:
    """Checks the restrictions of a global definition and returns it."""
    if not isinstance(ty, MemrefType):
        raise CompilationError(loc, Status.ext_invalid_global, "a global must have memref type")
    if DYNAMIC in ty.shape or not ty.is_canonical:
        raise CompilationError(
            loc, Status.ext_invalid_global, f"{ty}: a global needs a static shape and stride"
        )
    if ty.addrspace is not AddressSpace.global_:
        raise CompilationError(
            loc, Status.ext_invalid_global, f"{ty}: a global lives in the global address space"
        )
    n = element_count(ty)
    if len(values) != n:
        raise CompilationError(
            loc, Status.ext_invalid_global, f"{ty} holds {n} values, the initializer {len(values)}"
        )
    checked = tuple(_check_value(v, ty, k, loc) for k, v in enumerate(values))
    return GlobalData(name, ty, checked, loc)


def add_global(prog: Prog, data: GlobalData) -> None:
    if data.name in prog.globals:
        raise CompilationError(
            data.loc, Status.ext_global_redefined, f"global @{data.name} is already defined"
        )
    prog.globals[data.name] = data


def lookup(prog: Prog, name: str, ty: Type, loc: Location) -> GlobalData:
    """The global a `global_ref @name : ty` refers to; raises unless it exists with type `ty`."""
    data = prog.globals.get(name)
    if data is None:
        raise CompilationError(loc, Status.ext_undefined_global, f"no global named @{name}")
    if data.type is not ty:
        raise CompilationError(
            loc, Status.ext_undefined_global, f"global @{name} has type {data.type}, not {ty}"
        )
    return data
