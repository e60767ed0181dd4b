"""Small type predicates shared by the instruction families' verifiers; each raises the located
error with the status code the C API uses for that violation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import Status
from .types import BooleanType, CoopmatrixType, GroupType, MemrefType, NumberType, ScalarKind, Type
from .values import Value

if TYPE_CHECKING:
    from .inst import Inst


def memref(inst: Inst, v: Value, what: str = "operand") -> MemrefType:
    if not isinstance(v.type, MemrefType):
        raise inst.error(Status.ir_expected_memref, f"{what} must have memref type", v)
    return v.type


def memref_or_group(inst: Inst, v: Value) -> MemrefType | GroupType:
    if not isinstance(v.type, (MemrefType, GroupType)):
        raise inst.error(Status.ir_expected_memref_or_group, "operand must be a memref or group", v)
    return v.type


def number(inst: Inst, v: Value, what: str = "operand") -> NumberType:
    if not isinstance(v.type, NumberType):
        raise inst.error(Status.ir_expected_number, f"{what} must have number type", v)
    return v.type


def coopmatrix(inst: Inst, v: Value, what: str = "operand") -> CoopmatrixType:
    if not isinstance(v.type, CoopmatrixType):
        raise inst.error(Status.ir_expected_coopmatrix, f"{what} must have coopmatrix type", v)
    return v.type


def boolean(inst: Inst, v: Value, what: str = "condition") -> None:
    if not isinstance(v.type, BooleanType):
        raise inst.error(Status.ir_expected_boolean, f"{what} must have boolean type", v)


def integer(inst: Inst, v: Value, what: str = "operand") -> NumberType:
    ty = v.type
    if not (isinstance(ty, NumberType) and ty.is_integer):
        raise inst.error(Status.ir_expected_int, f"{what} must have integer type", v)
    return ty


def index(inst: Inst, v: Value, what: str = "index") -> None:
    ty = v.type
    if not (isinstance(ty, NumberType) and ty.kind is ScalarKind.index):
        raise inst.error(Status.ir_expected_index, f"{what} must have index type", v)


def i32(inst: Inst, v: Value, what: str = "operand") -> None:
    ty = v.type
    if not (isinstance(ty, NumberType) and ty.kind is ScalarKind.i32):
        raise inst.error(Status.ir_expected_i32, f"{what} must have i32 type", v)


def promotable(inst: Inst, a: NumberType, b: NumberType, *values: Value, what: str = "") -> None:
    """a ⪯ b; `what` names both types in the message ("type of beta to element type of C")."""
    if not a.promotable_to(b):
        detail = f"cannot promote {a} to {b}" + (f" ({what})" if what else "")
        raise inst.error(Status.ir_forbidden_promotion, detail, *values)


def same_type(inst: Inst, a: Type, b: Type, status: Status, detail: str, *values: Value) -> None:
    if a is not b:
        raise inst.error(status, f"{detail} ({a} vs {b})", *values)


def memref_order(
    inst: Inst, v: Value, orders: tuple[int, ...], status: Status, what: str = "operand"
) -> MemrefType:
    mt = memref(inst, v, what)
    if mt.order not in orders:
        allowed = " or ".join(str(o) for o in orders)
        raise inst.error(status, f"{what} must have order {allowed}, got order {mt.order}", v)
    return mt


def index_list(inst: Inst, tensor: Value, indices: list[Value]) -> MemrefType | GroupType:
    """Checks that the index count matches the memref order (1 for a group) and that every index
    has index type."""
    ty = memref_or_group(inst, tensor)
    expected = ty.order if isinstance(ty, MemrefType) else 1
    if len(indices) != expected:
        what = f"{ty} needs" if isinstance(ty, MemrefType) else "a group needs"
        noun = "index" if expected == 1 else "indices"
        raise inst.error(
            Status.ir_invalid_number_of_indices,
            f"{what} {expected} {noun}, got {len(indices)}",
            tensor,
        )
    for i in indices:
        index(inst, i)
    return ty


def _constant_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "floating"
    if _is_complex_constant(value):
        return "complex"
    return type(value).__name__


def _is_complex_constant(value: Any) -> bool:
    """A complex-constant is a pair of floating-constants (the printer writes each as one)."""
    return isinstance(value, tuple) and len(value) == 2 and all(isinstance(p, float) for p in value)


def _expected_kind(scalar: BooleanType | NumberType) -> str:
    if isinstance(scalar, BooleanType):
        return "a boolean"
    if scalar.is_integer:
        return "an integer"
    return "a floating" if scalar.is_float else "a complex"


def constant_kind_mismatch(value: Any, scalar: BooleanType | NumberType, ty: Type) -> str | None:
    """Why `value` (bool, int, float or (re, im) as the parser makes them) is no constant of the
    scalar type (of `ty`), or None: a boolean type takes a boolean, an integer type an
    integer-constant, a floating type a floating-constant and a complex type a complex-constant
    (the language reference's rule for `constant`, which global initializers follow)."""
    if isinstance(scalar, BooleanType):
        ok = isinstance(value, bool)
    elif scalar.is_integer:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif scalar.is_float:
        ok = isinstance(value, float)
    else:
        ok = _is_complex_constant(value)
    if ok:
        return None
    return (
        f"{_constant_kind(value)} constant does not match type {ty} "
        f"(expected {_expected_kind(scalar)} constant)"
    )
