"""Cooperative matrices: apply, load / store (and their atomic forms), prefetch, construct,
extract, insert, mul_add, reduce and scale."""

from __future__ import annotations

from typing import Any, ClassVar

from ...errors import Status
from .. import checks
from ..attrs import NONTEMPORAL, BooleanAttr
from ..enums import (
    MatrixUse,
    ReduceMode,
    ResultUniformity,
    Syntax,
)
from ..inst import Exec, Inst, InstSpec, Prop
from ..types import (
    CoopmatrixType,
    MemrefType,
    NumberType,
    Type,
    as_coopmatrix,
    promote,
)
from ..values import Value
from .arith import CAST_FORBIDDEN
from .common import (
    CHECKED,
    SCOPE,
    SEMANTICS,
    TRANS_A,
    R,
    Row,
    result_type,
)


def _coop_result(inst: Inst) -> CoopmatrixType:
    r = result_type(inst)
    if not isinstance(r, CoopmatrixType):
        raise inst.error(Status.ir_expected_coopmatrix, "result must have coopmatrix type")
    return r


class CoopApplyInst(Inst):
    __slots__ = ()
    region_kinds = (Exec.spmd,)

    def verify(self) -> None:
        a = self.required("a")
        ct = checks.coopmatrix(self, a)
        checks.same_type(
            self,
            ct,
            result_type(self),
            Status.ir_operand_type_must_match_return_type,
            "result type must match the operand type",
            a,
        )

    def region_param_types(self) -> list[list[Type]]:
        ct = as_coopmatrix(self.required("a").type)
        return [[ct.ctx.i32, ct.ctx.i32, ct.component]]


class CoopMemoryInst(Inst):
    """cooperative_matrix_load/store/atomic_*: a 2-d memref at (pos0, pos1)."""

    __slots__ = ()
    atomic: ClassVar[bool] = False  # set on the atomic_* rows

    def check_memref(self, component: NumberType) -> MemrefType:
        t = self.required("operand")
        mt = checks.memref_order(self, t, (2,), Status.ir_expected_memref_order_2, "M")
        checks.index(self, self.required("pos0"))
        checks.index(self, self.required("pos1"))
        if component is not mt.element:
            raise self.error(
                Status.ir_number_mismatch,
                f"component type {component} must match element type {mt.element}",
                t,
            )
        return mt


class CoopLoadInst(CoopMemoryInst):
    __slots__ = ()
    is_family = True

    def verify(self) -> None:
        self.check_memref(_coop_result(self).component)


class CoopStoreInst(CoopMemoryInst):
    __slots__ = ()
    is_family = True

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["val"].type

    def verify(self) -> None:
        val = self.required("val")
        ct = checks.coopmatrix(self, val)
        mt = self.check_memref(ct.component)
        hint = self.attrs.get(NONTEMPORAL) if self.attrs is not None else None
        if hint is not None and not isinstance(hint, BooleanAttr):
            raise self.error(
                Status.ir_expected_boolean_attribute,
                f'"{NONTEMPORAL}" takes true or false, got {hint}',
            )
        if self.results:
            checks.same_type(
                self,
                ct,
                result_type(self),
                Status.ir_operand_type_must_match_return_type,
                "result type must match the operand type",
                val,
            )
            if self.name != "cooperative_matrix_atomic_add" and mt.element.is_complex:
                raise self.error(
                    Status.ir_complex_unsupported,
                    f"{self.name} is not defined on {mt.element}",
                    val,
                )


class CoopConstructInst(Inst):
    __slots__ = ()

    def verify(self) -> None:
        v = self.required("number")
        ty = checks.number(self, v)
        ct = _coop_result(self)
        checks.same_type(
            self,
            ty,
            ct.component,
            Status.ir_number_mismatch,
            "number must match the component type",
            v,
        )


def _indexed_matrix(inst: Inst, m: Value) -> CoopmatrixType:
    """The type of the matrix operand `m` of extract / insert, whose `index` property must
    name one of its elements."""
    ct = checks.coopmatrix(inst, m)
    index = inst.props["index"]
    if not 0 <= index < ct.rows * ct.cols:
        raise inst.error(Status.ir_out_of_bounds, f"index {index} out of bounds", m)
    return ct


class CoopExtractInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return getattr(operands["mat"].type, "component", None)

    def verify(self) -> None:
        m = self.required("mat")
        ct = _indexed_matrix(self, m)
        checks.same_type(
            self,
            ct.component,
            result_type(self),
            Status.ir_number_mismatch,
            "result must have the component type",
            m,
        )


class CoopInsertInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["mat"].type

    def verify(self) -> None:
        v, m = self.required("val"), self.required("mat")
        ct = _indexed_matrix(self, m)
        checks.same_type(
            self,
            v.type,
            ct.component,
            Status.ir_number_mismatch,
            "inserted value must have the component type",
            v,
        )
        checks.same_type(
            self,
            ct,
            result_type(self),
            Status.ir_operand_type_must_match_return_type,
            "result type must match the matrix type",
            m,
        )


class CoopMulAddInst(Inst):
    __slots__ = ()

    def verify_subgroup_size(self, sgs: int) -> None:
        for v in (self.required("a"), self.required("c")):
            if as_coopmatrix(v.type).rows % sgs:
                raise self.error(
                    Status.ir_unsupported_coopmatrix_shape,
                    f"rows must be a multiple of the subgroup size {sgs}",
                    v,
                )

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["c"].type

    def verify(self) -> None:
        A, B, C = self.required("a"), self.required("b"), self.required("c")
        a, b, c = (checks.coopmatrix(self, v) for v in (A, B, C))
        d = _coop_result(self)
        for ty, use, v in (
            (a, MatrixUse.a, A),
            (b, MatrixUse.b, B),
            (c, MatrixUse.acc, C),
            (d, MatrixUse.acc, None),
        ):
            if ty.use is not use:
                raise self.error(
                    Status.ir_invalid_matrix_use,
                    f"expected {use.text}, got {ty.use.text}",
                    *([v] if v else []),
                )
        if a.cols != b.rows:
            raise self.error(
                Status.ir_incompatible_shapes,
                f"columns(A) = {a.cols} must equal rows(B) = {b.rows}",
                A,
                B,
            )
        if c.rows != a.rows or c.cols != b.cols:
            raise self.error(
                Status.ir_incompatible_shapes,
                f"shape(C) = {c.rows}x{c.cols} must equal rows(A) x columns(B) = {a.rows}x{b.cols}",
                A,
                B,
                C,
            )
        if d.shape != c.shape:
            raise self.error(
                Status.ir_incompatible_shapes,
                f"result shape {d.rows}x{d.cols} must equal shape(C) = {c.rows}x{c.cols}",
                C,
            )
        ab = promote(a.component, b.component)
        if ab is None:
            raise self.error(
                Status.ir_forbidden_promotion,
                f"component types {a.component} of A and {b.component} of B have no common "
                "promoted type",
                A,
                B,
            )
        if not ab.promotable_to(c.component):
            raise self.error(
                Status.ir_forbidden_promotion,
                f"cannot promote {ab} (promoted component type of A and B) to {c.component} "
                "(component type of C)",
                A,
                B,
                C,
            )
        if (c.component.kind.family, d.component.kind.family) in CAST_FORBIDDEN:
            raise self.error(
                Status.ir_forbidden_cast, f"cannot cast {c.component} to {d.component}", C
            )


class CoopPrefetchInst(Inst):
    __slots__ = ()

    def verify(self) -> None:
        t = self.required("operand")
        checks.memref_order(self, t, (2,), Status.ir_expected_memref_order_2, "M")
        checks.index(self, self.required("pos0"))
        checks.index(self, self.required("pos1"))
        if self.props["cache_level"] < 0:
            raise self.error(Status.ir_out_of_bounds, "cache level must be non-negative", t)
        if self.props["rows"] <= 0 or self.props["cols"] <= 0:
            raise self.error(Status.ir_invalid_shape, "prefetch size must be positive", t)


class CoopReduceInst(Inst):
    """Row or column reductions; `complex_ok` says per row whether complex components reduce
    (add does, min and max have no order on them)."""

    __slots__ = ()
    is_family = True
    complex_ok: ClassVar[bool] = False

    def verify_subgroup_size(self, sgs: int) -> None:
        a = self.required("a")
        if as_coopmatrix(a.type).rows % sgs:
            raise self.error(
                Status.ir_unsupported_coopmatrix_shape,
                f"rows must be a multiple of the subgroup size {sgs}",
                a,
            )

    def verify(self) -> None:
        a = self.required("a")
        at = checks.coopmatrix(self, a)
        r = _coop_result(self)
        if r.component is not at.component or r.use is not at.use:
            raise self.error(
                Status.ir_operand_type_must_match_return_type,
                "component type and use must match the operand's",
                a,
            )
        shape = (at.rows, 1) if self.props["mode"] is ReduceMode.row else (1, at.cols)
        if r.shape != shape:
            raise self.error(
                Status.ir_invalid_shape, f"result shape must be {shape[0]}x{shape[1]}", a
            )
        if not self.complex_ok and at.component.is_complex:
            raise self.error(
                Status.ir_complex_unsupported, f"{self.name} is not defined on {at.component}", a
            )


class CoopScaleInst(Inst):
    __slots__ = ()

    @classmethod
    def infer_result_type(cls, operands: dict[str, Any]) -> Type | None:
        return operands["b"].type

    def verify(self) -> None:
        s, m = self.required("a"), self.required("b")
        ct = checks.coopmatrix(self, m)
        checks.same_type(
            self,
            s.type,
            ct.component,
            Status.ir_number_mismatch,
            "scalar must have the component type",
            s,
            m,
        )
        checks.same_type(
            self,
            ct,
            result_type(self),
            Status.ir_operand_type_must_match_return_type,
            "result type must match the matrix type",
            m,
        )


# ---- the table rows ------------------------------------------------------------------------------

_COOP_POS = ("operand", "pos0", "pos1")
_ATOMIC_PROPS = (TRANS_A, CHECKED, SCOPE, SEMANTICS)


def _coop_store(mnemonic: str, props: tuple[Prop, ...], update: bool, atomic: bool) -> Row:
    """store and atomic_store (update False), atomic_add / _max / _min (update True: read too,
    and return the old values)."""
    spec = InstSpec(
        mnemonic,
        props,
        ("val",) + _COOP_POS,
        R if update else "",
        exec=Exec.spmd,
        # attrs?: the hints of lowerings (ir/attrs.py NONTEMPORAL), so printing keeps them
        fmt="$val , $operand [ $pos0 , $pos1 ] attrs?" + (" : type" if update else ""),
        side_effects=True,
        reads=("operand",) if update else (),
        writes=("operand",),
        uniform_operands=("*",),  # the store's "All arguments must be dynamically uniform."
    )
    return (CoopStoreInst, spec, {"atomic": atomic})


def _coop_reduce(mnemonic: str, complex_ok: bool) -> Row:
    spec = InstSpec(
        mnemonic, (Prop("mode", ReduceMode, None),), ("a",), R, exec=Exec.spmd, fmt="$a : type"
    )
    return (CoopReduceInst, spec, {"complex_ok": complex_ok})


ROWS: list[Row] = [
    (
        CoopApplyInst,
        InstSpec(
            "cooperative_matrix_apply",
            operands=("a",),
            result=R,
            regions=("body",),
            exec=Exec.spmd,
            syntax=Syntax.coop_apply,
            varying_params=True,  # the (row, column, component) of each work-item
        ),
        {},
    ),
    (
        CoopLoadInst,
        InstSpec(
            "cooperative_matrix_load",
            (TRANS_A, CHECKED),
            _COOP_POS,
            R,
            exec=Exec.spmd,
            fmt="$operand [ $pos0 , $pos1 ] : type",
            reads=("operand",),
            uniform_operands=("*",),  # "All arguments must be dynamically uniform."
        ),
        {},
    ),
    (
        CoopLoadInst,
        InstSpec(
            "cooperative_matrix_atomic_load",
            _ATOMIC_PROPS,
            _COOP_POS,
            R,
            exec=Exec.spmd,
            fmt="$operand [ $pos0 , $pos1 ] : type",
            side_effects=True,
            reads=("operand",),
            uniform_operands=("*",),  # "identical [to the load] except for atomicity"
        ),
        {"atomic": True},
    ),
    _coop_store("cooperative_matrix_store", (TRANS_A, CHECKED), update=False, atomic=False),
    _coop_store("cooperative_matrix_atomic_store", _ATOMIC_PROPS, update=False, atomic=True),
    _coop_store("cooperative_matrix_atomic_add", _ATOMIC_PROPS, update=True, atomic=True),
    _coop_store("cooperative_matrix_atomic_max", _ATOMIC_PROPS, update=True, atomic=True),
    _coop_store("cooperative_matrix_atomic_min", _ATOMIC_PROPS, update=True, atomic=True),
    (
        CoopConstructInst,
        InstSpec(
            "cooperative_matrix_construct",
            operands=("number",),
            result=R,
            exec=Exec.spmd,
            fmt="$number : type",
            uniform_operands=("number",),  # "The number must be dynamically uniform."
        ),
        {},
    ),
    (
        CoopExtractInst,
        InstSpec(
            "cooperative_matrix_extract",
            (Prop("index", "int", 0),),
            ("mat",),
            R,
            exec=Exec.spmd,
            fmt="$mat [ #index ] : type",
            uniformity=ResultUniformity.varying,  # an entry of the work-item's own vector
        ),
        {},
    ),
    (
        CoopInsertInst,
        InstSpec(
            "cooperative_matrix_insert",
            (Prop("index", "int", 0),),
            ("val", "mat"),
            R,
            exec=Exec.spmd,
            fmt="$val , $mat [ #index ] : type",
        ),
        {},
    ),
    (
        CoopMulAddInst,
        InstSpec(
            "cooperative_matrix_mul_add",
            operands=("a", "b", "c"),
            result=R,
            exec=Exec.spmd,
            fmt="$a , $b , $c : type",
        ),
        {},
    ),
    (
        CoopPrefetchInst,
        InstSpec(
            "cooperative_matrix_prefetch",
            (Prop("cache_level", "int", 0), Prop("rows", "int", 0), Prop("cols", "int", 0)),
            _COOP_POS,
            exec=Exec.spmd,
            side_effects=True,
            fmt="#cache_level , $operand [ $pos0 , $pos1 ] , #rows , #cols",
            uniform_operands=("*",),  # "All arguments must be dynamically uniform."
        ),
        {},
    ),
    _coop_reduce("cooperative_matrix_reduce_add", complex_ok=True),
    _coop_reduce("cooperative_matrix_reduce_max", complex_ok=False),
    _coop_reduce("cooperative_matrix_reduce_min", complex_ok=False),
    (
        CoopScaleInst,
        InstSpec(
            "cooperative_matrix_scale",
            operands=("a", "b"),
            result=R,
            exec=Exec.spmd,
            fmt="$a , $b : type",
        ),
        {},
    ),
]
