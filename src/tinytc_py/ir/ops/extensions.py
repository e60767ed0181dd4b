"""The tinytc-py language extensions (docs/extensions.md): subgroup shuffles, work-group
collectives, printf, select, bitcast, more math, and references to program-level constant data.

Each extension is a row of the one instruction table (marked `extension=True`), so the parser,
printer, builder and C API creators know it like any other instruction; the classes here carry
the verification of the Restrictions that docs/extensions.md lists. Whether extensions are
enabled is checked by ir/extensions.py."""

from __future__ import annotations

from typing import Any, ClassVar

from ...errors import Status
from .. import checks, printf_format
from ..enums import ResultUniformity, Syntax
from ..inst import Exec, Inst, InstSpec, Prop
from ..types import (
    CoopmatrixType,
    MemrefType,
    NumberType,
    Type,
)
from .arith import ArithInst, MathInst
from .common import (
    FLOAT,
    UNIFORM,
    VARYING,
    R,
    Row,
    result_type,
)
from .spmd import SubgroupOperationInst, collective_op


def _same_result(inst: Inst, v) -> None:
    checks.same_type(
        inst,
        v.type,
        result_type(inst),
        Status.ir_operand_type_must_match_return_type,
        "result type must match the operand type",
        v,
    )


def _a_type(operands: dict[str, Any]) -> Type | None:
    """The result type of the rows whose result has the type of operand `a`."""
    return operands["a"].type


# ---- SPMD: shuffles and work-group collectives ---------------------------------------------------


class ShuffleInst(Inst):
    """subgroup_shuffle{,_xor,_up,_down}: the value of another lane of the subgroup; `lane`
    names the second operand (lane, mask or delta)."""

    __slots__ = ()
    is_family = True
    lane: ClassVar[str] = "lane"

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return _a_type(operands)

    def verify(self) -> None:
        a = self.required("a")
        checks.number(self, a)
        checks.i32(self, self.required(self.lane), self.lane)
        _same_result(self, a)


class WorkGroupOperationInst(SubgroupOperationInst):
    """work_group_{reduce,inclusive_scan,exclusive_scan}_{add,max,min}: the subgroup operation's
    rules, over every work-item of the work-group."""

    __slots__ = ()
    is_family = True


class WorkGroupBroadcastInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return _a_type(operands)

    def verify(self) -> None:
        a = self.required("a")
        checks.number(self, a)
        checks.i32(self, self.required("id"), "work-item id")
        _same_result(self, a)


class PrintfInst(Inst):
    """printf "format", args...: the format's conversions must match the argument types."""

    __slots__ = ()

    def verify(self) -> None:
        args = self.operand_list("args")
        try:
            printf_format.check(self.props["format"], [v.type for v in args])
        except printf_format.FormatError as e:
            raise self.error(Status.ext_printf_format_mismatch, str(e), *args) from None


# ---- mixed: select, bitcast, math ----------------------------------------------------------------


class SelectInst(Inst):
    """%r = select %cond, %a, %b : T; T a number type or a coopmatrix, whose components all take
    the same operand (the condition is a scalar bool)."""

    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return _a_type(operands)

    def verify(self) -> None:
        cond, a, b = self.required("cond"), self.required("a"), self.required("b")
        checks.boolean(self, cond)
        if not isinstance(a.type, (NumberType, CoopmatrixType)):
            raise self.error(
                Status.ir_expected_coopmatrix_or_number, "operand must be a number or coopmatrix", a
            )
        checks.same_type(
            self, a.type, b.type, Status.ir_number_mismatch, "operand types differ", a, b
        )
        _same_result(self, a)


def _bits(ty: NumberType) -> int:
    return 8 * ty.size


class BitcastInst(Inst):
    """%r = bitcast %a : T; the bits of a number (or of every coopmatrix component) read as
    another type of the same width."""

    __slots__ = ()

    def verify(self) -> None:
        a = self.required("a")
        src, dst = a.type, result_type(self)
        if isinstance(src, CoopmatrixType):
            if not (
                isinstance(dst, CoopmatrixType) and dst.shape == src.shape and dst.use is src.use
            ):
                raise self.error(
                    Status.ir_incompatible_shapes,
                    f"bitcast of {src} must return a coopmatrix of the same shape and use",
                    a,
                )
            s, d = src.component, dst.component
        elif not isinstance(src, NumberType) or not isinstance(dst, NumberType):
            raise self.error(
                Status.ir_expected_number,
                "bitcast takes and returns numbers (or coopmatrices)",
                a,
            )
        else:
            s, d = src, dst
        if _bits(s) != _bits(d):
            raise self.error(
                Status.ext_bitcast_size_mismatch,
                f"{s} has {_bits(s)} bits but {d} has {_bits(d)}",
                a,
            )


class MathNaryInst(ArithInst):
    """pow (a, b) and fma (a, b, c): floating scalars of one type, like the unary math."""

    __slots__ = ()
    is_family = True

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return _a_type(operands)

    def verify(self) -> None:
        ops = self.operands
        a = ops[0]
        if not isinstance(a.type, NumberType):
            raise self.error(Status.ir_expected_number, "operand must be a scalar number", a)
        self.check_allowed(a.type, a)
        for v in ops[1:]:
            checks.same_type(
                self, a.type, v.type, Status.ir_number_mismatch, "operand types differ", a, v
            )
        _same_result(self, a)


# ---- program-level data ---------------------------------------------------------------------------


class GlobalRefInst(Inst):
    """%t = global_ref @name : memref<...>: the program's constant data of that name; the
    program is checked for the name and type when the function joins it."""

    __slots__ = ()

    def verify(self) -> None:
        ty = result_type(self)
        if not isinstance(ty, MemrefType):
            raise self.error(Status.ir_expected_memref, "global_ref returns a memref")
        if not self.props["symbol"]:
            raise self.error(Status.ext_undefined_global, "global_ref needs a global's name")


# ---- the table rows ------------------------------------------------------------------------------


def _shuffle(mnemonic: str, lane: str, uniform_lane: bool) -> Row:
    """A shuffle's result is varying; its mask or delta (not a free lane index) must be
    uniform."""
    spec = InstSpec(
        mnemonic,
        operands=("a", lane),
        result=R,
        exec=Exec.spmd,
        fmt=f"$a , ${lane} : type",
        extension=True,
        uniformity=ResultUniformity.varying,
        uniform_operands=(lane,) if uniform_lane else (),
    )
    return (ShuffleInst, spec, {"lane": lane})


def _work_group_op(mnemonic: str, uniformity: ResultUniformity) -> Row:
    """A scan (varying) or a reduction (uniform) over the work-group."""
    return collective_op(mnemonic, uniformity, WorkGroupOperationInst, extension=True)


def _math(mnemonic: str) -> Row:
    spec = InstSpec(mnemonic, operands=("a",), result=R, fmt="$a : type", extension=True)
    return (MathInst, spec, {"allowed": FLOAT})


ROWS: list[Row] = [
    _shuffle("subgroup_shuffle", "lane", False),
    _shuffle("subgroup_shuffle_xor", "mask", True),
    _shuffle("subgroup_shuffle_up", "delta", True),
    _shuffle("subgroup_shuffle_down", "delta", True),
    _work_group_op("work_group_exclusive_scan_add", VARYING),
    _work_group_op("work_group_exclusive_scan_max", VARYING),
    _work_group_op("work_group_exclusive_scan_min", VARYING),
    _work_group_op("work_group_inclusive_scan_add", VARYING),
    _work_group_op("work_group_inclusive_scan_max", VARYING),
    _work_group_op("work_group_inclusive_scan_min", VARYING),
    _work_group_op("work_group_reduce_add", UNIFORM),
    _work_group_op("work_group_reduce_max", UNIFORM),
    _work_group_op("work_group_reduce_min", UNIFORM),
    (
        WorkGroupBroadcastInst,
        InstSpec(
            "work_group_broadcast",
            operands=("a", "id"),
            result=R,
            exec=Exec.spmd,
            fmt="$a , $id : type",
            extension=True,
            uniformity=ResultUniformity.uniform,
            uniform_operands=("id",),
        ),
        {},
    ),
    (
        PrintfInst,
        InstSpec(
            "printf",
            (Prop("format", "string", ""),),
            ("args*",),
            exec=Exec.spmd,
            side_effects=True,
            extension=True,
            syntax=Syntax.printf,
        ),
        {},
    ),
    (
        SelectInst,
        InstSpec(
            "select",
            operands=("cond", "a", "b"),
            result=R,
            fmt="$cond , $a , $b : type",
            extension=True,
        ),
        {},
    ),
    (
        BitcastInst,
        InstSpec("bitcast", operands=("a",), result=R, fmt="$a : type", extension=True),
        {},
    ),
    _math("sqrt"),
    _math("rsqrt"),
    _math("tanh"),
    _math("erf"),
    _math("floor"),
    _math("ceil"),
    _math("round"),
    _math("trunc"),
    (
        MathNaryInst,
        InstSpec("pow", operands=("a", "b"), result=R, fmt="$a , $b : type", extension=True),
        {"allowed": FLOAT},
    ),
    (
        MathNaryInst,
        InstSpec(
            "fma", operands=("a", "b", "c"), result=R, fmt="$a , $b , $c : type", extension=True
        ),
        {"allowed": FLOAT},
    ),
    (
        GlobalRefInst,
        InstSpec(
            "global_ref",
            (Prop("symbol", "string", ""),),
            result=R,
            fmt="@symbol : type",
            extension=True,
        ),
        {},
    ),
]
