"""Atomic memory instructions (docs/design.md §B6.8).

Scope and semantics are passed through as i32 constants (the tensor language's enum values are
SPIR-V's). Integers use OpAtomicIAdd/SMax/SMin, floats the OpAtomicF*EXT instructions of
SPV_EXT_shader_atomic_float_add / _float16_add / _float_min_max, each checked
against the core info's feature for the pointer's address space. A complex atomic is two
independent float atomics on the real and imaginary parts (the complex update as a whole is not
atomic). i8, i16 and bf16 have no SPIR-V atomics: spirv_unsupported_atomic_data_type.
"""

from __future__ import annotations

from ...errors import Status
from ...ir.enums import AddressSpace
from ...ir.inst import Inst
from ...ir.ops.memory import AtomicLoadInst, AtomicStoreInst, AtomicUpdateInst
from ...ir.types import NumberType, ScalarKind
from ...target.core_info import SpirvFeature
from ..tables import Capability, LoopControl, Op, StorageClass
from .base import HandlerRows, MemrefDV
from .extensions import ExtensionConversion

INT_UPDATE = {"add": Op.AtomicIAdd, "max": Op.AtomicSMax, "min": Op.AtomicSMin}
"""The opcode of an atomic update of integers, by its kind (atomic_<kind>, and the
cooperative-matrix atomics' cooperative_matrix_atomic_<kind>)."""
FLOAT_UPDATE = {"add": Op.AtomicFAddEXT, "max": Op.AtomicFMaxEXT, "min": Op.AtomicFMinEXT}
"""The same for floating-point (and complex, per component) numbers."""
_NO_ATOMICS = (ScalarKind.i8, ScalarKind.i16, ScalarKind.bf16)


def float_update_requirement(name: str, bits: int, local: bool):
    """(core feature, capability, extension) of a float atomic add/min/max."""
    kind = "add" if name == "atomic_add" else "min_max"
    feature = SpirvFeature[f"atomic_float{bits}_{kind}_{'local' if local else 'global'}"]
    if kind == "add":
        capability = getattr(Capability, f"AtomicFloat{bits}AddEXT")
        ext = (
            "SPV_EXT_shader_atomic_float16_add" if bits == 16 else "SPV_EXT_shader_atomic_float_add"
        )
    else:  # one extension covers 16, 32 and 64 bits (spirv-val's grammar says so)
        capability = getattr(Capability, f"AtomicFloat{bits}MinMaxEXT")
        ext = "SPV_EXT_shader_atomic_float_min_max"
    return feature, capability, ext


class AtomicConversion(ExtensionConversion):
    def atomic_operands(self, inst: Inst, elem: NumberType) -> tuple[int, int]:
        """(scope id, semantics id) of an atomic instruction on `elem` values, after checking
        that SPIR-V has atomics for the type and the target the features they need."""
        if elem.kind in _NO_ATOMICS:
            raise inst.error(
                Status.spirv_unsupported_atomic_data_type,
                f"'{inst.name}' on {elem} has no SPIR-V atomic instruction",
            )
        if elem.kind in (ScalarKind.i64, ScalarKind.index):
            self.require(inst, SpirvFeature.int64_atomics, Capability.Int64Atomics)
        i32 = self.i32()
        scope = self.mod.constant(i32, int(inst.props["scope"]))
        sem = self.mod.constant(i32, int(inst.props["semantics"]))
        return scope, sem

    def atomic_target(self, inst: Inst) -> tuple[MemrefDV, NumberType, int, int, int]:
        """(dope vector, element type, pointer, scope id, semantics id) of an atomic access."""
        d = self.dv(inst.operand("operand"), inst)
        elem = d.ty.element
        scope, sem = self.atomic_operands(inst, elem)
        indices = [self.val(v, inst) for v in inst.operand_list("index_list")]
        return d, elem, self.address(d, indices), scope, sem

    def component_pointers(self, d: MemrefDV, ptr: int) -> tuple[int, int, int]:
        """(component type, pointer to re, pointer to im) of a complex element pointer."""
        comp_ty = d.ty.element.component_type
        comp = self.ty(comp_ty)
        sc = self.storage_class(d)
        cptr = self.mod.type_pointer(sc, comp, comp_ty.size)
        i32 = self.i32()
        blk = self.block
        re = blk.op(Op.InBoundsAccessChain, cptr, ptr, self.mod.constant(i32, 0))
        im = blk.op(Op.InBoundsAccessChain, cptr, ptr, self.mod.constant(i32, 1))
        return comp, re, im

    @staticmethod
    def storage_class(d: MemrefDV) -> int:
        local = d.ty.addrspace is AddressSpace.local
        return StorageClass.Workgroup if local else StorageClass.CrossWorkgroup

    def moves_bits(self, ty: NumberType) -> bool:
        """Whether an atomic load/store of `ty` moves its bits as an integer of the same size:
        the same operation, needed for doubles everywhere but on Intel GPUs (the Intel CPU
        runtime lacks atomic_xchg on doubles); floats are moved as floats otherwise."""
        return ty.is_float and ty.size == 8 and not self.core_info.ip_version

    def as_bits(self, d: MemrefDV, ptr: int, ty: NumberType) -> tuple[int, int]:
        """(integer type, pointer bitcast to it) for an atomic move of a float's bits."""
        ity = self.mod.type_int(8 * ty.size)
        ipty = self.mod.type_pointer(self.storage_class(d), ity, ty.size)
        return ity, self.block.op(Op.Bitcast, ipty, ptr)

    def load_atomically(self, d: MemrefDV, ty: NumberType, ptr: int, scope: int, sem: int) -> int:
        blk = self.block
        if ty.kind is ScalarKind.f16:
            return self.load_half(d, ptr, scope, sem)
        if not self.moves_bits(ty):
            return blk.op(Op.AtomicLoad, self.ty(ty), ptr, scope, sem)
        ity, iptr = self.as_bits(d, ptr, ty)
        return blk.op(Op.Bitcast, self.ty(ty), blk.op(Op.AtomicLoad, ity, iptr, scope, sem))

    def store_atomically(self, d: MemrefDV, ty: NumberType, ptr: int, scope, sem, val) -> None:
        blk = self.block
        if ty.kind is ScalarKind.f16:
            self.store_half(d, ptr, scope, sem, val)
            return
        if not self.moves_bits(ty):
            blk.emit(Op.AtomicStore, ptr, scope, sem, val)
            return
        ity, iptr = self.as_bits(d, ptr, ty)
        blk.emit(Op.AtomicStore, iptr, scope, sem, blk.op(Op.Bitcast, ity, val))

    def require_moves(self, inst: Inst, elem: NumberType) -> None:
        """64-bit float atomic loads/stores need 64-bit atomics (OpenCL's atomic_double does)."""
        if elem.is_float and elem.size == 8 or elem.kind is ScalarKind.c64:
            self.require(inst, SpirvFeature.int64_atomics, Capability.Int64Atomics)

    def atomic_load(self, inst: Inst) -> None:
        d, elem, ptr, scope, sem = self.atomic_target(inst)
        self.require_moves(inst, elem)
        if elem.is_complex:
            comp_ty = elem.component_type
            _, re, im = self.component_pointers(d, ptr)
            r = self.load_atomically(d, comp_ty, re, scope, sem)
            i = self.load_atomically(d, comp_ty, im, scope, sem)
            self.set(inst, self.make_complex(self.ty(elem), r, i))
            return
        self.set(inst, self.load_atomically(d, elem, ptr, scope, sem))

    def atomic_store(self, inst: Inst) -> None:
        d, elem, ptr, scope, sem = self.atomic_target(inst)
        self.require_moves(inst, elem)
        val = self.val(inst.operand("val"), inst)
        if elem.is_complex:
            comp_ty = elem.component_type
            comp, re, im = self.component_pointers(d, ptr)
            vr, vi = self.parts(val, comp)
            self.store_atomically(d, comp_ty, re, scope, sem, vr)
            self.store_atomically(d, comp_ty, im, scope, sem, vi)
            return
        self.store_atomically(d, elem, ptr, scope, sem, val)

    def atomic_update(self, inst: Inst) -> None:
        """atomic_add / atomic_max / atomic_min; the result is the value before the update."""
        d, elem, ptr, scope, sem = self.atomic_target(inst)
        val = self.val(inst.operand("val"), inst)
        name = inst.name
        kind = name.removeprefix("atomic_")
        blk = self.block
        if elem.is_integer:
            self.set(inst, blk.op(INT_UPDATE[kind], self.ty(elem), ptr, scope, sem, val))
            return
        local = d.ty.addrspace is AddressSpace.local
        bits = 8 * (elem.component_type.size if elem.is_complex else elem.size)
        self.require(inst, *float_update_requirement(name, bits, local))
        op = FLOAT_UPDATE[kind]
        if elem.is_complex:  # only add is defined on complex numbers
            comp, re, im = self.component_pointers(d, ptr)
            vr, vi = self.parts(val, comp)
            r = blk.op(op, comp, re, scope, sem, vr)
            i = blk.op(op, comp, im, scope, sem, vi)
            self.set(inst, self.make_complex(self.ty(elem), r, i))
            return
        self.set(inst, blk.op(op, self.ty(elem), ptr, scope, sem, val))

    # ---- f16 loads and stores through the containing 32-bit word ------------------------------
    # OpenCL has no 16-bit atomic load/store (the CPU runtime fails to link them), so, as LLVM
    # expands sub-word atomics, they act on the aligned 32-bit word holding the half: a load
    # extracts it, a store replaces it with a compare-exchange loop.

    def half_word(self, d: MemrefDV, ptr: int) -> tuple[int, int]:
        """(pointer to the aligned i32 word containing *ptr, bit shift of the half in it)."""
        blk, m = self.block, self.mod
        i64, i32 = self.i64(), self.i32()
        sc = self.storage_class(d)
        addr = blk.op(Op.ConvertPtrToU, i64, ptr)
        odd = blk.op(
            Op.BitwiseAnd, i64, blk.op(Op.ShiftRightLogical, i64, addr, self.c64(1)), self.c64(1)
        )
        hptr = blk.op(Op.Bitcast, m.type_pointer(sc, m.type_int(16), 2), ptr)
        first = blk.op(
            Op.PtrAccessChain,
            m.type_pointer(sc, m.type_int(16), 2),
            hptr,
            blk.op(Op.SNegate, i64, odd),
        )
        wptr = blk.op(Op.Bitcast, m.type_pointer(sc, i32, 4), first)
        shift = blk.op(Op.IMul, i32, blk.op(Op.UConvert, i32, odd), m.constant(i32, 16))
        return wptr, shift

    def load_half(self, d: MemrefDV, ptr: int, scope: int, sem: int) -> int:
        blk, m = self.block, self.mod
        i32 = self.i32()
        wptr, shift = self.half_word(d, ptr)
        word = blk.op(Op.AtomicLoad, i32, wptr, scope, sem)
        bits = blk.op(Op.UConvert, m.type_int(16), blk.op(Op.ShiftRightLogical, i32, word, shift))
        return blk.op(Op.Bitcast, m.type_float(16), bits)

    def store_half(self, d: MemrefDV, ptr: int, scope: int, sem: int, val: int) -> None:
        m = self.mod
        i32 = self.i32()
        wptr, shift = self.half_word(d, ptr)
        blk = self.block
        bits = blk.op(Op.UConvert, i32, blk.op(Op.Bitcast, m.type_int(16), val))
        part = blk.op(Op.ShiftLeftLogical, i32, bits, shift)
        keep = blk.op(Op.Not, i32, blk.op(Op.ShiftLeftLogical, i32, m.constant(i32, 0xFFFF), shift))
        relaxed = m.constant(i32, 0)
        first = blk.op(Op.AtomicLoad, i32, wptr, scope, relaxed)
        pre = blk.label
        header_l, body_l, cont_l, merge_l = (m.new_id() for _ in range(4))
        blk.emit(Op.Branch, header_l)
        header = self.fn.add_block(header_l)
        old, prev = m.new_id(), m.new_id()
        header.op(Op.Phi, i32, first, pre, prev, cont_l, result_id=old)
        header.emit(Op.LoopMerge, merge_l, cont_l, LoopControl.None_)
        header.emit(Op.Branch, body_l)
        body = self.fn.add_block(body_l)
        new = body.op(Op.BitwiseOr, i32, body.op(Op.BitwiseAnd, i32, old, keep), part)
        body.op(Op.AtomicCompareExchange, i32, wptr, scope, sem, relaxed, new, old, result_id=prev)
        body.emit(Op.Branch, cont_l)
        cont = self.fn.add_block(cont_l)
        done = cont.op(Op.IEqual, m.type_bool(), prev, old)
        cont.emit(Op.BranchConditional, done, merge_l, header_l)
        self.block = self.fn.add_block(merge_l)


HANDLERS: HandlerRows = (
    (AtomicLoadInst, False, "atomic_load"),
    (AtomicStoreInst, False, "atomic_store"),
    (AtomicUpdateInst, False, "atomic_update"),
)
"""The instructions AtomicConversion converts: (instruction class, coopmatrix result only, method)."""
