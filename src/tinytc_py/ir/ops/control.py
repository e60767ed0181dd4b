"""Control flow and the collective loops: for, if, yield, foreach, foreach_tile and parallel
(their region kinds and region parameter types)."""

from __future__ import annotations

from ...errors import Status
from .. import checks
from ..enums import Syntax
from ..inst import Exec, Inst, InstSpec, Prop
from ..types import (
    BooleanType,
    CoopmatrixType,
    NumberType,
    Type,
)
from .common import (
    Row,
)


class LoopRangeInst(Inst):
    """from/to lists of foreach and foreach_tile."""

    __slots__ = ()

    def check_ranges(self) -> list[Type]:
        frm, to = self.operand_list("from"), self.operand_list("to")
        if not frm or len(frm) != len(to):
            raise self.error(
                Status.ir_from_to_mismatch, "from and to lists must be non-empty and equally long"
            )
        for f, t in zip(frm, to):
            fty = checks.integer(self, f, "loop bound")
            checks.same_type(
                self, fty, t.type, Status.ir_number_mismatch, "loop bounds differ", f, t
            )
        return [f.type for f in frm]


class ForeachInst(LoopRangeInst):
    __slots__ = ()
    region_kinds = (Exec.spmd,)

    def verify(self) -> None:
        self.check_ranges()

    def region_param_types(self) -> list[list[Type]]:
        return [[f.type for f in self.operand_list("from")]]


class ForeachTileInst(LoopRangeInst):
    __slots__ = ()
    region_kinds = (Exec.spmd,)

    def verify_subgroup_size(self, sgs: int) -> None:
        if self.props["tile_shape"][0] % sgs:
            raise self.error(
                Status.ir_tile_shape0_not_multiple_of_sgs,
                f"first tile extent must be a multiple of the subgroup size {sgs}",
            )

    def verify(self) -> None:
        types = self.check_ranges()
        tile = self.props["tile_shape"]
        if len(tile) != len(types):
            raise self.error(
                Status.ir_from_tile_shape_mismatch, "tile shape and loop range differ in length"
            )
        if any(t <= 0 for t in tile):
            raise self.error(Status.ir_invalid_shape, "tile shape entries must be positive")

    def region_param_types(self) -> list[list[Type]]:
        types = [f.type for f in self.operand_list("from")]
        return [types + types]


class ParallelInst(Inst):
    __slots__ = ()
    region_kinds = (Exec.spmd,)


_YIELDABLE = (BooleanType, NumberType, CoopmatrixType)


def _check_yieldable(inst: Inst, types: list[Type]) -> None:
    for ty in types:
        if not isinstance(ty, _YIELDABLE):
            raise inst.error(
                Status.ir_expected_coopmatrix_number_or_boolean,
                f"cannot return values of type {ty}",
            )


class ForInst(Inst):
    __slots__ = ()
    region_kinds = (Exec.mixed,)

    def verify(self) -> None:
        frm, to, step = self.required("from"), self.required("to"), self.operand("step")
        ty = checks.integer(self, frm, "loop bound")
        for v in (to, step):
            if v is not None and v.type is not ty:  # (Status on the error path: arith.py)
                checks.same_type(
                    self, ty, v.type, Status.ir_number_mismatch, "loop range types differ", frm, v
                )
        init = self.operand_list("iter_init")
        types = [r.type for r in self.results]
        _check_yieldable(self, types)
        if len(init) != len(types) or any(v.type is not t for v, t in zip(init, types)):
            raise self.error(
                Status.ir_init_return_type_mismatch,
                "initial values must match the return types",
                *init,
            )
        self.check_attrs()

    def check_attrs(self) -> None:
        unroll = self.attrs.get("unroll") if self.attrs is not None else None
        if unroll is not None and not isinstance(getattr(unroll, "value", None), (bool, int)):
            raise self.error(
                Status.ir_expected_integer_attribute, "unroll must be a boolean or an integer"
            )

    def region_param_types(self) -> list[list[Type]]:
        return [[self.required("from").type] + [r.type for r in self.results]]


class IfInst(Inst):
    __slots__ = ()
    region_kinds = (Exec.mixed, Exec.mixed)

    def verify(self) -> None:
        checks.boolean(self, self.required("condition"))
        _check_yieldable(self, [r.type for r in self.results])


class YieldInst(Inst):
    __slots__ = ()


# ---- the table rows ------------------------------------------------------------------------------

ROWS: list[Row] = [
    (
        ForeachInst,
        InstSpec(
            "foreach",
            operands=("from*", "to*"),
            regions=("body",),
            exec=Exec.collective,
            side_effects=True,
            syntax=Syntax.foreach,
            varying_params=True,
        ),
        {},
    ),
    (
        ForeachTileInst,
        InstSpec(
            "foreach_tile",
            (Prop("tile_shape", "ints", ()),),
            ("from*", "to*"),
            regions=("body",),
            exec=Exec.collective,
            side_effects=True,
            syntax=Syntax.foreach,
        ),
        {},
    ),
    (
        ParallelInst,
        InstSpec(
            "parallel",
            regions=("body",),
            exec=Exec.collective,
            side_effects=True,
            syntax=Syntax.parallel,
        ),
        {},
    ),
    (
        ForInst,
        InstSpec(
            "for",
            operands=("from", "to", "step?", "iter_init*"),
            result="results*",
            regions=("body",),
            builder_name="for_",
            syntax=Syntax.for_,
        ),
        {},
    ),
    (
        IfInst,
        InstSpec(
            "if",
            operands=("condition",),
            result="results*",
            regions=("then", "otherwise"),
            builder_name="if_",
            syntax=Syntax.if_,
        ),
        {},
    ),
    (
        YieldInst,
        InstSpec("yield", operands=("yielded_vals*",), fmt="( $yielded_vals* )", side_effects=True),
        {},
    ),
]
