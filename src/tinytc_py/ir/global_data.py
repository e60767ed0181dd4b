"""Program-level constant data (the `global` extension, docs/extensions.md): a named memref with
static shape and canonical stride in the global address space, initialized from a `dense<[...]>`
list of numbers in column-major order. Every function of the program reads it through
`global_ref @name : type`; the SPIR-V conversion turns it into one read-only CrossWorkgroup
variable with an initializer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UNKNOWN_LOCATION, CompilationError, Location, Status
from .checks import constant_kind_mismatch
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
    """The value if it is a constant of the element type (an integer for an integer type, a
    float for a floating type, a pair (re, im) of floats for a complex type, as the language's
    `constant` takes them; booleans never); raises otherwise."""
    el = ty.element
    if isinstance(value, bool):
        raise CompilationError(
            loc, Status.ext_invalid_global, f"value {k} is a boolean, not a number"
        )
    mismatch = constant_kind_mismatch(value, el, el)
    if mismatch is not None:
        raise CompilationError(loc, Status.ext_invalid_global, f"value {k}: {mismatch}")
    if el.is_integer:
        bits = 8 * el.size
        if not -(1 << (bits - 1)) <= value < (1 << bits):
            raise CompilationError(
                loc, Status.ext_invalid_global, f"value {k} ({value}) does not fit {el}"
            )
    return value


def make_global(
    name: str,
    ty: object,
    values: list[Any],
    loc: Location,
    value_locs: Sequence[Location] | None = None,
) -> GlobalData:
    """Checks the restrictions of a global definition and returns it. `values` are constants as
    the parser makes them (int, float, (re, im)); an error about value k is located at
    `value_locs[k]` when given (the text's initializer), else at `loc`."""
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
    locs = value_locs or [loc] * n
    checked = tuple(_check_value(v, ty, k, locs[k]) for k, v in enumerate(values))
    return GlobalData(name, ty, checked, loc)


def add_global(prog: Prog, data: GlobalData) -> None:
    """Adds the global; raises if a global or a function of the program holds its name (one
    namespace for both, as Prog.add_function checks the other way round)."""
    if data.name in prog.globals:
        raise CompilationError(
            data.loc, Status.ext_global_redefined, f"global @{data.name} is already defined"
        )
    if prog.has_function(data.name):
        raise CompilationError(
            data.loc,
            Status.ext_global_redefined,
            f"@{data.name} is already defined as a function; a global cannot have its name",
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
