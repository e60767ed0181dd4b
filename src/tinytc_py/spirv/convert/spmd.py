"""Builtins (docs/design.md §B2.2, §B6.6), barriers and subgroup operations.

Subgroup operations use the Groups instructions with scope Subgroup: OpGroupBroadcast, and
OpGroup{I,F}Add / {S,F}Max / {S,F}Min with the Reduce, InclusiveScan or ExclusiveScan operation.
OpenCL defines them for 32- and 64-bit integers and for floats only, so i8/i16 are sign-extended
to i32 (add wraps the same way after truncation; min/max are unchanged), bf16 goes through f32,
and complex values combine their two parts separately.
"""

from __future__ import annotations

from ...ir.enums import AddressSpace
from ...ir.inst import Inst
from ...ir.ops.spmd import BarrierInst, BuiltinInst, SubgroupBroadcastInst, SubgroupOperationInst
from ...ir.types import NumberType, ScalarKind
from ..tables import (
    BuiltIn,
    GroupOperation,
    MemoryAccess,
    MemorySemantics,
    Op,
    OpenCLStd,
    Scope,
    StorageClass,
)
from .base import HandlerRows, not_implemented
from .scalar import ScalarConversion

_BUILTIN_VEC = {"group_id": BuiltIn.WorkgroupId, "num_groups": BuiltIn.NumWorkgroups}
_BUILTIN_I32 = {
    "subgroup_size": BuiltIn.SubgroupSize,
    "subgroup_linear_id": BuiltIn.SubgroupId,
    "subgroup_local_id": BuiltIn.SubgroupLocalInvocationId,
}


_GROUP_OPERATION = {
    "reduce": GroupOperation.Reduce,
    "inclusive_scan": GroupOperation.InclusiveScan,
    "exclusive_scan": GroupOperation.ExclusiveScan,
}
_INT_GROUP = {"add": Op.GroupIAdd, "max": Op.GroupSMax, "min": Op.GroupSMin}
_FLOAT_GROUP = {"add": Op.GroupFAdd, "max": Op.GroupFMax, "min": Op.GroupFMin}


class SpmdConversion(ScalarConversion):
    # ---- builtins -----------------------------------------------------------------------------

    def load_builtin(self, builtin: int, ty: int, alignment: int) -> int:
        var = self.mod.builtin(builtin, self.mod.type_pointer(StorageClass.Input, ty, alignment))
        self.interface[var] = None
        return self.block.op(Op.Load, ty, var, MemoryAccess.Aligned, alignment)

    def builtin(self, inst: Inst) -> None:
        """The i32 builtins are signed values of the tensor language, so subgroup_id.x/.y use
        signed remainder/division (SubgroupId is never negative, either would do)."""
        name = inst.name
        m = self.mod
        blk = self.block
        mode = inst.props.get("mode")
        if name in _BUILTIN_VEC:
            i64 = self.i64()
            vec = self.load_builtin(_BUILTIN_VEC[name], m.type_vector(i64, 3), 32)
            self.set(inst, blk.op(Op.CompositeExtract, i64, vec, int(mode)))
        elif name in _BUILTIN_I32:
            self.set(inst, self.load_builtin(_BUILTIN_I32[name], self.i32(), 4))
        elif name == "num_subgroups":
            values = (self.wgs[0] // self.sgs, self.wgs[1], 1)
            self.set(inst, m.constant(self.i32(), values[int(mode)]))
        elif name == "subgroup_id":
            i32 = self.i32()
            if int(mode) == 2:
                self.set(inst, m.constant(i32, 0))
                return
            sid = self.load_builtin(BuiltIn.SubgroupId, i32, 4)
            tiles = m.constant(i32, self.wgs[0] // self.sgs)
            self.set(inst, blk.op(Op.SRem if int(mode) == 0 else Op.SDiv, i32, sid, tiles))
        else:
            raise not_implemented(inst)

    # ---- barrier ------------------------------------------------------------------------------

    def barrier(self, inst: Inst) -> None:
        """OpControlBarrier Workgroup Workgroup with a sequentially consistent fence of the
        memory the fence flags name (docs/design.md §B6.7: 0, 528, 272 or 784)."""
        fence = AddressSpace(inst.props["fence_flags"])
        sem = 0
        if fence & AddressSpace.global_:
            sem |= MemorySemantics.CrossWorkgroupMemory
        if fence & AddressSpace.local:
            sem |= MemorySemantics.WorkgroupMemory
        if sem:
            sem |= MemorySemantics.SequentiallyConsistent
        i32 = self.i32()
        wg = self.mod.constant(i32, Scope.Workgroup)
        self.block.emit(Op.ControlBarrier, wg, wg, self.mod.constant(i32, sem))

    # ---- subgroup operations ------------------------------------------------------------------

    def subgroup_scope(self) -> int:
        return self.mod.constant(self.i32(), Scope.Subgroup)

    def subgroup_broadcast(self, inst: Inst) -> None:
        a = self.val(inst.operand("a"), inst)
        idx = self.val(inst.operand("idx"), inst)
        ty = self.ty(inst.results[0].type, inst)
        self.set(inst, self.block.op(Op.GroupBroadcast, ty, self.subgroup_scope(), a, idx))

    def subgroup_operation(self, inst: Inst) -> None:
        """subgroup_{reduce,inclusive_scan,exclusive_scan}_{add,max,min}."""
        self.group_operation(inst, "subgroup_", self.subgroup_scope())

    def group_operation(self, inst: Inst, prefix: str, scope: int) -> None:
        """<prefix>{reduce,inclusive_scan,exclusive_scan}_{add,max,min} over `scope` (a
        constant id: Subgroup, or Workgroup for the work-group collectives extension)."""
        kind, opn = inst.name.removeprefix(prefix).rsplit("_", 1)
        ty: NumberType = inst.results[0].type
        a = self.val(inst.operand("a"), inst)
        operation = _GROUP_OPERATION[kind]

        def group_op(opcode: int, t: int, x: int) -> int:
            return self.block.op(opcode, t, scope, operation, x)

        if ty.is_complex:
            comp = self.ty(ty.component_type)
            parts = [group_op(_FLOAT_GROUP[opn], comp, p) for p in self.parts(a, comp)]
            self.set(inst, self.make_complex(self.ty(ty), *parts))
        elif ty.kind is ScalarKind.f16 and prefix == "work_group_":
            # the CPU runtime's compiler crashes on half-precision work-group functions
            f32 = self.f32()
            r = group_op(_FLOAT_GROUP[opn], f32, self.block.op(Op.FConvert, f32, a))
            self.set(inst, self.block.op(Op.FConvert, self.ty(ty), r))
        elif ty.is_float:
            self.set(inst, self.via_f32(ty, lambda t, x: group_op(_FLOAT_GROUP[opn], t, x[0]), a))
        elif ty.size < 4:
            i32, t = self.i32(), self.ty(ty)
            wide = self.block.op(Op.SConvert, i32, a)
            r = group_op(_INT_GROUP[opn], i32, wide)
            if kind == "exclusive_scan" and opn != "add":
                # lane 0 gets the i32 identity; clamp it to the narrow type's identity
                bits = 8 * ty.size - 1
                limit = -(1 << bits) if opn == "max" else (1 << bits) - 1
                clamp = OpenCLStd.s_max if opn == "max" else OpenCLStd.s_min
                r = self.ext(i32, clamp, r, self.mod.constant(i32, limit & 0xFFFFFFFF))
            self.set(inst, self.block.op(Op.SConvert, t, r))
        else:
            self.set(inst, group_op(_INT_GROUP[opn], self.ty(ty), a))


HANDLERS: HandlerRows = (
    (BuiltinInst, False, "builtin"),
    (BarrierInst, False, "barrier"),
    (SubgroupBroadcastInst, False, "subgroup_broadcast"),
    (SubgroupOperationInst, False, "subgroup_operation"),
)
"""The instructions SpmdConversion converts: (instruction class, coopmatrix result only, method)."""
