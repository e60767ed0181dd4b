"""Structural verification shared by the parser, the builder and the check-ir pass.

Instruction-local restrictions run when an instruction is created (ir/ops/). This module
checks what depends on the surroundings: where an instruction may appear (collective / SPMD),
yields at the end of regions, function and parameter attributes, values used where they are
visible (definition before use), the restrictions that need the subgroup size (each
instruction's `verify_subgroup_size`), and (once a function is complete) the
dynamically-uniform restrictions (uniformity.py).
"""

from __future__ import annotations

from ..errors import CompilationError, Status
from .attrs import ArrayAttr, DictionaryAttr, IntegerAttr
from .inst import Exec, Inst
from .region import Func, Prog, Region
from .types import GroupType, MemrefType, element_type
from .uniformity import check_dynamically_uniform
from .values import Value

_REGION_NAMES = {Exec.collective: "collective", Exec.spmd: "SPMD"}
_ARTICLE = {Exec.collective: "a", Exec.spmd: "an"}


def check_placement(inst: Inst, region: Region) -> None:
    """Collective instructions only in collective regions, SPMD ones only in SPMD regions."""
    if inst.spec.exec is not Exec.mixed:
        check_exec(inst, region.effective_kind())


def check_exec(inst: Inst, have: Exec) -> None:
    """check_placement in a region whose effective kind `have` is known."""
    want = inst.spec.exec
    if want is Exec.mixed or want is have:
        return
    status = (
        Status.ir_collective_called_from_spmd
        if want is Exec.collective
        else Status.ir_spmd_called_from_collective
    )
    raise inst.error(
        status,
        f"{_REGION_NAMES[want]} instruction '{inst.name}' is not allowed in {_ARTICLE[have]} "
        f"{_REGION_NAMES[have]} region",
    )


def _yield_types(region: Region) -> list | None:
    """The types a region must yield, or None when it yields nothing."""
    owner = region.owner
    if isinstance(owner, Inst):
        if owner.name in ("for", "if"):
            return [r.type for r in owner.results] or None
        if owner.name == "cooperative_matrix_apply":
            return [element_type(owner.results[0].type)]
    return None


def check_region_end(region: Region) -> None:
    """Yield rules: only as the last instruction, with the count and types the owner expects."""
    expected = _yield_types(region)
    owner = region.owner
    for inst in region.insts[:-1]:
        if inst.name == "yield":
            raise inst.error(Status.ir_unexpected_yield, "yield must be the last instruction")
    last = region.insts[-1] if region.insts else None
    if last is None or last.name != "yield":
        if expected is None:
            return
        if isinstance(owner, Inst) and owner.name == "if" and region is owner.regions[1]:
            raise owner.error(
                Status.ir_yield_in_else_branch_missing, "else branch must yield the if's values"
            )
        where = owner if isinstance(owner, Inst) else None
        err_loc = last.loc if last is not None else (where.loc if where else region.loc)
        want = ", ".join(str(t) for t in expected)
        raise CompilationError(
            err_loc, Status.ir_must_have_yield, f"region must end with a yield of ({want})"
        )
    vals = last.operands
    if expected is None:
        if vals:
            raise last.error(Status.ir_unexpected_yield, "this region yields no values")
        return
    if len(vals) != len(expected) or any(v.type is not t for v, t in zip(vals, expected)):
        want = ", ".join(str(t) for t in expected)
        raise last.error(Status.ir_yield_mismatch, f"yield must return ({want})", *vals)


def _int_attr(func: Func, attr, what: str) -> int:
    if not isinstance(attr, IntegerAttr):
        raise CompilationError(
            func.loc, Status.ir_expected_integer_attribute, f"{what} must be an integer"
        )
    return attr.value


def _int_array(func: Func, attr, what: str) -> list[int]:
    if not isinstance(attr, ArrayAttr):
        raise CompilationError(
            func.loc, Status.ir_expected_array_attribute, f"{what} must be an array"
        )
    return [_int_attr(func, a, what + " entries") for a in attr.values]


def function_subgroup_size(func: Func) -> int | None:
    attrs = func.attrs
    sgs = attrs.get("subgroup_size") if attrs is not None else None
    return sgs.value if isinstance(sgs, IntegerAttr) else None


def check_function_attrs(func: Func) -> None:
    """subgroup_size / work_group_size on the function; alignment and gcds on parameters."""
    attrs = func.attrs
    if attrs is not None:
        if not isinstance(attrs, DictionaryAttr):
            raise CompilationError(func.loc, Status.ir_expected_dictionary_attribute, "")
        sgs_attr = attrs.get("subgroup_size")
        sgs = _int_attr(func, sgs_attr, "subgroup_size") if sgs_attr is not None else None
        if sgs is not None and sgs <= 0:
            raise CompilationError(
                func.loc,
                Status.unsupported_subgroup_size,
                f"subgroup_size must be positive, got {sgs}",
            )
        wgs_attr = attrs.get("work_group_size")
        if wgs_attr is not None:
            wgs = _int_array(func, wgs_attr, "work_group_size")
            if len(wgs) != 2:
                raise CompilationError(
                    func.loc,
                    Status.ir_unexpected_array_attribute_size,
                    "work_group_size needs 2 entries",
                )
            if any(w <= 0 for w in wgs) or (sgs is not None and wgs[0] % sgs):
                raise CompilationError(
                    func.loc,
                    Status.unsupported_work_group_size,
                    "work_group_size[0] must be a positive multiple of the subgroup size",
                )
    for param, pattrs in zip(func.params, func.param_attrs):
        if pattrs is not None:
            _check_param_attrs(func, param, pattrs)


def _check_param_attrs(func: Func, param: Value, attrs: DictionaryAttr) -> None:
    ty = param.type
    mt = ty.memref if isinstance(ty, GroupType) else ty
    if not isinstance(mt, MemrefType):
        raise CompilationError(
            param.loc,
            Status.ir_expected_memref_or_group,
            "parameter attributes need a memref or group parameter",
            [param],
        )
    align = attrs.get("alignment")
    if align is not None:
        value = _int_attr(func, align, "alignment")
        if value <= 0 or value % mt.element.size:
            raise CompilationError(
                param.loc,
                Status.ir_insufficient_alignment,
                f"alignment must be a multiple of the element size {mt.element.size}",
                [param],
            )
    for key in ("shape_gcd", "stride_gcd"):
        gcd = attrs.get(key)
        if gcd is None:
            continue
        values = _int_array(func, gcd, key)
        if len(values) > mt.order or any(v <= 0 for v in values):
            raise CompilationError(
                param.loc,
                Status.ir_unexpected_array_attribute_size,
                f"{key} needs at most {mt.order} positive entries",
                [param],
            )


def _check_uses(inst: Inst, visible: set[Value]) -> None:
    for use in inst.uses:
        v = use.value
        if v not in visible:
            raise inst.error(
                Status.compilation_error, f"value {v} is not defined before its use here", v
            )


def _verify_region(region: Region, visible: set[Value], sgs: int | None) -> None:
    added = list(region.params)
    visible.update(added)
    kind = region.effective_kind()
    for inst in region.insts:
        check_exec(inst, kind)
        _check_uses(inst, visible)
        if sgs is not None:
            inst.verify_subgroup_size(sgs)
        for child in inst.regions:
            _verify_region(child, visible, sgs)
        visible.update(inst.results)
        added.extend(inst.results)
    check_region_end(region)
    visible.difference_update(added)


def verify_func(func: Func) -> None:
    check_function_attrs(func)
    _verify_region(func.body, set(), function_subgroup_size(func))
    check_dynamically_uniform(func)


def verify_prog(prog: Prog) -> None:
    """The full check (the check-ir pass): every rule of this module on every function."""
    names = set()
    for func in prog.funcs:
        if func.name in names:
            raise CompilationError(func.loc, Status.parse_error, f"function @{func.name} redefined")
        names.add(func.name)
        verify_func(func)


def finish_func(func: Func) -> None:
    """What the parser and builder check once a function is complete: its attributes and the
    subgroup-size dependent restrictions (placement and yields were checked on the way)."""
    check_function_attrs(func)
    sgs = function_subgroup_size(func)
    if sgs is not None:
        for inst in func.body.walk():
            inst.verify_subgroup_size(sgs)
    check_dynamically_uniform(func)
