"""Cooperative matrix memory access: load, store and the element-wise atomics (docs/design.md §B3.3,
§B3.4, §B6.8).

Generic (SIMT) path: a "matrix walker" gives each lane its row `pos0 + p % I` and column
`pos1 + p / I` (after `.t` swapped position, shape and stride, so the transpose is only
addressing). Row block b adds b*I rows, lane column u adds u*(S/I) columns; every element is one
scalar OpLoad / OpStore (or atomic) at `ptr + row*stride0 + col*stride1`. Guards:
- rows_checked / both: each row block runs under `if (row < shape0)` (unsigned compare, so a
  negative row fails as well); a skipped block loads zeros.
- cols_checked / both: each element runs under `if (col < shape1)`.
- padding (M < S, lane columns that reach col >= N): each element runs under `col - pos1 < N`.
  Unlike upstream (docs/design.md §B10 item 4) the mask tests the matrix's N, so a store never
  writes the padding columns into a wider memref.
All offsets and conditions are computed before the first branch, so every id dominates its uses.

Block path (SPV_INTEL_subgroups; core-info feature subgroup_buffer_block_io): when rows >= S,
no transpose, no row check, stride0 == 1, global memory, T != c64 and the alignment is provable
(element size >= R, or base alignment, gcd(pos0)*size and gcd(stride1)*size all multiples of R;
R = 4 for reads and 16 for writes), each column is moved by OpSubgroupBlockRead/WriteINTEL:
lane p gets element i*S + p of a vector of up to 8 (i8: 16) row blocks, bitcast from the IO
integer type (f16/bf16 i16, f32 i32, f64/c32 i64). A memref exactly as tall as the matrix
(static stride (1, M), shape0 = M) also moves several columns per IO. Alignment facts come
from the IR through analysis/gcd.py (the facts dump-gcd prints).

Platform restriction: on cores that are not Intel GPUs (ip_version 0, e.g. the CPU OpenCL
runtime) only 32-bit elements (i32, f32) use block IO. The CPU runtime's JIT does not vectorize a
kernel whose only lane dependence is an 8/16/64-bit block read or write, and the scalar fallback
then moves one element per subgroup (observed: lanes 1..S-1 neither read nor written). On a SIMD
CPU core (core info `vector_register_size`) every block IO moves one register (one row block of
one column): the JIT shuffles a vector block read lane by lane into registers (measured: a
16x8 f32 matrix_a load costs ~10% of a batched 16^3 GEMM), while a one-register read is a
plain vector load.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ...analysis.coopmatrix_layout import CoopLayout
from ...analysis.gcd import memref_gcd, value_gcd
from ...analysis.memory import root
from ...analysis.nontemporal import nontemporal_alignment
from ...ir.attrs import NONTEMPORAL, BooleanAttr
from ...ir.enums import AddressSpace, CheckedFlag, Transpose
from ...ir.inst import Inst
from ...ir.ops.coopmatrix import CoopLoadInst, CoopMulAddInst, CoopPrefetchInst, CoopStoreInst
from ...ir.types import DYNAMIC, CoopmatrixType, NumberType, ScalarKind, as_coopmatrix
from ...ir.values import Value
from ...target.core_info import CoreInfo, SpirvFeature
from ..tables import (
    BuiltIn,
    Capability,
    Decoration,
    MemoryAccess,
    Op,
    OpenCLStd,
    SelectionControl,
    StorageClass,
)
from .atomics import FLOAT_UPDATE, INT_UPDATE, AtomicConversion, float_update_requirement
from .base import HandlerRows, MemrefDV

CACHE_LINE = 64  # bytes, of the x86 cores of the CPU prefetch
# Rounds (one cache line per lane each) one CPU prefetch may emit: the rounds are straight-line
# code and a prefetch is a hint, so a larger block (1024x1024 f32 would be 4096 rounds, a
# megabyte of SPIR-V) is not prefetched at all. 64 rounds of 16 lanes are 64 KiB, more than the
# L1 cache the block is fetched into, and cover the gemm's next-entry prefetch (its A share is
# at most all of an A that fits in L1: 32 rounds on a 32 KiB L1); docs/design.md §B3.3.
MAX_PREFETCH_ROUNDS = 64
CPU_ASM_TARGET = "x86_64-unknown-unknown"


class Walk:
    """Per-instruction addressing of the generic path: ids of the element offset of row block b
    (`rowoff`), of lane column u relative to it (`coloff`, None for 0), and the guards. (A plain
    class: a dataclass's generated __init__ runs interpreted, see base.MemrefDV.)"""

    def __init__(
        self,
        lay: CoopLayout,
        d: MemrefDV,
        rowoff: list[int],
        coloff: list[int | None],
        row_ok: list[int | None],
        col_ok: list[int | None],
    ) -> None:
        self.lay = lay
        self.d = d
        self.rowoff = rowoff
        self.coloff = coloff
        self.row_ok = row_ok
        self.col_ok = col_ok


# ---- conversion ----------------------------------------------------------------------------------


class CoopmatrixMemoryConversion(AtomicConversion):
    def __init__(self, core_info: CoreInfo) -> None:
        super().__init__(core_info)
        # asked per load and store (a method of the core info, which is not compiled)
        self._have_block_io = core_info.have_spirv_feature(SpirvFeature.subgroup_buffer_block_io)
        self._prefetch_asm: dict[tuple[str, int], int] = {}
        self._sfence_asm = 0  # the OpAsmINTEL "sfence", once per module (`before_return`)

    def cm_lane_id(self) -> int:
        return self.load_builtin(BuiltIn.SubgroupLocalInvocationId, self.i32(), 4)

    def cm_cond_exec(
        self, cond: int, then: Callable[[], list[int]], other: list[int], types: list[int]
    ) -> list[int]:
        """Structured `if (cond) then()`; returns phis of then()'s values and `other`."""
        m = self.mod
        then_l, merge_l = m.new_id(), m.new_id()
        start = self.block.label
        self.block.emit(Op.SelectionMerge, merge_l, SelectionControl.None_)
        self.block.emit(Op.BranchConditional, cond, then_l, merge_l)
        self.block = self.fn.add_block(then_l)
        vals = then()
        end = self.block.label
        self.block.emit(Op.Branch, merge_l)
        self.block = self.fn.add_block(merge_l)
        return [
            self.block.op(Op.Phi, t, v, end, o, start)
            for v, o, t in zip(vals, other, types, strict=True)
        ]

    def cm_scaled(self, stride: int, static: int, factor: int) -> int | None:
        """Id of factor*stride (a constant for a static stride); None when it is 0."""
        if factor == 0 or static == 0:
            return None
        if static != DYNAMIC:
            return self.c64(factor * static)
        if factor == 1:
            return stride
        return self.block.op(Op.IMul, self.i64(), stride, self.c64(factor))

    def cm_add64(self, a: int | None, b: int | None) -> int | None:
        if a is None or b is None:
            return b if a is None else a
        return self.block.op(Op.IAdd, self.i64(), a, b)

    def cm_ult(self, a: int, b: int) -> int:
        return self.block.op(Op.ULessThan, self.mod.type_bool(), a, b)

    def cm_walk_setup(self, inst: Inst, ct: CoopmatrixType, d: MemrefDV) -> Walk:
        lay = self.layout_of(ct, inst)
        blk, i64 = self.block, self.i64()
        pos = [self.val(inst.operand("pos0"), inst), self.val(inst.operand("pos1"), inst)]
        shape, stride, static = list(d.shape), list(d.stride), list(d.ty.stride)
        if inst.props["tA"] is Transpose.t:
            for x in (pos, shape, stride, static):
                x.reverse()
        lane = blk.op(Op.SConvert, i64, self.cm_lane_id())
        prow, pcol = lane, None
        if lay.sgs > lay.I:
            prow = blk.op(Op.UMod, i64, lane, self.c64(lay.I))
            pcol = blk.op(Op.UDiv, i64, lane, self.c64(lay.I))
        row = blk.op(Op.IAdd, i64, pos[0], prow)
        col = self.cm_add64(pos[1], pcol)
        assert col is not None
        r0 = row if static[0] == 1 else blk.op(Op.IMul, i64, row, stride[0])
        c0 = col if static[1] == 1 else blk.op(Op.IMul, i64, col, stride[1])
        base = blk.op(Op.IAdd, i64, r0, c0)
        rowoff = [
            self.cm_add64(base, self.cm_scaled(stride[0], static[0], b * lay.I))
            for b in range(lay.K)
        ]
        coloff = [
            self.cm_scaled(stride[1], static[1], u * lay.col_step) for u in range(lay.cols_per_lane)
        ]
        checked = inst.props["checked"]
        row_ok: list[int | None] = [None] * lay.K
        if checked in (CheckedFlag.rows, CheckedFlag.both):
            row_ok = [
                self.cm_ult(self.cm_add64(row, self.c64(b * lay.I)), shape[0]) for b in range(lay.K)
            ]
        col_ok: list[int | None] = []
        for u in range(lay.cols_per_lane):
            cond = None
            if checked in (CheckedFlag.cols, CheckedFlag.both):
                cond = self.cm_ult(self.cm_add64(col, self.c64(u * lay.col_step)), shape[1])
            if lay.may_pad(u) and pcol is not None:
                pad = self.cm_ult(
                    self.cm_add64(pcol, self.c64(u * lay.col_step)), self.c64(lay.cols)
                )
                cond = (
                    pad if cond is None else blk.op(Op.LogicalAnd, self.mod.type_bool(), cond, pad)
                )
            col_ok.append(cond)
        return Walk(lay, d, rowoff, coloff, row_ok, col_ok)

    def cm_walk(
        self, w: Walk, elem: Callable[[int, int], int | None], rty: int | None
    ) -> list[int]:
        """Runs elem(pointer, component) for every element under the guards; collects its
        results (zero where a guard fails) by component when `rty` is the component type."""
        lay = w.lay
        pty = self.memref_ptr_ty(w.d.ty)
        zero = [self.mod.constant_null(rty)] if rty is not None else []
        types = [rty] if rty is not None else []
        out = [0] * lay.V
        per = lay.cols_per_lane
        for b in range(lay.K):
            cond = w.row_ok[b]
            if cond is None:
                vals = self.cm_walk_block(w, b, elem, rty, pty, zero, types)
            else:
                vals = self.cm_cond_exec(
                    cond,
                    lambda b=b: self.cm_walk_block(w, b, elem, rty, pty, zero, types),
                    zero * per,
                    types * per,
                )
            for u, r in enumerate(vals):
                out[lay.component(b, u)] = r
        return out

    def cm_walk_block(
        self,
        w: Walk,
        b: int,
        elem: Callable[[int, int], int | None],
        rty: int | None,
        pty: int,
        zero: list[int],
        types: list[int],
    ) -> list[int]:
        """cm_walk's elements of row block b, each under its column guard."""
        vals: list[int] = []
        for u in range(w.lay.cols_per_lane):
            cond = w.col_ok[u]
            if cond is None:
                vals += self.cm_walk_one(w, b, u, elem, rty, pty)
            else:
                vals += self.cm_cond_exec(
                    cond, lambda u=u: self.cm_walk_one(w, b, u, elem, rty, pty), zero, types
                )
        return vals

    def cm_walk_one(
        self,
        w: Walk,
        b: int,
        u: int,
        elem: Callable[[int, int], int | None],
        rty: int | None,
        pty: int,
    ) -> list[int]:
        """elem() of the element of row block b and lane column u: [its result] or []."""
        off = self.cm_add64(w.rowoff[b], w.coloff[u])
        ptr = self.block.op(Op.InBoundsPtrAccessChain, pty, w.d.ptr, off)
        r = elem(ptr, w.lay.component(b, u))
        return [r] if rty is not None and r is not None else []

    # ---- instructions ---------------------------------------------------------------------------

    def coop_load(self, inst: CoopLoadInst) -> None:
        ct = as_coopmatrix(inst.results[0].type)
        d = self.dv(inst.operand("operand"), inst)
        elem_ty = self.ty(ct.component)
        atomic = inst.atomic
        if not atomic and self.cm_only_read_uniformly(inst):
            return  # no value: its users read memory themselves (coop_mul_add)
        if not atomic:
            res = self.cm_block_io(inst, ct, d, None)
            if res is not None:
                self.set(inst, res)
                return
        w = self.cm_walk_setup(inst, ct, d)
        if atomic:
            at = self.cm_atomic(inst, d)
            self.set(inst, self.cm_walk(w, lambda p, v: at(p, 0), elem_ty))
            return
        self.set(inst, self.cm_walk(w, lambda p, v: self.block.op(Op.Load, elem_ty, p), elem_ty))

    def coop_store(self, inst: CoopStoreInst) -> None:
        ct = inst.operand("val").type
        d = self.dv(inst.operand("operand"), inst)
        vals = self.cm(inst.operand("val"), inst)
        if not inst.atomic:
            if self.cm_block_io(inst, ct, d, vals) is not None:
                return

            align = self.cm_nontemporal_alignment(inst, ct, d)
            if align:
                self.nontemporal_roots.add(root(inst.operand("operand")))

            def st(p: int, v: int) -> None:
                if align:
                    access = MemoryAccess.Aligned | MemoryAccess.Nontemporal
                    self.block.emit(Op.Store, p, vals[v], access, align)
                else:
                    self.block.emit(Op.Store, p, vals[v])

            self.cm_walk(self.cm_walk_setup(inst, ct, d), st, None)
            return
        at = self.cm_atomic(inst, d)
        w = self.cm_walk_setup(inst, ct, d)
        # the old values only where they are used (else their phis under the guards are dead)
        used = bool(inst.results) and inst.results[0].has_uses()
        rty = self.ty(ct.component) if used else None
        res = self.cm_walk(w, lambda p, v: at(p, vals[v]), rty)
        if used:
            self.set(inst, res)

    def cm_nontemporal_alignment(self, inst: Inst, ct: CoopmatrixType, d: MemrefDV) -> int:
        """The alignment in bytes of a store marked nontemporal (ir/attrs.py NONTEMPORAL) on a
        SIMD CPU core, 0 for a plain store. The CPU runtime's JIT makes one vector store of a
        row block's S lanes at lane 0's address and gives it the alignment of the work-item's
        scalar store; it drops the hint of an unaligned one (seen in its AVX2 code: 8-byte
        alignment made plain vmovupd). So each element's store states the alignment of the row
        block's vector, S times the element size, where the memref allows it (the shared
        analysis/nontemporal.py `nontemporal_alignment`: a global memref, contiguous real
        columns, base and column stride multiples of one register's vector) and the store is a
        row block of S lanes at a multiple of S rows (pos0), with no row check and no
        transpose. The address of each further lane is then not that aligned, and stating it
        is outside the SPIR-V specification: it relies on this runtime widening the lanes into
        one vector store (the execution tests, tests/exec/test_gemm_nontemporal.py, are the
        canary). Elsewhere the hint is dropped."""
        attrs = inst.attrs
        hint = attrs.get(NONTEMPORAL) if attrs is not None else None
        if not isinstance(hint, BooleanAttr) or not hint.value:  # the verifier admits booleans
            return 0
        lay = self.layout_of(ct, inst)
        if (
            lay.sgs != lay.I
            or inst.props["tA"] is not Transpose.n
            or inst.props["checked"] is not CheckedFlag.none
        ):
            return 0
        align = nontemporal_alignment(inst.operand("operand"), lay.sgs, self.core_info)
        if not align or value_gcd(inst.operand("pos0")) * ct.component.size % align:
            return 0
        return align

    def cm_reads_uniformly(self, v: Value, user: Inst) -> bool:
        """Whether `user` may read the elements of coopmatrix `v` again from memory at addresses
        that are the same in every lane (cm_uniform_loader): on a SIMD CPU core (core info
        `vector_register_size`), when `v` is an unchecked cooperative_matrix_load earlier in
        `user`'s region and nothing in between may write memory."""
        load = v.defining_inst
        if (
            not self.core_info.vector_register_size
            or load is None
            or not isinstance(load, CoopLoadInst)
            or load.atomic
            or load.props["checked"] is not CheckedFlag.none
            or load.parent is not user.parent
        ):
            return False
        insts = user.parent.insts
        between = insts[insts.index(load) + 1 : insts.index(user)]
        return not any(x.spec.writes or x.spec.side_effects or x.regions for x in between)

    def cm_only_read_uniformly(self, load: Inst) -> bool:
        """Whether every use of the coopmatrix `load` defines is the B operand of a mul_add
        that reads it uniformly: then the load's own per-lane values would be dead code."""
        v = load.results[0]
        return v.has_uses() and all(
            isinstance(use.owner, CoopMulAddInst)
            and use.owner.operand("b") is v
            and self.cm_reads_uniformly(v, use.owner)
            for use in v.uses
        )

    def cm_uniform_loader(self, v: Value, user: Inst) -> Callable[[int, int], int] | None:
        """A function giving element (i, j) of the coopmatrix `v` read again from memory at an
        address that is the same in every lane, where cm_reads_uniformly allows it. The CPU JIT
        folds such a load into a broadcast operand of the FMA, where broadcasting the component
        from its lane costs shuffles (and the shuffled values spill). None otherwise."""
        if not self.cm_reads_uniformly(v, user):
            return None
        load = v.defining_inst
        assert load is not None
        d = self.dv(load.operand("operand"), load)
        pos = [self.val(load.operand("pos0"), load), self.val(load.operand("pos1"), load)]
        stride, static = list(d.stride), list(d.ty.stride)
        if load.props["tA"] is Transpose.t:  # element (i, j) is at memref[pos0 + j, pos1 + i]
            for x in (pos, stride, static):
                x.reverse()
        blk, i64 = self.block, self.i64()
        r0 = pos[0] if static[0] == 1 else blk.op(Op.IMul, i64, pos[0], stride[0])
        c0 = pos[1] if static[1] == 1 else blk.op(Op.IMul, i64, pos[1], stride[1])
        base = blk.op(Op.IAdd, i64, r0, c0)
        pty, ety = self.memref_ptr_ty(d.ty), self.ty(as_coopmatrix(v.type).component)

        def element(i: int, j: int) -> int:
            step = self.cm_add64(
                self.cm_scaled(stride[0], static[0], i), self.cm_scaled(stride[1], static[1], j)
            )
            ptr = self.block.op(Op.InBoundsPtrAccessChain, pty, d.ptr, self.cm_add64(base, step))
            return self.block.op(Op.Load, ety, ptr)

        return element

    def coop_prefetch(self, inst: Inst) -> None:
        """On a SIMD CPU core (core info `cpu`): x86 prefetch instructions as inline assembly
        (SPV_INTEL_inline_assembly), one cache line per lane and round; elsewhere on the
        generic and block paths a no-op (docs/design.md §B3.3). The CPU runtime turns OpenCL.std
        prefetch into a call of its library per lane, which clears the upper halves of the
        vector registers (vzeroupper) and so spills the accumulators around it; the inline
        instruction is one `prefetcht0 (reg)` per lane address. A memref whose rows are not
        contiguous (stride0 != 1, or a transposed view), or a block of more than
        MAX_PREFETCH_ROUNDS rounds, is not prefetched."""
        if self.core_info.cpu is None:
            return
        d = self.dv(inst.operand("operand"), inst)
        if d.ty.stride[0] != 1:
            return
        size = d.ty.element.size
        rows, cols = inst.props["rows"], inst.props["cols"]
        # per column a point every cache line (of a column that does not start on a line
        # boundary, the last line may be left out: a hint)
        per_line = max(1, CACHE_LINE // size)
        npoints = -(-rows // per_line)
        items = npoints * cols
        blk, i64 = self.block, self.i64()
        pos0 = self.val(inst.operand("pos0"), inst)
        pos1 = self.val(inst.operand("pos1"), inst)
        lane = blk.op(Op.SConvert, i64, self.cm_lane_id())
        pty = self.memref_ptr_ty(d.ty)
        asm = self.cm_prefetch_asm(inst.props["cache_level"], pty)
        rounds = -(-items // self.sgs)
        if rounds > MAX_PREFETCH_ROUNDS:
            return
        npts = self.c64(npoints)
        for r in range(rounds):
            # item (lane + r*S) clamped to the last one: lanes past the end repeat it
            item = blk.op(Op.IAdd, i64, lane, self.c64(r * self.sgs))
            item = blk.op(Op.ExtInst, i64, self.ocl, OpenCLStd.u_min, item, self.c64(items - 1))
            col = blk.op(Op.IAdd, i64, pos1, blk.op(Op.UDiv, i64, item, npts))
            point = blk.op(Op.UMod, i64, item, npts)
            row = blk.op(Op.IAdd, i64, pos0, blk.op(Op.IMul, i64, point, self.c64(per_line)))
            off = blk.op(Op.IAdd, i64, row, blk.op(Op.IMul, i64, col, d.stride[1]))
            ptr = blk.op(Op.PtrAccessChain, pty, d.ptr, off)
            blk.op(Op.AsmCallINTEL, self.mod.type_void(), asm, ptr)

    def cm_prefetch_asm(self, cache_level: int, pty: int) -> int:
        """The OpAsmINTEL `prefetch<hint> ($0)` for pointers of type `pty`, once per module:
        cache level 0 is prefetcht0, 1 prefetcht1, 2 and higher prefetcht2."""
        hint = ("t0", "t1", "t2")[min(cache_level, 2)]
        key = (hint, pty)
        asm = self._prefetch_asm.get(key)
        if asm is None:
            m, void = self.mod, self.mod.type_void()
            target = m.unique(Op.AsmTargetINTEL, CPU_ASM_TARGET)
            fty = m.type_function(void, [pty])
            asm = m.declare(Op.AsmINTEL, void, fty, target, f"prefetch{hint} ($0)", "r")
            m.decorate(asm, Decoration.SideEffectsINTEL)
            self._prefetch_asm[key] = asm
        return asm

    def before_return(self) -> None:
        """One `sfence` at the end of a kernel that stored nontemporal (inline assembly, as
        the prefetches): x86 nontemporal stores are weakly ordered, and only a fence orders
        them before what follows the kernel (the runtime's completion, a host or another
        device thread reading C); nothing is known to fence for the kernel. Measured on the
        Zen 4 EPYC, AVX2 code, batched 64^3 f64 (docs/_benchmarks.rst)."""
        super().before_return()
        if not self.nontemporal_roots:
            return
        m, void = self.mod, self.mod.type_void()
        if not self._sfence_asm:
            target = m.unique(Op.AsmTargetINTEL, CPU_ASM_TARGET)
            fty = m.type_function(void, [])
            self._sfence_asm = m.declare(Op.AsmINTEL, void, fty, target, "sfence", "")
            m.decorate(self._sfence_asm, Decoration.SideEffectsINTEL)
        self.block.op(Op.AsmCallINTEL, void, self._sfence_asm)

    # ---- atomics --------------------------------------------------------------------------------

    def cm_atomic(self, inst: Inst, d: MemrefDV) -> Callable[[int, int], int | None]:
        """elem(pointer, value) doing the element-wise atomic of `inst` (docs/design.md §B6.8)."""
        elem = d.ty.element
        kind = inst.name.removeprefix("cooperative_matrix_atomic_")
        scope, sem = self.atomic_operands(inst, elem)
        m, i32 = self.mod, self.i32()
        local = d.ty.addrspace is AddressSpace.local
        comp_ty = elem.component_type
        comp = self.ty(comp_ty)
        op = 0
        if kind in FLOAT_UPDATE and elem.is_integer:
            op = INT_UPDATE[kind]
        elif kind in FLOAT_UPDATE:
            op = FLOAT_UPDATE[kind]
            self.require(inst, *float_update_requirement("atomic_" + kind, 8 * comp_ty.size, local))

        sc = StorageClass.Workgroup if local else StorageClass.CrossWorkgroup
        via_i64 = kind in ("load", "store") and self.moves_bits(comp_ty)
        if via_i64:
            self.require(inst, SpirvFeature.int64_atomics, Capability.Int64Atomics)
        i64p = m.type_pointer(sc, self.i64(), 8)

        def scalar(ty: int, p: int, x: int) -> int | None:
            blk = self.block
            if via_i64:
                p = blk.op(Op.Bitcast, i64p, p)
            if kind == "load":
                if via_i64:
                    return blk.op(Op.Bitcast, ty, blk.op(Op.AtomicLoad, self.i64(), p, scope, sem))
                return blk.op(Op.AtomicLoad, ty, p, scope, sem)
            if kind == "store":
                if via_i64:
                    x = blk.op(Op.Bitcast, self.i64(), x)
                blk.emit(Op.AtomicStore, p, scope, sem, x)
                return None
            return blk.op(op, ty, p, scope, sem, x)

        if not elem.is_complex:
            ety = self.ty(elem)
            return lambda p, x: scalar(ety, p, x)
        cptr = m.type_pointer(sc, comp, comp_ty.size)
        used = bool(inst.results) and inst.results[0].has_uses()  # else no old value is made

        def cplx(p: int, x: int) -> int | None:
            blk = self.block
            re_p = blk.op(Op.InBoundsAccessChain, cptr, p, m.constant(i32, 0))
            im_p = blk.op(Op.InBoundsAccessChain, cptr, p, m.constant(i32, 1))
            xr, xi = self.parts(x, comp) if x else (0, 0)
            r, i = scalar(comp, re_p, xr), scalar(comp, im_p, xi)
            if r is None or i is None or not used:
                return None
            return self.make_complex(self.ty(elem), r, i)

        return cplx

    # ---- block path (§B3.4) ----------------------------------------------------------------------

    def cm_block_io_ok(
        self, inst: Inst, ct: CoopmatrixType, lay: CoopLayout, d: MemrefDV, write: bool
    ) -> bool:
        elem: NumberType = ct.component
        if (
            not self._have_block_io
            or lay.sgs != lay.I
            or inst.props["tA"] is not Transpose.n
            or inst.props["checked"] in (CheckedFlag.rows, CheckedFlag.both)
            or elem.kind is ScalarKind.c64
            or d.ty.stride[0] != 1
            or d.ty.addrspace is not AddressSpace.global_
            or (elem.size != 4 and not self.core_info.ip_version)
        ):
            return False
        r = 16 if write else 4
        size = elem.size
        if size >= r:
            return True
        known = memref_gcd(inst.operand("operand"), self.core_info.default_alignment)
        return (
            known.offset * size % r == 0
            and value_gcd(inst.operand("pos0")) * size % r == 0
            and known.stride[1] * size % r == 0
        )

    def cm_block_io(
        self, inst: Inst, ct: CoopmatrixType, d: MemrefDV, vals: list[int] | None
    ) -> list[int] | None:
        """Load (vals None) or store `ct` with subgroup block IO; None if not applicable."""
        lay = self.layout_of(ct, inst)
        if not self.cm_block_io_ok(inst, ct, lay, d, vals is not None):
            return None
        m, blk, i64 = self.mod, self.block, self.i64()
        elem = ct.component
        io = m.type_int(8 * elem.size)
        ety = self.ty(elem)
        max_vec = 1 if self.core_info.vector_register_size else 16 if elem.size == 1 else 8
        bpi = min(lay.K, max_vec)
        cpi = 1
        checked = inst.props["checked"] is CheckedFlag.cols
        mt = d.ty
        if not checked and mt.shape[0] == lay.rows and mt.stride[1] == lay.rows:
            while bpi * 2 * cpi <= max_vec and lay.cols_per_lane % (2 * cpi) == 0:
                cpi *= 2
        pos0 = self.val(inst.operand("pos0"), inst)
        pos1 = self.val(inst.operand("pos1"), inst)
        c0 = pos1 if mt.stride[1] == 1 else blk.op(Op.IMul, i64, pos1, d.stride[1])
        start = blk.op(Op.IAdd, i64, pos0, c0)
        ptr = blk.op(Op.InBoundsPtrAccessChain, self.memref_ptr_ty(mt), d.ptr, start)
        io_ptr_ty = m.type_pointer(StorageClass.CrossWorkgroup, io, elem.size)
        io_ptr = blk.op(Op.Bitcast, io_ptr_ty, ptr)
        col_ok: list[int | None] = [None] * lay.cols_per_lane
        if checked:
            for u in range(lay.cols_per_lane):
                col_ok[u] = self.cm_ult(self.cm_add64(pos1, self.c64(u)), d.shape[1])
        n = bpi * cpi
        vty = io if n == 1 else m.type_vector(io, n)
        out = [0] * lay.V
        zero = m.constant_null(ety)
        msg = _BlockMessages(self, lay, d, vals, bpi, n, io_ptr, io_ptr_ty, vty, io, elem)
        for u0 in range(0, lay.cols_per_lane, cpi):
            for b0 in range(0, lay.K, bpi):
                cond = col_ok[u0]
                if cond is None:
                    got = msg.io_op(b0, u0)
                else:
                    k = n if vals is None else 0
                    got = self.cm_cond_exec(cond, partial(msg.io_op, b0, u0), [zero] * k, [ety] * k)
                for v, x in zip(msg.comps(b0, u0), got, strict=False):
                    out[v] = x
        return out

    def cm_io_cast(self, x: int, to: int, frm: int, elem: NumberType) -> int:
        """Bitcast between the element type and the block IO integer type (same size)."""
        if to == frm:
            return x
        return self.block.op(Op.Bitcast, to, x)


class _BlockMessages:
    """The subgroup block reads or writes of one cm_block_io: each moves the n = bpi * cpi
    components of row blocks b0.. and lane columns u0.. . A native class rather than nested
    functions of cm_block_io: in the compiled module, nested functions that call each other
    make a reference cycle through the converter, which then outlives the conversion (and
    keeps its module) until the garbage collector's next scan."""

    def __init__(
        self,
        conv: CoopmatrixMemoryConversion,
        lay: CoopLayout,
        d: MemrefDV,
        vals: list[int] | None,
        bpi: int,
        n: int,
        io_ptr: int,
        io_ptr_ty: int,
        vty: int,
        io: int,
        elem: NumberType,
    ) -> None:
        self.conv = conv
        self.lay = lay
        self.d = d
        self.vals = vals
        self.bpi = bpi
        self.n = n
        self.io_ptr = io_ptr
        self.io_ptr_ty = io_ptr_ty
        self.vty = vty
        self.io = io
        self.elem = elem
        self.ety = conv.ty(elem)

    def comps(self, b0: int, u0: int) -> list[int]:
        """The component numbers one message moves, in message order."""
        lay, bpi = self.lay, self.bpi
        return [lay.component(b0 + i % bpi, u0 + i // bpi) for i in range(self.n)]

    def io_op(self, b0: int, u0: int) -> list[int]:
        """The message at (b0, u0) in the converter's current block: the components read, or
        [] for a write."""
        conv, d, io, ety, elem, n = self.conv, self.d, self.io, self.ety, self.elem, self.n
        off = conv.cm_add64(
            conv.c64(b0 * self.lay.sgs) if b0 else None,
            conv.cm_scaled(d.stride[1], d.ty.stride[1], u0),
        )
        p = self.io_ptr
        if off is not None:
            p = conv.block.op(Op.InBoundsPtrAccessChain, self.io_ptr_ty, p, off)
        vals = self.vals
        if vals is None:
            r = conv.block.op(Op.SubgroupBlockReadINTEL, self.vty, p)
            parts = (
                [r] if n == 1 else [conv.block.op(Op.CompositeExtract, io, r, i) for i in range(n)]
            )
            return [conv.cm_io_cast(x, ety, io, elem) for x in parts]
        data = [conv.cm_io_cast(vals[v], io, ety, elem) for v in self.comps(b0, u0)]
        x = data[0] if n == 1 else conv.block.op(Op.CompositeConstruct, self.vty, *data)
        conv.block.emit(Op.SubgroupBlockWriteINTEL, p, x)
        return []


HANDLERS: HandlerRows = (
    (CoopLoadInst, False, "coop_load"),
    (CoopStoreInst, False, "coop_store"),
    (CoopPrefetchInst, False, "coop_prefetch"),
)
"""The instructions CoopmatrixMemoryConversion converts: (instruction class, coopmatrix result only, method)."""
