"""SPIR-V of the language extensions (docs/extensions.md lists the mapping of each).

- subgroup_shuffle{,_xor,_up,_down}: OpGroupNonUniformShuffle{,Xor,Up,Down} with Subgroup scope
  (capabilities GroupNonUniformShuffle / ...Relative, declared by capex); complex numbers part
  by part (the CPU runtime has no 2-vector shuffle_up/down).
- work_group_{reduce,inclusive_scan,exclusive_scan}_{add,max,min}: the subgroup operations'
  Groups instructions with Workgroup scope; work_group_broadcast: OpGroupIAdd Reduce of the
  value's bits, zero on all work-items but the chosen one. OpenCL's work-group functions take
  32/64-bit integers and floats only, so narrow integers go through i32, bf16 and f16 through
  f32 and complex numbers part by part.
- printf: the OpenCL.std printf extended instruction; the format is a UniformConstant i8 array,
  floating arguments are passed as f64 and narrow integers as i32 (C's default promotions).
- select: OpSelect (per component for a coopmatrix); bitcast: OpBitcast (nothing when the
  SPIR-V types agree, e.g. bf16 to i16); pow / fma: OpenCL.std pow / fma (bf16 in f32).
- global_ref: one CrossWorkgroup variable per global, decorated Constant, with an
  OpConstantComposite initializer; the memref's base pointer is its address cast to a pointer
  to the element type.
"""

from __future__ import annotations

from ...ir.global_data import lookup
from ...ir.inst import Inst
from ...ir.ops.extensions import (
    BitcastInst,
    GlobalRefInst,
    MathNaryInst,
    PrintfInst,
    SelectInst,
    ShuffleInst,
    WorkGroupBroadcastInst,
    WorkGroupOperationInst,
)
from ...ir.printf_format import decode
from ...ir.types import CoopmatrixType, MemrefType, NumberType, ScalarKind
from ..tables import BuiltIn, Decoration, GroupOperation, Op, OpenCLStd, Scope, StorageClass
from .base import HandlerRows, MemrefDV
from .spmd import SpmdConversion

_SHUFFLE = {
    "subgroup_shuffle": Op.GroupNonUniformShuffle,
    "subgroup_shuffle_xor": Op.GroupNonUniformShuffleXor,
    "subgroup_shuffle_up": Op.GroupNonUniformShuffleUp,
    "subgroup_shuffle_down": Op.GroupNonUniformShuffleDown,
}
_NARY_MATH = {"pow": OpenCLStd.pow, "fma": OpenCLStd.fma}


class ExtensionConversion(SpmdConversion):
    # ---- shuffles and work-group collectives --------------------------------------------------

    def subgroup_shuffle(self, inst: Inst) -> None:
        ty: NumberType = inst.results[0].type
        a = self.val(inst.operand("a"), inst)
        lane = self.val(inst.operands[1], inst)
        opcode, scope = _SHUFFLE[inst.name], self.subgroup_scope()

        def shuffle(t: int, x: int) -> int:
            return self.block.op(opcode, t, scope, x, lane)

        if ty.is_complex:
            comp = self.ty(ty.component_type)
            parts = [shuffle(comp, p) for p in self.parts(a, comp)]
            self.set(inst, self.make_complex(self.ty(ty), *parts))
        else:
            self.set(inst, shuffle(self.ty(ty), a))

    def workgroup_scope(self) -> int:
        return self.mod.constant(self.i32(), Scope.Workgroup)

    def work_group_operation(self, inst: Inst) -> None:
        self.group_operation(inst, "work_group_", self.workgroup_scope())

    def work_group_broadcast(self, inst: Inst) -> None:
        """A work-group reduce_add of the value's bits, masked to zero on every work-item but
        the chosen one: exact for every type (signed zeros and NaN payloads included), and it
        avoids OpGroupBroadcast, which the CPU runtime gets wrong for two-dimensional
        work-groups of subgroup size 32."""
        ty: NumberType = inst.results[0].type
        a = self.val(inst.operand("a"), inst)
        blk, i32 = self.block, self.i32()
        sid = self.load_builtin(BuiltIn.SubgroupId, i32, 4)
        lane = self.load_builtin(BuiltIn.SubgroupLocalInvocationId, i32, 4)
        me = blk.op(Op.IAdd, i32, blk.op(Op.IMul, i32, sid, self.mod.constant(i32, self.sgs)), lane)
        chosen = blk.op(Op.IEqual, self.mod.type_bool(), me, self.val(inst.operand("id"), inst))
        scope = self.workgroup_scope()

        def bcast(t: int, x: int, size: int) -> int:
            """Broadcast of the scalar x of SPIR-V type t and `size` bytes."""
            bits_ty = self.mod.type_int(max(8 * size, 32))
            bits = x if t == bits_ty else blk.op(Op.Bitcast, self.mod.type_int(8 * size), x)
            if size < 4:
                bits = blk.op(Op.UConvert, bits_ty, bits)
            masked = blk.op(Op.Select, bits_ty, chosen, bits, self.mod.constant(bits_ty, 0))
            r = blk.op(Op.GroupIAdd, bits_ty, scope, GroupOperation.Reduce, masked)
            if size < 4:
                r = blk.op(Op.UConvert, self.mod.type_int(8 * size), r)
            return r if self.mod.type_int(8 * size) == t else blk.op(Op.Bitcast, t, r)

        if ty.is_complex:
            comp = ty.component_type
            ct = self.ty(comp)
            parts = [bcast(ct, p, comp.size) for p in self.parts(a, ct)]
            self.set(inst, self.make_complex(self.ty(ty), *parts))
        else:
            self.set(inst, bcast(self.ty(ty), a, ty.size))

    # ---- printf -------------------------------------------------------------------------------

    def printf(self, inst: Inst) -> None:
        m = self.mod
        i8 = m.type_int(8)
        data = decode(inst.props["format"]).encode() + b"\0"
        array = m.type_array(i8, len(data))
        init = m.constant_composite(array, [m.constant(i8, b) for b in data])
        var = m.variable(
            m.type_pointer(StorageClass.UniformConstant, array), StorageClass.UniformConstant, init
        )
        m.decorate(var, Decoration.Constant)
        self.interface[var] = None
        fmt = self.block.op(Op.Bitcast, m.type_pointer(StorageClass.UniformConstant, i8), var)
        args = [self.printf_arg(v, inst) for v in inst.operand_list("args")]
        self.block.ext_inst(self.i32(), self.ocl, OpenCLStd.printf, fmt, *args)

    def printf_arg(self, v, inst: Inst) -> int:
        ty: NumberType = v.type
        x = self.val(v, inst)
        blk = self.block
        if ty.is_float:
            if ty.kind is ScalarKind.bf16:
                x = self.bf16_to_f32(x)
            return blk.op(Op.FConvert, self.mod.type_float(64), x) if ty.size < 8 else x
        if ty.size < 4:
            return blk.op(Op.SConvert, self.i32(), x)
        return x

    # ---- select, bitcast, math ----------------------------------------------------------------

    def select(self, inst: Inst) -> None:
        cond = self.val(inst.operand("cond"), inst)
        ty = inst.results[0].type
        if isinstance(ty, CoopmatrixType):
            comp = self.ty(ty.component)
            a, b = self.cm(inst.operand("a"), inst), self.cm(inst.operand("b"), inst)
            self.set(inst, [self.block.op(Op.Select, comp, cond, x, y) for x, y in zip(a, b)])
            return
        a, b = self.val(inst.operand("a"), inst), self.val(inst.operand("b"), inst)
        self.set(inst, self.block.op(Op.Select, self.ty(ty), cond, a, b))

    def bitcast(self, inst: Inst) -> None:
        src, dst = inst.operand("a").type, inst.results[0].type
        if isinstance(dst, CoopmatrixType):
            s, d = self.ty(src.component), self.ty(dst.component)
            xs = self.cm(inst.operand("a"), inst)
            self.set(inst, xs if s == d else [self.block.op(Op.Bitcast, d, x) for x in xs])
            return
        x = self.val(inst.operand("a"), inst)
        s, d = self.ty(src), self.ty(dst)
        self.set(inst, x if s == d else self.block.op(Op.Bitcast, d, x))

    def math_nary(self, inst: Inst) -> None:
        ty: NumberType = inst.results[0].type
        args = [self.val(v, inst) for v in inst.operands]
        number = _NARY_MATH[inst.name]
        self.set(inst, self.via_f32(ty, lambda t, xs: self.ext(t, number, *xs), *args))

    # ---- program-level constant data ----------------------------------------------------------

    def global_ref(self, inst: Inst) -> None:
        mt: MemrefType = inst.results[0].type
        data = lookup(self.prog, inst.props["symbol"], mt, inst.loc)
        var = self.global_vars.get(data.name)
        if var is None:
            var = self.global_vars[data.name] = self.global_variable(data.type, data.values)
        self.interface[var] = None
        ptr = self.block.op(Op.Bitcast, self.memref_ptr_ty(mt), var)
        shape = [self.c64(s) for s in mt.shape]
        stride = [self.c64(s) for s in mt.stride]
        self.values[inst.results[0]] = MemrefDV(mt, ptr, shape, stride)

    def global_variable(self, mt: MemrefType, values: tuple) -> int:
        m = self.mod
        el = self.ty(mt.element)
        array = m.type_array(el, len(values))
        init = m.constant_composite(array, [self.const(mt.element, v) for v in values])
        var = m.variable(
            m.type_pointer(StorageClass.CrossWorkgroup, array), StorageClass.CrossWorkgroup, init
        )
        m.decorate(var, Decoration.Constant)
        m.decorate(var, Decoration.Alignment, max(mt.element.size, 4))
        return var


HANDLERS: HandlerRows = (
    (ShuffleInst, False, "subgroup_shuffle"),
    (WorkGroupOperationInst, False, "work_group_operation"),
    (WorkGroupBroadcastInst, False, "work_group_broadcast"),
    (PrintfInst, False, "printf"),
    (SelectInst, False, "select"),
    (BitcastInst, False, "bitcast"),
    (MathNaryInst, False, "math_nary"),
    (GlobalRefInst, False, "global_ref"),
)
"""The instructions ExtensionConversion converts: (instruction class, coopmatrix result only, method)."""
