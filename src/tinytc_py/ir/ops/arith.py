"""Arithmetic, math, comparison, cast and constant: the scalar (and component-wise
coopmatrix) instructions. A family class checks the operand types its rows allow (`allowed`,
`ordered`, `to_component` are set per row)."""

from __future__ import annotations

from typing import Any

from ...errors import Status
from .. import checks
from ..enums import (
    MatrixUse,
)
from ..inst import Inst, InstSpec, Prop
from ..types import (
    BooleanType,
    CoopmatrixType,
    NumberType,
    ScalarKind,
    Type,
    element_type,
)
from ..values import Value
from .common import (
    COMPLEX,
    FLOAT,
    FLOAT_COMPLEX,
    INT,
    LOGIC,
    NUM,
    REAL,
    R,
    Row,
    result_type,
)

_NUMBER_FAMILY_STATUS = {
    "bool": Status.ir_boolean_unsupported,
    "int": Status.ir_int_unsupported,
    "float": Status.ir_fp_unsupported,
    "complex": Status.ir_complex_unsupported,
}


def _family(ty: BooleanType | NumberType) -> str:
    return "bool" if isinstance(ty, BooleanType) else ty.kind.family


class ArithInst(Inst):
    """Scalar or component-wise coopmatrix arithmetic; `allowed` lists the type families."""

    __slots__ = ()
    is_family = True
    allowed: frozenset[str] = frozenset()

    def check_allowed(self, ty: Type, v: Value) -> None:
        scalar = element_type(ty)
        if not isinstance(scalar, (NumberType, BooleanType)):
            raise self.error(
                Status.ir_expected_coopmatrix_number_or_boolean,
                "operand must be a number, boolean or coopmatrix",
                v,
            )
        fam = _family(scalar)
        if fam not in self.allowed:
            raise self.error(_NUMBER_FAMILY_STATUS[fam], f"{self.name} does not accept {scalar}", v)


class ArithBinaryInst(ArithInst):
    __slots__ = ()
    is_family = True

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["a"].type

    def verify(self) -> None:
        a, b = self.operand("a"), self.operand("b")
        self.check_allowed(a.type, a)
        checks.same_type(
            self, a.type, b.type, Status.ir_number_mismatch, "operand types differ", a, b
        )
        checks.same_type(
            self,
            a.type,
            result_type(self),
            Status.ir_operand_type_must_match_return_type,
            "operand type must match the result type",
            a,
        )


class ArithUnaryInst(ArithInst):
    """Unary arithmetic; abs/im/re return the component type of a complex operand."""

    __slots__ = ()
    is_family = True

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        ty = operands["a"].type
        if cls.to_component and isinstance(ty, NumberType) and ty.is_complex:
            return ty.component_type
        return ty

    to_component = False

    def verify(self) -> None:
        a = self.operand("a")
        self.check_allowed(a.type, a)
        expected = a.type
        scalar = element_type(a.type)
        if self.to_component and isinstance(scalar, NumberType) and scalar.is_complex:
            comp = scalar.component_type
            expected = comp
            if isinstance(a.type, CoopmatrixType):
                t = a.type
                expected = t.ctx.coopmatrix(comp, t.rows, t.cols, t.use)
        if expected is not result_type(self):
            raise self.error(
                Status.ir_operand_type_must_match_return_type,
                f"{self.name} of {a.type} returns {expected}, not {result_type(self)}",
                a,
            )


class MathInst(ArithInst):
    """Scalar math (cos, exp, native_log, ...): operand and result types are equal."""

    __slots__ = ()
    is_family = True

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["a"].type

    def verify(self) -> None:
        a = self.operand("a")
        if not isinstance(a.type, NumberType):
            raise self.error(Status.ir_expected_number, "operand must be a scalar number", a)
        self.check_allowed(a.type, a)
        checks.same_type(
            self,
            a.type,
            result_type(self),
            Status.ir_operand_type_must_match_return_type,
            "operand type must match the result type",
            a,
        )


class CompareInst(Inst):
    __slots__ = ()
    is_family = True

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return next(iter(operands.values())).type.ctx.bool

    ordered = False

    def verify(self) -> None:
        a, b = self.operand("a"), self.operand("b")
        ty = checks.number(self, a)
        checks.same_type(self, ty, b.type, Status.ir_number_mismatch, "operand types differ", a, b)
        if self.ordered and ty.is_complex:
            raise self.error(
                Status.ir_complex_unsupported, f"{self.name} is not defined on {ty}", a
            )
        if not isinstance(result_type(self), BooleanType):
            raise self.error(Status.ir_expected_boolean, "comparison returns bool")


CAST_FORBIDDEN = {("complex", "int"), ("complex", "float")}


class CastInst(Inst):
    __slots__ = ()

    def verify(self) -> None:
        a = self.operand("a")
        src, dst = a.type, result_type(self)
        if isinstance(dst, CoopmatrixType):
            s = checks.coopmatrix(self, a)
            if s.shape != dst.shape:
                raise self.error(
                    Status.ir_incompatible_shapes,
                    f"cast must keep the shape ({s.rows}x{s.cols} vs {dst.rows}x{dst.cols})",
                    a,
                )
            if s.use is not dst.use and not (
                s.use is MatrixUse.acc and dst.use in (MatrixUse.a, MatrixUse.b)
            ):
                raise self.error(
                    Status.ir_invalid_matrix_use,
                    f"cannot cast {s.use.text} to {dst.use.text}",
                    a,
                )
            src, dst = s.component, dst.component
        else:
            checks.number(self, a)
            if not isinstance(dst, NumberType):
                raise self.error(Status.ir_expected_number, "cast result must be a number type")
        if (src.kind.family, dst.kind.family) in CAST_FORBIDDEN:
            raise self.error(Status.ir_forbidden_cast, f"cannot cast {src} to {dst}", a)


_INT_BITS = {ScalarKind.i8: 8, ScalarKind.i16: 16, ScalarKind.i32: 32}


class ConstantInst(Inst):
    """`value` is a bool, int, float or (re, im) tuple matching the (component) type."""

    __slots__ = ()

    def verify(self) -> None:
        ty = result_type(self)
        scalar = element_type(ty)
        value = self.props["value"]
        if not isinstance(scalar, (BooleanType, NumberType)):
            raise self.error(Status.ir_expected_number, f"constant of type {ty} is not allowed")
        mismatch = checks.constant_kind_mismatch(value, scalar, ty)
        if mismatch is not None:
            raise self.error(Status.ir_constant_mismatch, mismatch)
        bits = _INT_BITS.get(scalar.kind) if isinstance(scalar, NumberType) else None
        if bits and not -(2 ** (bits - 1)) <= value < 2**bits:
            raise self.error(Status.ir_constant_mismatch, f"{value} does not fit into {scalar}")


# ---- the table rows ------------------------------------------------------------------------------


def _binary(mnemonic: str, allowed: frozenset[str], builder_name: str = "") -> Row:
    spec = InstSpec(
        mnemonic, operands=("a", "b"), result=R, fmt="$a , $b : type", builder_name=builder_name
    )
    return (ArithBinaryInst, spec, {"allowed": allowed})


def _unary(
    mnemonic: str, allowed: frozenset[str], to_component: bool, builder_name: str = ""
) -> Row:
    spec = InstSpec(mnemonic, operands=("a",), result=R, fmt="$a : type", builder_name=builder_name)
    return (ArithUnaryInst, spec, {"allowed": allowed, "to_component": to_component})


def _math(mnemonic: str, allowed: frozenset[str]) -> Row:
    spec = InstSpec(mnemonic, operands=("a",), result=R, fmt="$a : type")
    return (MathInst, spec, {"allowed": allowed})


def _compare(mnemonic: str, ordered: bool) -> Row:
    spec = InstSpec(mnemonic, operands=("a", "b"), result=R, fmt="$a , $b : type")
    return (CompareInst, spec, {"ordered": ordered})


ROWS: list[Row] = [
    _binary("add", NUM),
    _binary("sub", NUM),
    _binary("mul", NUM),
    _binary("div", NUM),
    _binary("rem", REAL),
    _binary("max", REAL),
    _binary("min", REAL),
    _binary("shl", INT),
    _binary("shr", INT),
    _binary("and", LOGIC, builder_name="and_"),
    _binary("or", LOGIC, builder_name="or_"),
    _binary("xor", LOGIC),
    _unary("abs", NUM, True),
    _unary("neg", NUM, False),
    _unary("not", LOGIC, False, builder_name="not_"),
    _unary("conj", COMPLEX, False),
    _unary("im", COMPLEX, True),
    _unary("re", COMPLEX, True),
    _math("cos", FLOAT),
    _math("native_cos", FLOAT),
    _math("sin", FLOAT),
    _math("native_sin", FLOAT),
    _math("exp", FLOAT_COMPLEX),
    _math("native_exp", FLOAT_COMPLEX),
    _math("exp2", FLOAT_COMPLEX),
    _math("native_exp2", FLOAT_COMPLEX),
    _math("log", FLOAT),
    _math("native_log", FLOAT),
    _math("log2", FLOAT),
    _math("native_log2", FLOAT),
    _compare("equal", False),
    _compare("not_equal", False),
    _compare("greater_than", True),
    _compare("greater_than_equal", True),
    _compare("less_than", True),
    _compare("less_than_equal", True),
    (CastInst, InstSpec("cast", operands=("a",), result=R, fmt="$a : type"), {}),
    (
        ConstantInst,
        InstSpec("constant", (Prop("value", "value", None),), result=R, syntax="constant"),
        {},
    ),
]
