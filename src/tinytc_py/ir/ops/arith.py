"""Arithmetic, math, comparison, cast and constant: the scalar (and component-wise
coopmatrix) instructions. A family class checks the operand types its rows allow (`allowed`,
`ordered`, `to_component` are set per row); each row also says how it folds on constants
(`folds`, the rules of folds.py)."""

from __future__ import annotations

import math
import operator
from typing import Any, ClassVar

from ...errors import Status
from .. import checks
from ..enums import MatrixUse, Syntax
from ..inst import Inst, InstSpec, Prop
from ..types import (
    BooleanType,
    CoopmatrixType,
    NumberType,
    ScalarKind,
    Type,
    element_type,
    wrap,
)
from ..values import Value
from . import folds as fr
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
    allowed: ClassVar[frozenset[str]] = frozenset()

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
    folds: ClassVar[fr.BinaryFolds] = fr.BinaryFolds()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["a"].type

    def verify(self) -> None:
        a, b = self.required("a"), self.required("b")
        ty = a.type
        self.check_allowed(ty, a)
        # The checks compare first and name the status only on the error path: in the compiled
        # module a Status member costs a lookup through the enum class (about as much as the
        # rest of this check), and every arithmetic instruction is verified.
        if b.type is not ty:
            checks.same_type(
                self, ty, b.type, Status.ir_number_mismatch, "operand types differ", a, b
            )
        result = result_type(self)
        if result is not ty:
            checks.same_type(
                self,
                ty,
                result,
                Status.ir_operand_type_must_match_return_type,
                "operand type must match the result type",
                a,
            )


class ArithUnaryInst(ArithInst):
    """Unary arithmetic; abs/im/re return the component type of a complex operand."""

    __slots__ = ()
    is_family = True
    folds: ClassVar[fr.UnaryFolds] = fr.UnaryFolds()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        ty = operands["a"].type
        if cls.to_component and isinstance(ty, NumberType) and ty.is_complex:
            return ty.component_type
        return ty

    to_component: ClassVar[bool] = False

    def verify(self) -> None:
        a = self.required("a")
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
    folds: ClassVar[fr.MathFolds] = fr.MathFolds()  # the math extensions are not folded

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["a"].type

    def verify(self) -> None:
        a = self.required("a")
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
    folds: ClassVar[fr.CompareFolds]

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return next(iter(operands.values())).type.ctx.bool

    ordered: ClassVar[bool] = False

    def verify(self) -> None:
        a, b = self.required("a"), self.required("b")
        ty = checks.number(self, a)
        if b.type is not ty:  # (the Status member on the error path only: ArithBinaryInst)
            checks.same_type(
                self, ty, b.type, Status.ir_number_mismatch, "operand types differ", a, b
            )
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
        a = self.required("a")
        dst_type = result_type(self)
        src: NumberType
        dst: NumberType
        if isinstance(dst_type, CoopmatrixType):
            s, t = checks.coopmatrix(self, a), dst_type
            if s.shape != t.shape:
                raise self.error(
                    Status.ir_incompatible_shapes,
                    f"cast must keep the shape ({s.rows}x{s.cols} vs {t.rows}x{t.cols})",
                    a,
                )
            if s.use is not t.use and not (
                s.use is MatrixUse.acc and t.use in (MatrixUse.a, MatrixUse.b)
            ):
                raise self.error(
                    Status.ir_invalid_matrix_use,
                    f"cannot cast {s.use.text} to {t.use.text}",
                    a,
                )
            src, dst = s.component, t.component
        else:
            src = checks.number(self, a)
            if not isinstance(dst_type, NumberType):
                raise self.error(Status.ir_expected_number, "cast result must be a number type")
            dst = dst_type
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


def _binary(
    mnemonic: str, allowed: frozenset[str], folds: fr.BinaryFolds, builder_name: str = ""
) -> Row:
    spec = InstSpec(
        mnemonic, operands=("a", "b"), result=R, fmt="$a , $b : type", builder_name=builder_name
    )
    return (ArithBinaryInst, spec, {"allowed": allowed, "folds": folds})


def _unary(
    mnemonic: str,
    allowed: frozenset[str],
    to_component: bool,
    folds: fr.UnaryFolds,
    builder_name: str = "",
) -> Row:
    spec = InstSpec(mnemonic, operands=("a",), result=R, fmt="$a : type", builder_name=builder_name)
    attrs = {"allowed": allowed, "to_component": to_component, "folds": folds}
    return (ArithUnaryInst, spec, attrs)


def _math(mnemonic: str, allowed: frozenset[str], folds: fr.MathFolds) -> Row:
    spec = InstSpec(mnemonic, operands=("a",), result=R, fmt="$a : type")
    return (MathInst, spec, {"allowed": allowed, "folds": folds})


def _compare(mnemonic: str, ordered: bool, folds: fr.CompareFolds) -> Row:
    spec = InstSpec(mnemonic, operands=("a", "b"), result=R, fmt="$a , $b : type")
    return (CompareInst, spec, {"ordered": ordered, "folds": folds})


_COS = fr.MathFolds(fr.ieee(math.cos))
_SIN = fr.MathFolds(fr.ieee(math.sin))
_EXP = fr.MathFolds(fr.ieee(math.exp), fr.complex_exp)
_EXP2 = fr.MathFolds(fr.ieee(math.exp2), fr.complex_exp2)
_LOG = fr.MathFolds(fr.ieee(math.log))
_LOG2 = fr.MathFolds(fr.ieee(math.log2))

ROWS: list[Row] = [
    _binary(
        "add",
        NUM,
        fr.BinaryFolds(
            integer=fr.wrapped(operator.add),
            real=operator.add,
            complex=fr.componentwise(operator.add),
            identity=fr.add_identity,
        ),
    ),
    _binary(
        "sub",
        NUM,
        fr.BinaryFolds(
            integer=fr.wrapped(operator.sub),
            real=operator.sub,
            complex=fr.componentwise(operator.sub),
            identity=fr.sub_identity,
        ),
    ),
    _binary(
        "mul",
        NUM,
        fr.BinaryFolds(
            integer=fr.wrapped(operator.mul),
            real=operator.mul,
            complex=fr.complex_mul,
            identity=fr.mul_identity,
        ),
    ),
    _binary(
        "div",
        NUM,
        fr.BinaryFolds(
            integer=fr.int_div,
            real=fr.fdiv,
            complex=fr.complex_div,
            identity=fr.div_identity,
            divides=True,
        ),
    ),
    _binary(
        "rem",
        REAL,
        fr.BinaryFolds(integer=fr.int_rem, real=fr.frem, identity=fr.rem_identity, divides=True),
    ),
    _binary("max", REAL, fr.BinaryFolds(integer=lambda a, b, ty: max(a, b), real=fr.fminmax(max))),
    _binary("min", REAL, fr.BinaryFolds(integer=lambda a, b, ty: min(a, b), real=fr.fminmax(min))),
    _binary(
        "shl",
        INT,
        fr.BinaryFolds(integer=fr.shift(operator.lshift), identity=fr.shift_identity),
    ),
    _binary(
        "shr",
        INT,
        fr.BinaryFolds(integer=fr.shift(operator.rshift), identity=fr.shift_identity),
    ),
    _binary(
        "and",
        LOGIC,
        fr.BinaryFolds(
            boolean=lambda a, b: a and b,
            integer=fr.wrapped(operator.and_),
            identity=fr.logic_identity(on_zero="constant", on_ones="operand"),
        ),
        builder_name="and_",
    ),
    _binary(
        "or",
        LOGIC,
        fr.BinaryFolds(
            boolean=lambda a, b: a or b,
            integer=fr.wrapped(operator.or_),
            identity=fr.logic_identity(on_zero="operand", on_ones="constant"),
        ),
        builder_name="or_",
    ),
    _binary(
        "xor",
        LOGIC,
        fr.BinaryFolds(
            boolean=operator.ne,
            integer=fr.wrapped(operator.xor),
            identity=fr.logic_identity(on_zero="operand", on_ones="not"),
        ),
    ),
    _unary(
        "abs",
        NUM,
        True,
        fr.UnaryFolds(integer=lambda a, ty: wrap(abs(a), ty), real=abs, complex=fr.complex_abs),
    ),
    _unary(
        "neg",
        NUM,
        False,
        fr.UnaryFolds(
            integer=lambda a, ty: wrap(-a, ty),
            real=operator.neg,
            complex=lambda a, ty: (-a[0], -a[1]),
        ),
    ),
    _unary(
        "not",
        LOGIC,
        False,
        fr.UnaryFolds(boolean=operator.not_, integer=lambda a, ty: wrap(~a, ty)),
        builder_name="not_",
    ),
    _unary("conj", COMPLEX, False, fr.UnaryFolds(complex=lambda a, ty: (a[0], -a[1]))),
    _unary("im", COMPLEX, True, fr.UnaryFolds(complex=lambda a, ty: a[1])),
    _unary("re", COMPLEX, True, fr.UnaryFolds(complex=lambda a, ty: a[0])),
    _math("cos", FLOAT, _COS),
    _math("native_cos", FLOAT, _COS),
    _math("sin", FLOAT, _SIN),
    _math("native_sin", FLOAT, _SIN),
    _math("exp", FLOAT_COMPLEX, _EXP),
    _math("native_exp", FLOAT_COMPLEX, _EXP),
    _math("exp2", FLOAT_COMPLEX, _EXP2),
    _math("native_exp2", FLOAT_COMPLEX, _EXP2),
    _math("log", FLOAT, _LOG),
    _math("native_log", FLOAT, _LOG),
    _math("log2", FLOAT, _LOG2),
    _math("native_log2", FLOAT, _LOG2),
    _compare(
        "equal",
        False,
        fr.CompareFolds(operator.eq, lambda a, b: a[0] == b[0] and a[1] == b[1]),
    ),
    _compare(
        "not_equal",
        False,
        fr.CompareFolds(operator.ne, lambda a, b: a[0] != b[0] or a[1] != b[1]),
    ),
    _compare("greater_than", True, fr.CompareFolds(operator.gt)),
    _compare("greater_than_equal", True, fr.CompareFolds(operator.ge)),
    _compare("less_than", True, fr.CompareFolds(operator.lt)),
    _compare("less_than_equal", True, fr.CompareFolds(operator.le)),
    (CastInst, InstSpec("cast", operands=("a",), result=R, fmt="$a : type"), {}),
    (
        ConstantInst,
        InstSpec("constant", (Prop("value", "value", None),), result=R, syntax=Syntax.constant),
        {},
    ),
]
