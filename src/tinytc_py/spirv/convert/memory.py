"""Memory conversion: address arithmetic, load/store, views (subview/expand/fuse), size and
local memory.

All allocas of a function share one module-level `OpVariable Workgroup` i8 array (its size is the
high-water mark of the offsets set-stack-ptr chose, its alignment the core info's default
alignment); an alloca is an access chain to its offset, bitcast to the element pointer.
lifetime_stop only matters to set-stack-ptr and emits nothing.
"""

from __future__ import annotations

from ...analysis.stack import alloca_alignment, alloca_size, stack_ptr
from ...errors import Status
from ...ir.inst import Inst
from ...ir.ops.memory import (
    AllocaInst,
    AssociatedInst,
    ElementStoreInst,
    ExpandInst,
    FuseInst,
    LifetimeStopInst,
    LoadInst,
    SizeInst,
    SubviewInst,
)
from ...ir.region import Region
from ...ir.types import DYNAMIC, as_memref
from ..tables import Decoration, MemoryAccess, Op, StorageClass
from .base import GroupDV, HandlerRows, MemrefDV
from .control import ControlFlowConversion


class MemoryConversion(ControlFlowConversion):
    # ---- memory -------------------------------------------------------------------------------

    def address(self, d: MemrefDV, indices: list[int]) -> int:
        if not indices:
            return d.ptr
        blk = self.block
        off = None
        for idx, st, static in zip(indices, d.stride, d.ty.stride):
            term = idx if static == 1 else blk.op2(Op.IMul, self.i64(), idx, st)
            off = term if off is None else blk.op2(Op.IAdd, self.i64(), off, term)
        return blk.op2(Op.InBoundsPtrAccessChain, self.memref_ptr_ty(d.ty), d.ptr, off)

    def load(self, inst: Inst) -> None:
        d = self.dv(inst.operand("operand"), inst)
        indices = [self.val(v, inst) for v in inst.operand_list("index_list")]
        if isinstance(d, GroupDV):
            self.set(inst, self.load_group(d, indices[0]))
            return
        ptr = self.address(d, indices)
        self.set(inst, self.block.op1(Op.Load, self.ty(d.ty.element), ptr))

    def load_group(self, g: GroupDV, idx: int) -> MemrefDV:
        """Member idx: base G[idx] + offset, dynamic shape/stride entries array[idx] (§B1.3)."""
        blk = self.block
        mt = g.ty.memref
        mptr = self.memref_ptr_ty(mt)
        slot = blk.op(Op.InBoundsPtrAccessChain, self.group_ptr_ty(g.ty), g.ptr, idx)
        base = blk.op(Op.Load, mptr, slot, MemoryAccess.Aligned, 8)
        if g.offset is not None:
            base = blk.op(Op.InBoundsPtrAccessChain, mptr, base, g.offset)

        def entry(arr: int | None, static: int) -> int:
            if arr is None:
                return self.c64(static)
            p = blk.op(Op.InBoundsPtrAccessChain, self.i64_array_ptr_ty(), arr, idx)
            return blk.op(Op.Load, self.i64(), p, MemoryAccess.Aligned, 8)

        shape = [entry(a, s) for a, s in zip(g.shape, mt.shape)]
        stride = [entry(a, s) for a, s in zip(g.stride, mt.stride)]
        return MemrefDV(mt, base, shape, stride)

    def store(self, inst: Inst) -> None:
        """store (the atomic forms derive from its class and have handlers of their own)."""
        d = self.dv(inst.operand("operand"), inst)
        val = self.val(inst.operand("val"), inst)
        indices = [self.val(v, inst) for v in inst.operand_list("index_list")]
        self.block.emit(Op.Store, self.address(d, indices), val)

    def size(self, inst: Inst) -> None:
        d = self.dv(inst.operand("operand"), inst)
        if isinstance(d, GroupDV):
            self.set(inst, d.size)
        else:
            self.set(inst, d.shape[inst.props["mode"]])

    def result_dv(self, inst: Inst, ptr: int, shape: list[int], stride: list[int]) -> MemrefDV:
        """Prefer the result type's static entries (constants) over computed ids."""
        rt = as_memref(inst.results[0].type)
        shape = [s if e == DYNAMIC else self.c64(e) for s, e in zip(shape, rt.shape)]
        stride = [s if e == DYNAMIC else self.c64(e) for s, e in zip(stride, rt.stride)]
        return MemrefDV(rt, ptr, shape, stride)

    def subview(self, inst: Inst) -> None:
        """The offset is the sum of offset_k * stride_k over all modes, starting from 0, in the
        instructions upstream emits (its lit test spv/subview checks them); the device JIT folds
        the constant and unit factors and the zero terms."""
        d = self.dv(inst.operand("operand"), inst)
        # the dynamic entries in reverse, taken with pop(): a compiled generator's next() and a
        # zip(..., strict=False) are generic calls, plain zip and lists are native code
        dyn_offs = [self.val(v, inst) for v in reversed(inst.operand_list("offsets"))]
        dyn_sizes = [self.val(v, inst) for v in reversed(inst.operand_list("sizes"))]
        blk, i64 = self.block, self.i64()
        off = self.mod.constant_null(i64)
        shape, stride = [], []
        for k, (o, s) in enumerate(zip(inst.props["static_offsets"], inst.props["static_sizes"])):
            oid = dyn_offs.pop() if o == DYNAMIC else self.c64(o)
            off = blk.op2(Op.IAdd, i64, off, blk.op2(Op.IMul, i64, oid, d.stride[k]))
            if s == 0:
                continue
            shape.append(dyn_sizes.pop() if s == DYNAMIC else self.c64(s))
            stride.append(d.stride[k])
        ptr = blk.op2(Op.InBoundsPtrAccessChain, self.memref_ptr_ty(d.ty), d.ptr, off)
        self.set(inst, self.result_dv(inst, ptr, shape, stride))

    def expand(self, inst: Inst) -> None:
        d = self.dv(inst.operand("operand"), inst)
        mode = inst.props["expanded_mode"]
        dyn = iter(self.val(v, inst) for v in inst.operand_list("expand_shape"))
        sub_shape = [
            next(dyn) if s == DYNAMIC else self.c64(s) for s in inst.props["static_expand_shape"]
        ]
        sub_stride = [d.stride[mode]]
        for s in sub_shape[:-1]:
            sub_stride.append(self.block.op2(Op.IMul, self.i64(), sub_stride[-1], s))
        shape = d.shape[:mode] + sub_shape + d.shape[mode + 1 :]
        stride = d.stride[:mode] + sub_stride + d.stride[mode + 1 :]
        self.set(inst, MemrefDV(inst.results[0].type, d.ptr, shape, stride))

    def fuse(self, inst: Inst) -> None:
        d = self.dv(inst.operand("operand"), inst)
        frm, to = inst.props["from"], inst.props["to"]
        size = d.shape[frm]
        for s in d.shape[frm + 1 : to + 1]:
            size = self.block.op2(Op.IMul, self.i64(), size, s)
        shape = d.shape[:frm] + [size] + d.shape[to + 1 :]
        stride = d.stride[: frm + 1] + d.stride[to + 1 :]
        self.set(inst, self.result_dv(inst, d.ptr, shape, stride))

    def associated(self, inst: Inst) -> None:
        d = self.dv(inst.operand("operand"), inst)
        pty = self.memref_ptr_ty(d.ty) if isinstance(d, MemrefDV) else self.group_ptr_ty(d.ty)
        null = self.mod.constant_null(pty)
        self.set(inst, self.block.op(Op.PtrNotEqual, self.mod.type_bool(), d.ptr, null))

    # ---- local memory -------------------------------------------------------------------------

    def alloca(self, inst: Inst) -> None:
        mt = as_memref(inst.result.type)
        offset = stack_ptr(inst)
        if offset is None:
            raise inst.error(
                Status.internal_compiler_error,
                "alloca has no stack_ptr (set-stack-ptr did not run)",
            )
        align = alloca_alignment(inst)
        base_align = self.core_info.default_alignment
        if align > base_align:
            raise inst.error(
                Status.ir_insufficient_alignment,
                f"alloca alignment {align} exceeds the local memory's base alignment {base_align}",
            )
        if offset % align:
            raise inst.error(
                Status.ir_insufficient_alignment,
                f"alloca offset {offset} in local memory is not a multiple of its alignment {align}",
            )
        m = self.mod
        byte_ptr = self.block.op(
            Op.InBoundsAccessChain,
            m.type_pointer(StorageClass.Workgroup, m.type_int(8), 1),
            self.stack,
            self.c64(offset),
        )
        ptr = self.block.op(Op.Bitcast, self.memref_ptr_ty(mt), byte_ptr)
        shape = [self.c64(s) for s in mt.shape]
        stride = [self.c64(s) for s in mt.stride]
        self.set(inst, MemrefDV(mt, ptr, shape, stride))

    def declare_stack(self) -> None:
        """The function's local-memory array variable, when it has allocas: declared before its
        body is converted, so its types come first (upstream's lit tests expect that order)."""
        size = _stack_size(self.func.body)
        if not size:
            return
        m = self.mod
        array = m.type_array(m.type_int(8), size)
        var = m.variable(m.type_pointer(StorageClass.Workgroup, array), StorageClass.Workgroup)
        m.decorate(var, Decoration.Alignment, self.core_info.default_alignment)
        self.interface[var] = None
        self.stack = var

    def lifetime_stop(self, inst: Inst) -> None:
        """Only set-stack-ptr needs it."""


def _stack_size(region: Region) -> int:
    """The end of the highest alloca in `region` and its subregions (0: none): a recursive
    walk, which the compiled module runs without a generator per level."""
    size = 0
    for inst in region.insts:
        if isinstance(inst, AllocaInst):
            size = max(size, (stack_ptr(inst) or 0) + alloca_size(inst))
        for sub in inst.regions:
            size = max(size, _stack_size(sub))
    return size


HANDLERS: HandlerRows = (
    (LoadInst, False, "load"),
    (ElementStoreInst, False, "store"),
    (SizeInst, False, "size"),
    (SubviewInst, False, "subview"),
    (ExpandInst, False, "expand"),
    (FuseInst, False, "fuse"),
    (AssociatedInst, False, "associated"),
    (AllocaInst, False, "alloca"),
    (LifetimeStopInst, False, "lifetime_stop"),
)
"""The instructions MemoryConversion converts: (instruction class, coopmatrix result only, method)."""
