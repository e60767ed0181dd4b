"""SPMD and mixed builtins: barrier, the group / subgroup id and size builtins, subgroup
broadcast and the subgroup scans and reductions."""

from __future__ import annotations

from typing import Any, ClassVar

from ...errors import Status
from .. import checks
from ..enums import ResultUniformity
from ..inst import Exec, Inst, InstSpec, Prop
from ..types import (
    NumberType,
    ScalarKind,
    Type,
)
from .common import (
    COMP3,
    UNIFORM,
    VARYING,
    R,
    Row,
    result_type,
)


class BarrierInst(Inst):
    __slots__ = ()


class BuiltinInst(Inst):
    """Builtin values; `result_kind` is the integer type the reference assigns."""

    __slots__ = ()
    is_family = True
    result_kind: ClassVar[ScalarKind] = ScalarKind.i32

    def verify(self) -> None:
        r = result_type(self)
        if not isinstance(r, NumberType) or r.kind is not self.result_kind:
            status = (
                Status.ir_expected_index
                if self.result_kind is ScalarKind.index
                else Status.ir_expected_i32
            )
            raise self.error(status, f"{self.name} returns {self.result_kind.text}")


class SubgroupBroadcastInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["a"].type

    def verify(self) -> None:
        a, idx = self.required("a"), self.required("idx")
        checks.number(self, a)
        checks.i32(self, idx, "subgroup local index")
        checks.same_type(
            self,
            a.type,
            result_type(self),
            Status.ir_operand_type_must_match_return_type,
            "result type must match the operand type",
            a,
        )


class SubgroupOperationInst(Inst):
    __slots__ = ()
    is_family = True

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["a"].type

    ordered: ClassVar[bool] = False

    def verify(self) -> None:
        a = self.required("a")
        ty = checks.number(self, a)
        if self.ordered and ty.is_complex:
            raise self.error(
                Status.ir_complex_unsupported, f"{self.name} is not defined on {ty}", a
            )
        checks.same_type(
            self,
            ty,
            result_type(self),
            Status.ir_operand_type_must_match_return_type,
            "result type must match the operand type",
            a,
        )


# ---- the table rows ------------------------------------------------------------------------------


def _builtin(
    mnemonic: str,
    kind: ScalarKind,
    exec: Exec,
    has_mode: bool,
    uniformity: ResultUniformity = ResultUniformity.follows_operands,
) -> Row:
    props = (COMP3,) if has_mode else ()
    spec = InstSpec(mnemonic, props, result=R, exec=exec, fmt=": type", uniformity=uniformity)
    return (BuiltinInst, spec, {"result_kind": kind})


def collective_op(
    mnemonic: str,
    uniformity: ResultUniformity,
    cls: type[SubgroupOperationInst] | None = None,
    extension: bool = False,
) -> Row:
    """A scan (varying: one prefix per work-item) or a reduction (uniform) of a subgroup, or of
    a work-group (`cls` WorkGroupOperationInst, an extension); max and min are ordered."""
    spec = InstSpec(
        mnemonic,
        operands=("a",),
        result=R,
        exec=Exec.spmd,
        fmt="$a : type",
        extension=extension,
        uniformity=uniformity,
    )
    kind = cls or SubgroupOperationInst
    return (kind, spec, {"ordered": not mnemonic.endswith("_add")})


ROWS: list[Row] = [
    (
        BarrierInst,
        InstSpec("barrier", (Prop("fence_flags", "fence", 0),), fmt="", side_effects=True),
        {},
    ),
    _builtin("group_id", ScalarKind.index, Exec.mixed, True),
    _builtin("num_groups", ScalarKind.index, Exec.mixed, True),
    _builtin("num_subgroups", ScalarKind.i32, Exec.mixed, True),
    _builtin("subgroup_size", ScalarKind.i32, Exec.mixed, False),
    _builtin("subgroup_id", ScalarKind.i32, Exec.spmd, True),
    _builtin("subgroup_linear_id", ScalarKind.i32, Exec.spmd, False),
    _builtin("subgroup_local_id", ScalarKind.i32, Exec.spmd, False, ResultUniformity.varying),
    (
        SubgroupBroadcastInst,
        InstSpec(
            "subgroup_broadcast",
            operands=("a", "idx"),
            result=R,
            exec=Exec.spmd,
            fmt="$a , $idx : type",
            uniformity=ResultUniformity.uniform,
            uniform_operands=("idx",),  # "The second operand must be dynamically uniform."
        ),
        {},
    ),
    collective_op("subgroup_exclusive_scan_add", VARYING),
    collective_op("subgroup_exclusive_scan_max", VARYING),
    collective_op("subgroup_exclusive_scan_min", VARYING),
    collective_op("subgroup_inclusive_scan_add", VARYING),
    collective_op("subgroup_inclusive_scan_max", VARYING),
    collective_op("subgroup_inclusive_scan_min", VARYING),
    collective_op("subgroup_reduce_add", UNIFORM),
    collective_op("subgroup_reduce_max", UNIFORM),
    collective_op("subgroup_reduce_min", UNIFORM),
]
