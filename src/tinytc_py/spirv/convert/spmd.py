"""Builtins (backend.md §2.2, §6.6), barriers and subgroup operations."""

from __future__ import annotations

from ...ir.enums import AddressSpace
from ...ir.inst import Inst
from ..tables import BuiltIn, MemoryAccess, MemorySemantics, Op, Scope, StorageClass
from .base import ConverterBase, not_implemented

_BUILTIN_VEC = {"group_id": BuiltIn.WorkgroupId, "num_groups": BuiltIn.NumWorkgroups}
_BUILTIN_I32 = {
    "subgroup_size": BuiltIn.SubgroupSize,
    "subgroup_linear_id": BuiltIn.SubgroupId,
    "subgroup_local_id": BuiltIn.SubgroupLocalInvocationId,
}


class SpmdConversion(ConverterBase):
    # ---- builtins -----------------------------------------------------------------------------

    def load_builtin(self, builtin: int, ty: int, alignment: int) -> int:
        var = self.mod.builtin(builtin, self.mod.type_pointer(StorageClass.Input, ty, alignment))
        self.interface[var] = None
        return self.block.op(Op.Load, ty, var, MemoryAccess.Aligned, alignment)

    def builtin(self, inst: Inst) -> None:
        name = inst.name
        i32 = self.i32()
        m = self.mod
        blk = self.block
        mode = inst.props.get("mode")
        if name in _BUILTIN_VEC:
            vec = self.load_builtin(_BUILTIN_VEC[name], m.type_vector(self.i64(), 3), 32)
            self.set(inst, blk.op(Op.CompositeExtract, self.i64(), vec, int(mode)))
        elif name in _BUILTIN_I32:
            self.set(inst, self.load_builtin(_BUILTIN_I32[name], i32, 4))
        elif name == "num_subgroups":
            values = (self.wgs[0] // self.sgs, self.wgs[1], 1)
            self.set(inst, m.constant(i32, values[int(mode)]))
        elif name == "subgroup_id":
            if int(mode) == 2:
                self.set(inst, m.constant(i32, 0))
                return
            sid = self.load_builtin(BuiltIn.SubgroupId, i32, 4)
            tiles = m.constant(i32, self.wgs[0] // self.sgs)
            self.set(inst, blk.op(Op.UMod if int(mode) == 0 else Op.UDiv, i32, sid, tiles))
        else:
            raise not_implemented(inst)

    # ---- barrier ------------------------------------------------------------------------------

    def barrier(self, inst: Inst) -> None:
        """OpControlBarrier Workgroup Workgroup with a sequentially consistent fence of the
        memory the fence flags name (backend.md §6.7: 0, 528, 272 or 784)."""
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
