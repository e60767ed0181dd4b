"""Dynamic uniformity: which values hold the same value on every work-item of a subgroup.

The language reference requires some operands to be *dynamically uniform* ("in an SPMD region,
we call an argument dynamically uniform if all work-items in a subgroup have the same value").
`Uniformity(func)` decides this conservatively for every value of a function, and
`check_dynamically_uniform(func)` raises a located error for the first operand that breaks one
of the spec's uniformity restrictions (see `must_be_uniform`).

It lives in ir/ because the verifier runs it: a program that breaks a uniformity restriction is
not a valid program. The per-instruction facts are the instruction spec's (ir/inst.py):
`uniformity` (results varying / uniform whatever the operands, or following them),
`uniform_operands` (the operands the reference requires to be uniform) and `varying_params`
(varying region parameters); the rules below say which rows set them.

Rules (a value not listed as varying is uniform):

- Function parameters, constants, and everything defined in a collective region are uniform
  ("local variables passed to or returned from a collective instruction are always uniform").
- Builtins are uniform, except `subgroup_local_id`, which is varying.
- Varying by nature (in SPMD regions): the results of `subgroup_*_scan_*` (one prefix per
  work-item), `cooperative_matrix_extract` (an entry of the work-item's own vector),
  `atomic_load` (each work-item's atomic access may observe a different concurrent write) and
  `atomic_add` / `atomic_max` / `atomic_min` (each work-item gets a different old value).
- Uniform by nature: the results of `subgroup_broadcast` and `subgroup_reduce_*`.
- Extensions: shuffles and work-group scans are varying, work-group reductions and broadcasts
  uniform; a shuffle's mask or delta and a work-group broadcast's id must be uniform.
- Region parameters: the loop variables of `foreach` and the (row, column, component) parameters
  of `cooperative_matrix_apply` are varying; the tile offsets and sizes of `foreach_tile` are
  uniform (the reference states "the tile offsets must be dynamically uniform", which binds the
  implementation: lower-foreach derives them from subgroup ids only; the sizes follow from the
  offsets and the uniform bounds).
- A coopmatrix is one matrix distributed over the subgroup: an instruction's coopmatrix result is
  varying only if one of its coopmatrix operands, or an operand the reference requires to be
  uniform, is varying (inserting a varying scalar or scaling by one still gives one matrix).
- `load` (like any other instruction) gives a varying result iff one of its operands is varying:
  the same address gives every work-item the same value.
- `if`: result k is varying if the condition is varying or a branch yields a varying value k.
- `for`: if from / to / step is varying, the loop variable, every loop-carried value and every
  result are varying (work-items leave the loop after different trip counts); otherwise
  loop-carried value k and result k are varying if init value k or yielded value k is varying.
- Any other instruction result is varying iff one of its operands is varying.

Values inside an `if` with a varying condition are not made varying by that condition alone
(they are uniform among the work-items that execute them); only the `if`'s results are.

The analysis is a worklist over use lists: every value becomes varying at most once and each of
its uses is visited once, so it costs O(values + uses) per function; loop-carried values reach
their fixed point through the same worklist. The result is a snapshot: build a new `Uniformity`
after the function changes.
"""

from __future__ import annotations

from ..errors import Status
from .enums import ResultUniformity
from .inst import Exec, Inst
from .ops.control import ForInst, IfInst, YieldInst
from .region import Func, Region
from .types import CoopmatrixType
from .values import Use, Value

_ROLES = {
    "operand": "memref",
    "pos0": "row index",
    "pos1": "column index",
    "val": "matrix",
    "number": "number",
    "idx": "subgroup local index",
    "id": "work-item id",
}


def operand_keys(inst: Inst) -> list[str]:
    """The operand name (from the instruction's spec row) of each operand slot, in order."""
    keys: list[str] = []
    for key, _ in inst.spec.operand_slots:
        keys.extend([key] * len(inst.operand_list(key)))
    return keys


def must_be_uniform(inst: Inst) -> list[tuple[int, str]]:
    """(operand index, role) of each operand of `inst` that must be dynamically uniform: those
    its spec names (`uniform_operands`), and every operand of coopmatrix type ("An argument to
    any instruction that has coopmatrix type must be dynamically uniform")."""
    required = inst.spec.uniform_operands
    if not required:  # most instructions: no list made unless a coopmatrix operand comes up
        for u in inst.uses:
            if isinstance(u.value.type, CoopmatrixType):
                break
        else:
            return []
    coop = [isinstance(u.value.type, CoopmatrixType) for u in inst.uses]
    out = []
    for index, key in enumerate(operand_keys(inst)):
        if key in required:
            out.append((index, _ROLES.get(key, key)))
        elif coop[index]:
            out.append((index, "coopmatrix argument"))
    return out


class Uniformity:
    """Which values of one function are varying within a subgroup (see the module docstring)."""

    def __init__(self, func: Func) -> None:
        # varying value -> the value its varying-ness comes from (itself for a source: a
        # subgroup_local_id result, a foreach loop variable, ...); check_dynamically_uniform
        # names it in its error
        self.varying: dict[Value, Value] = {}
        self._work: list[Value] = []
        self._seed(func.body, Exec.collective)
        while self._work:
            value = self._work.pop()
            origin = self.varying[value]
            for use in value.uses:
                self._propagate(use, origin)

    def is_uniform(self, value: Value) -> bool:
        return value not in self.varying

    # ---- construction ---------------------------------------------------------------------------

    def _mark(self, values: list[Value], origin: Value) -> None:
        for v in values:
            if v not in self.varying:
                self.varying[v] = origin
                self._work.append(v)

    def _seed(self, region: Region, kind: Exec) -> None:
        """Marks the varying sources in SPMD regions (recursively)."""
        if region.kind is not Exec.mixed:
            kind = region.kind
        spmd = kind is Exec.spmd
        owner = region.owner
        if spmd and isinstance(owner, Inst) and owner.spec.varying_params:
            for p in region.params:
                self._mark([p], p)
        for inst in region.insts:
            if spmd and inst.spec.uniformity is ResultUniformity.varying:
                for r in inst.results:
                    self._mark([r], r)
            for child in inst.regions:
                self._seed(child, kind)

    def _propagate(self, use: Use, origin: Value) -> None:
        """The operand `use` just became varying: mark what depends on it."""
        inst = use.owner
        if isinstance(inst, YieldInst):
            self._from_yield(inst, use.index, origin)
        elif isinstance(inst, ForInst):
            self._from_for_operand(inst, use.index, origin)
        elif inst.spec.uniformity is ResultUniformity.uniform:
            return
        elif (
            isinstance(inst, IfInst)
            or not _coop_result(inst)
            or _affects_coop_result(inst, use.index)
        ):
            self._mark(inst.results, origin)

    def _from_yield(self, inst: Inst, index: int, origin: Value) -> None:
        region = inst.parent
        owner = region.owner if region is not None else None
        if not isinstance(owner, Inst) or index >= len(owner.results):
            return
        # cooperative_matrix_apply yields components: its coopmatrix result stays one matrix.
        if isinstance(owner, ForInst):
            params = owner.regions[0].params
            self._mark(params[index + 1 : index + 2] + [owner.results[index]], origin)
        elif isinstance(owner, IfInst):
            self._mark([owner.results[index]], origin)

    def _from_for_operand(self, inst: Inst, index: int, origin: Value) -> None:
        params = inst.regions[0].params
        first_init = len(inst.uses) - len(inst.operand_list("iter_init"))
        if index < first_init:  # from / to / step: the trip count differs between work-items
            self._mark(params + inst.results, origin)
            return
        k = index - first_init
        self._mark(params[k + 1 : k + 2] + inst.results[k : k + 1], origin)


def _coop_result(inst: Inst) -> bool:
    return bool(inst.results) and isinstance(inst.results[0].type, CoopmatrixType)


def _affects_coop_result(inst: Inst, index: int) -> bool:
    """Whether operand `index` decides the uniformity of the instruction's coopmatrix result."""
    if isinstance(inst.uses[index].value.type, CoopmatrixType):
        return True
    return any(i == index for i, _ in must_be_uniform(inst))


def check_dynamically_uniform(func: Func) -> None:
    """Raises for the first operand (in program order) that must be dynamically uniform but is
    varying; the notes point at the operand and at the source of its varying-ness.

    The analysis runs when the first instruction with a restriction comes up; when it finds no
    varying value (as in a lowered gemm), nothing can break one and the walk ends. Past
    that point only instructions with a varying operand have their restrictions looked up."""
    varying: dict[Value, Value] | None = None
    for inst in func.body.walk():
        if varying is not None and not any(u.value in varying for u in inst.uses):
            continue
        required = must_be_uniform(inst)
        if not required:
            continue
        if varying is None:
            varying = Uniformity(func).varying
            if not varying:
                return
        for index, role in required:
            value = inst.uses[index].value
            origin = varying.get(value)
            if origin is None:
                continue
            # The C API has no status for uniformity (capi/api/enums.toml), so this is the generic
            # compilation error.
            raise inst.error(
                Status.compilation_error,
                f"{role} of {inst.name} must be dynamically uniform",
                value,
                origin,
            )
