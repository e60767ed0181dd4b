"""Portable replacements of SPV_INTEL_subgroups block reads and writes of 8-, 16- and 64-bit data.

The CPU OpenCL runtime implements these instructions but its JIT mis-compiles a kernel whose
only dependence on the lane is such a block IO: lanes 1..S-1 neither read nor write (see
spirv/convert/coopmatrix_memory.py). The GPU code paths use them freely, so the emulator calls
a function instead that does what the extension specifies: component v of lane p of a block
read of n components from pointer P is P[v*S + p], and a block write stores it there.
32-bit block IO runs natively and is kept.
"""

from __future__ import annotations

from ..spirv.module import Module
from ..spirv.tables import FunctionControl, MemoryAccess, Op, StorageClass


def block_io_function(
    mod: Module,
    write: bool,
    ptr_ty: int,
    data_ty: int,
    comp_ty: int,
    n: int,
    size: int,
    sgs: int,
    lane_var: int,
) -> int:
    """A function (ptr) -> data (read) or (ptr, data) -> void (write) for subgroup size sgs."""
    void, i32, i64 = mod.type_void(), mod.type_int(32), mod.type_int(64)
    ret = void if write else data_ty
    params = [ptr_ty, data_ty] if write else [ptr_ty]
    fn = mod.add_function(ret, mod.type_function(ret, params), control=FunctionControl.Inline)
    ptr = fn.add_parameter(ptr_ty)
    data = fn.add_parameter(data_ty) if write else 0
    blk = fn.add_block()
    elem_ptr = mod.type_pointer(StorageClass.CrossWorkgroup, comp_ty)
    base = blk.op(Op.Bitcast, elem_ptr, ptr)
    lane = blk.op(Op.UConvert, i64, blk.op(Op.Load, i32, lane_var))
    values = []
    for v in range(n):
        index = blk.op(Op.IAdd, i64, lane, mod.constant(i64, v * sgs))
        p = blk.op(Op.InBoundsPtrAccessChain, elem_ptr, base, index)
        if write:
            comp = data if n == 1 else blk.op(Op.CompositeExtract, comp_ty, data, v)
            blk.emit(Op.Store, p, comp, MemoryAccess.Aligned, size)
        else:
            values.append(blk.op(Op.Load, comp_ty, p, MemoryAccess.Aligned, size))
    if write:
        blk.emit(Op.Return)
    else:
        result = values[0] if n == 1 else blk.op(Op.CompositeConstruct, data_ty, *values)
        blk.emit(Op.ReturnValue, result)
    return fn.id
