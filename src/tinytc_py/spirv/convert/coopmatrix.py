"""Cooperative matrices on the generic (SIMT) path (docs/design.md §B3.1, §B3.3), with block IO for
loads and stores where it is provably legal (§B3.4, coopmatrix_memory.py).

Representation: arithmetic works on a Python list of V SPIR-V ids, one scalar per component of
the work-item's part of the matrix (analysis/coopmatrix_layout.py says which element component v
of lane p holds). Where a value crosses a control-flow boundary (`if` results, loop-carried
values, yields) and for constants, a matrix of V = 2, 3, 4, 8 or 16 real components is one
vector (ConverterBase.cm_vector_type): one OpPhi instead of V, as upstream keeps it; the other
form is made from it in the block that needs it (OpCompositeExtract / OpCompositeConstruct, which
the device JIT folds away). Other lengths (upstream's vectors of any length fail spirv-val,
§B10 item 2) and complex components keep one OpPhi per component. Upstream's packing of small
matrix_a types into i32 is invisible: component v of cooperative_matrix_extract/insert is the
element §B3.1 assigns to v.

- construct / constant / scale / arithmetic / cast: component-wise (bf16 through f32). A cast
  from matrix_acc to matrix_b permutes the components when K1 differs (i8 with rows > S).
- extract / insert: component `index` (0 <= index < V, else ir_out_of_bounds); on a value held
  as a vector, OpCompositeExtract / OpCompositeInsert of that vector.
- mul_add D = A*B + C (rows of A, C, D multiples of S, else ir_unsupported_coopmatrix_shape):
  for every k and column n, B(k, n) is promoted to C's type and broadcast from the lane that
  holds it (OpGroupBroadcast, at least 32 bits wide) - or, on a SIMD CPU core, when B comes
  straight from an unchecked load, read again at a uniform address (cm_uniform_loader), which
  the CPU JIT turns into an FMA with a broadcast memory operand (a load whose every use reads it
  so emits nothing itself) - then each row block accumulates
  A(m, k)*B(k, n) with fma (bf16 accumulates in f32; complex keeps re/im accumulators).
- reduce .row: each lane folds the columns of each of its row blocks. reduce .column: fold over
  the row blocks, then a butterfly of OpGroupNonUniformShuffleXor over each chunk of S columns
  (at stage v, lanes with p & v == 0 keep the lower column of each pair and receive the upper
  partial from lane p ^ v); in the end lane p holds column j0 + p. 8/16-bit types reduce in
  32 bits.
- prefetch: no-op (on a SIMD CPU core: x86 prefetch instructions, coopmatrix_memory.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

from ...errors import Status
from ...ir.enums import ReduceMode
from ...ir.inst import Inst
from ...ir.ops.arith import ArithBinaryInst, ArithUnaryInst, CastInst, ConstantInst
from ...ir.ops.coopmatrix import (
    CoopConstructInst,
    CoopExtractInst,
    CoopInsertInst,
    CoopMulAddInst,
    CoopReduceInst,
    CoopScaleInst,
)
from ...ir.types import CoopmatrixType, NumberType, ScalarKind, as_coopmatrix
from ..module import Block, Emitter
from ..tables import Op, OpenCLStd, Scope
from .base import CoopVector, HandlerRows
from .coopmatrix_memory import CoopmatrixMemoryConversion
from .scalar import _INT_BINARY, _INT_EXT

_SMALL_INT = (ScalarKind.i8, ScalarKind.i16)
_SMALL_FLOAT = (ScalarKind.f16, ScalarKind.bf16)


class CoopmatrixConversion(CoopmatrixMemoryConversion):
    # ---- component-wise scalar helpers ----------------------------------------------------------

    def cm_binary(self, name: str, ty: NumberType) -> Callable[[int, int], int]:
        """(a, b) -> a `name` b on components of type `ty`. Made once per instruction and
        applied to every component, so the opcode and types are looked up once; the real
        cases call the block's op through a partial. The function captures the current block,
        so it is valid until the converter moves to another block."""
        if ty.is_integer:
            rty = self.ty(ty)
            if name in _INT_EXT:
                return partial(self.ext, rty, _INT_EXT[name])
            return partial(self.block.op, _INT_BINARY[name], rty)
        if ty.kind is ScalarKind.bf16:
            return lambda a, b: self.via_f32(ty, lambda t, x: self.float_binary(name, t, *x), a, b)
        if ty.is_float:
            return partial(self.float_binary, name, self.ty(ty))
        return partial(self.complex_binary, name, ty)

    def cm_unary(self, name: str, ty: NumberType, a: int) -> int:
        blk = self.block
        if ty.is_integer:
            t = self.ty(ty)
            if name == "abs":
                return self.ext(t, OpenCLStd.s_abs, a)
            return blk.op(Op.SNegate if name == "neg" else Op.Not, t, a)
        if ty.is_float:
            if name == "abs":
                return self.via_f32(ty, lambda t, x: self.ext(t, OpenCLStd.fabs, x[0]), a)
            return self.via_f32(ty, lambda t, x: self.block.op(Op.FNegate, t, x[0]), a)
        return self.complex_unary(name, ty, a)

    def cm_cast(self, a: int, src: NumberType, dst: NumberType) -> int:
        if src is dst:
            return a
        if dst.is_complex and src.is_complex:
            return self.block.op(Op.FConvert, self.ty(dst), a)
        if dst.is_complex:
            re = self.convert_scalar(a, src, dst.component_type)
            null = self.mod.constant_null(self.ty(dst))
            return self.block.op(Op.CompositeInsert, self.ty(dst), re, null, 0)
        return self.convert_scalar(a, src, dst)

    def cm_check_rows(self, inst: Inst, *types: CoopmatrixType) -> None:
        for t in types:
            if t.rows % self.sgs:
                raise inst.error(
                    Status.ir_unsupported_coopmatrix_shape,
                    f"{inst.name}: the rows of {t} must be a multiple of the subgroup size "
                    f"{self.sgs}",
                )

    # ---- component-wise instructions ------------------------------------------------------------

    def coop_constant(self, inst: Inst) -> None:
        ct = as_coopmatrix(inst.results[0].type)
        value = inst.props["value"]
        vty = self.cm_vector_type(ct, inst)  # declared before its constituents, as upstream does
        c = self.const(ct.component, value)
        comps = [c] * self.layout_of(ct, inst).V
        if not vty:
            self.set(inst, comps)
            return
        if value == 0 and math.copysign(1.0, value) > 0:
            vec = self.mod.constant_null(vty)
        else:
            vec = self.mod.constant_composite(vty, comps)
        self.set(inst, CoopVector(vec, comps))

    def coop_construct(self, inst: Inst) -> None:
        ct = inst.results[0].type
        x = self.val(inst.operand("number"), inst)
        self.set(inst, [x] * self.layout_of(ct, inst).V)

    def coop_arith_binary(self, inst: Inst) -> None:
        a, b = self.cm(inst.operand("a"), inst), self.cm(inst.operand("b"), inst)
        binary = self.cm_binary(inst.name, as_coopmatrix(inst.results[0].type).component)
        self.set(inst, [binary(x, y) for x, y in zip(a, b, strict=True)])

    def coop_arith_unary(self, inst: Inst) -> None:
        a = self.cm(inst.operand("a"), inst)
        comp = inst.operand("a").type.component
        self.set(inst, [self.cm_unary(inst.name, comp, x) for x in a])

    def coop_scale(self, inst: Inst) -> None:
        s = self.val(inst.operand("a"), inst)
        m = self.cm(inst.operand("b"), inst)
        mul = self.cm_binary("mul", as_coopmatrix(inst.results[0].type).component)
        self.set(inst, [mul(s, x) for x in m])

    def coop_cast(self, inst: Inst) -> None:
        st, dt = as_coopmatrix(inst.operand("a").type), as_coopmatrix(inst.results[0].type)
        a = self.cm(inst.operand("a"), inst)
        vals = [self.cm_cast(x, st.component, dt.component) for x in a]
        ls, ld = self.layout_of(st, inst), self.layout_of(dt, inst)
        if ls.K1 != ld.K1:  # the same elements, numbered differently (matrix_acc -> matrix_b)
            vals = [vals[ls.component(*ld.block_col(v))] for v in range(ld.V)]
        self.set(inst, vals)

    def coop_extract(self, inst: Inst) -> None:
        v = inst.operand("mat")
        r = self.values.get(v)
        if isinstance(r, CoopVector):
            idx = self.cm_index(inst, self.layout_of(v.type, inst).V)
            got = self.cm_extracted(v)
            comp = self.ty(v.type.component)
            x = got[idx] if got else self.block.op(Op.CompositeExtract, comp, r.vec, idx)
            self.set(inst, x)
            return
        m = self.cm(v, inst)
        self.set(inst, m[self.cm_index(inst, len(m))])

    def coop_insert(self, inst: Inst) -> None:
        v = inst.operand("mat")
        x = self.val(inst.operand("val"), inst)
        r = self.values.get(v)
        if isinstance(r, CoopVector):
            idx = self.cm_index(inst, self.layout_of(v.type, inst).V)
            vty = self.cm_vector_type(v.type, inst)
            vec = self.block.op(Op.CompositeInsert, vty, x, r.vec, idx)
            comps = r.comps if r.comps is not None else self.cm_extracted(v)
            if comps is not None:
                comps = list(comps)
                comps[idx] = x
            self.set(inst, CoopVector(vec, comps))
            return
        m = list(self.cm(v, inst))
        m[self.cm_index(inst, len(m))] = x
        self.set(inst, m)

    def cm_index(self, inst: Inst, length: int) -> int:
        idx = inst.props["index"]
        if not 0 <= idx < length:
            raise inst.error(
                Status.ir_out_of_bounds,
                f"index {idx} is outside the work-item vector of length {length} "
                f"(subgroup size {self.sgs})",
                inst.operand("mat"),
            )
        return idx

    # ---- mul_add --------------------------------------------------------------------------------

    def cm_split(self, x: int, ty: NumberType) -> tuple[int, int | None]:
        """(re, im) of a complex value; (x, None) for a real one."""
        if not ty.is_complex:
            return x, None
        return self.parts(x, self.ty(ty.component_type))

    def coop_mul_add(self, inst: Inst) -> None:
        """D = A*B + C with one broadcast per element of B and one fma per element of B and
        row block. This emits most of a GEMM's instructions, so the loop works on tables made
        before it: the component numbers of A(., k) and C(., n) per row block, and real and
        imaginary parts in separate lists (imaginary parts None for a real type); the owner of
        an element of B is the layout's arithmetic (a native call, cheaper than a table)."""
        A, B, C = (inst.operand(k) for k in ("a", "b", "c"))
        at, bt, ct, rt = A.type, B.type, C.type, as_coopmatrix(inst.results[0].type)
        self.cm_check_rows(inst, at, ct, rt)
        la, lb, lc = self.layout_of(at, inst), self.layout_of(bt, inst), self.layout_of(ct, inst)
        uniform = self.cm_uniform_loader(B, inst)
        a, c = self.cm(A, inst), self.cm(C, inst)
        b = self.cm(B, inst) if uniform is None else []
        ctx = ct.ctx
        acc_ty = ctx.f32 if ct.component.kind is ScalarKind.bf16 else ct.component
        real = acc_ty.component_type
        fma = self.cm_fma(real)
        neg = self.cm_neg(real)

        def promote(x: int, ty: NumberType) -> tuple[int, int | None]:
            if ty is real:  # nothing to convert or split
                return x, None
            target = acc_ty if ty.is_complex else real
            return self.cm_split(self.cm_cast(x, ty, target), target)

        acc_re, acc_im = _unzip(
            [self.cm_split(self.cm_cast(x, ct.component, acc_ty), acc_ty) for x in c]
        )
        a_re, a_im = _unzip([promote(x, at.component) for x in a])
        a_neg_im: dict[int, int] = {}
        bc = Broadcaster(self, real)
        # component numbers of A(., k) and C(., n) in each row block
        a_comp = [[la.component(m, k) for m in range(lc.K)] for k in range(bt.rows)]
        c_comp = [[lc.component(m, n) for m in range(lc.K)] for n in range(bt.cols)]
        b_comp, complex_acc = bt.component, acc_ty.is_complex
        b_real = b_comp is real  # then promote() is the identity
        for k in range(bt.rows):
            a_k = a_comp[k]
            for n in range(bt.cols):
                bi: int | None = None
                if uniform is not None:
                    br, bi = promote(uniform(k, n), b_comp)
                else:
                    lane, v = lb.owner(k, n)
                    if b_real:
                        br = bc.broadcast(b[v], lane)
                    else:
                        br, bi = promote(b[v], b_comp)
                        br = bc.broadcast(br, lane)
                        if bi is not None:
                            bi = bc.broadcast(bi, lane)
                c_n = c_comp[n]
                if not complex_acc:  # then A and B are real as well
                    for m in range(len(a_k)):
                        vc = c_n[m]
                        acc_re[vc] = fma.fma(a_re[a_k[m]], br, acc_re[vc])
                    continue
                for va, vc in zip(a_k, c_n):
                    ar, ai = a_re[va], a_im[va]
                    cr = fma.fma(ar, br, acc_re[vc])
                    if ai is not None and bi is not None:
                        if va not in a_neg_im:
                            a_neg_im[va] = neg(ai)
                        cr = fma.fma(a_neg_im[va], bi, cr)
                    acc_re[vc] = cr
                    ci = acc_im[vc]
                    if bi is not None:
                        ci = fma.fma(ar, bi, ci)
                    if ai is not None:
                        ci = fma.fma(ai, br, ci)
                    acc_im[vc] = ci
        vty = self.ty(acc_ty)
        out = [
            self.make_complex(vty, cr, ci) if ci is not None else cr
            for cr, ci in zip(acc_re, acc_im)
        ]
        self.set(inst, [self.cm_cast(x, acc_ty, rt.component) for x in out])

    def cm_fma(self, ty: NumberType) -> Fma:
        """x*y + z in the current block for components of type `ty` (see Fma)."""
        return Fma(self.block, self.ty(ty), ty.is_integer, self.ocl)

    def cm_neg(self, ty: NumberType):
        t = self.ty(ty)
        return lambda x: self.block.op(Op.SNegate if ty.is_integer else Op.FNegate, t, x)

    # ---- reduce ---------------------------------------------------------------------------------

    def coop_reduce(self, inst: Inst) -> None:
        at, rt = inst.operand("a").type, inst.results[0].type
        self.cm_check_rows(inst, at)
        la, lr = self.layout_of(at, inst), self.layout_of(rt, inst)
        op = inst.name.removeprefix("cooperative_matrix_reduce_")
        comp = at.component
        ctx = comp.ctx
        work = comp
        if comp.kind in _SMALL_INT:
            work = ctx.i32
        elif comp.kind in _SMALL_FLOAT:
            work = ctx.f32
        x = [self.cm_cast(v, comp, work) for v in self.cm(inst.operand("a"), inst)]
        combine = self.cm_binary(op, work)

        def fold(vals: list[int]) -> int:
            r = vals[0]
            for y in vals[1:]:
                r = combine(r, y)
            return r

        out = [0] * lr.V
        if inst.props["mode"] is ReduceMode.row:
            for blk in range(la.K):
                cols = [x[la.component(blk, u)] for u in range(la.cols_per_lane)]
                out[lr.component(blk, 0)] = fold(cols)
        else:
            zero = self.mod.constant_null(self.ty(work))
            S = self.sgs
            for chunk in range(lr.V):
                xs = [
                    fold([x[la.component(blk, j)] for blk in range(la.K)]) if j < at.cols else zero
                    for j in range(chunk * S, (chunk + 1) * S)
                ]
                out[chunk] = self.cm_butterfly(xs, work, op)
        self.set(inst, [self.cm_cast(v, work, comp) for v in out])

    def cm_butterfly(self, xs: list[int], ty: NumberType, op: str) -> int:
        """Lane p ends with the combination over all lanes of xs[p] (len(xs) == S)."""
        m, i32, blk = self.mod, self.i32(), self.block
        lane = self.cm_lane_id()
        scope = m.constant(i32, Scope.Subgroup)
        bool_ty = m.type_bool()
        parts = [self.cm_split(v, ty) for v in xs]
        real = ty.component_type
        rty = self.ty(real)
        combine = self.cm_binary(op, real)
        step = 1
        while len(parts) > 1:
            mask = m.constant(i32, step)
            low = blk.op(
                Op.IEqual, bool_ty, blk.op(Op.BitwiseAnd, i32, lane, mask), m.constant(i32, 0)
            )

            def exchange(lo: int, hi: int, mask: int = mask, low: int = low) -> tuple[int, int]:
                keep = blk.op(Op.Select, rty, low, lo, hi)
                send = blk.op(Op.Select, rty, low, hi, lo)
                return keep, blk.op(Op.GroupNonUniformShuffleXor, rty, scope, send, mask)

            nxt = []
            for k in range(0, len(parts), 2):
                (lr_, li), (hr, hi) = parts[k], parts[k + 1]
                kr, rr = exchange(lr_, hr)
                new_r = combine(kr, rr)
                new_i = None
                if li is not None and hi is not None:
                    ki, ri = exchange(li, hi)
                    new_i = combine(ki, ri)
                nxt.append((new_r, new_i))
            parts = nxt
            step *= 2
        r, i = parts[0]
        return self.make_complex(self.ty(ty), r, i) if i is not None else r


class Fma:
    """x*y + z in one block: one OpenCL.std fma for floats, OpIMul and OpIAdd for integers.
    Made once per mul_add, whose loop calls `fma` once per element of B and row block: a native
    class with a named method, so that the compiled loop calls it directly (through a Callable
    each call would pack and parse its arguments), and that calls the emitters' fixed-arity
    methods in turn."""

    def __init__(self, block: Block, ty: int, integer: bool, ocl: int) -> None:
        self.ext: Emitter | None = None
        self.mul: Emitter | None = None
        self.add: Emitter | None = None
        if integer:
            self.mul, self.add = block.emitter(Op.IMul, ty), block.emitter(Op.IAdd, ty)
        else:
            self.ext = block.emitter(Op.ExtInst, ty, ocl, OpenCLStd.fma)

    def fma(self, x: int, y: int, z: int) -> int:
        ext = self.ext
        if ext is not None:
            return ext.op3(x, y, z)
        mul, add = self.mul, self.add
        assert mul is not None and add is not None
        return add.op2(mul.op2(x, y), z)


class Broadcaster:
    """OpGroupBroadcast of real scalars of type `ty` from a lane, in the converter's current
    block; 8/16-bit values travel as 32 bits. Made once per mul_add: the scope, types and lane
    constants are looked up once, not per element (a lane's constant is made at its first use,
    which fixes the ids the module assigns). A native class, so that the mul_add loop calls
    `broadcast` directly."""

    def __init__(self, conv: CoopmatrixConversion, ty: NumberType) -> None:
        self.conv = conv
        self.ty = ty
        self.i32 = conv.i32()
        scope = conv.mod.constant(self.i32, Scope.Subgroup)
        self.lane_ids = [0] * conv.sgs
        self.wide: NumberType | None = None
        self.emit: Emitter
        if ty.kind in _SMALL_INT or ty.kind in _SMALL_FLOAT:
            self.wide = ty.ctx.i32 if ty.is_integer else ty.ctx.f32
            self.emit = conv.block.emitter(Op.GroupBroadcast, conv.ty(self.wide), scope)
        else:
            self.emit = conv.block.emitter(Op.GroupBroadcast, conv.ty(ty), scope)

    def lane_id(self, lane: int) -> int:
        lid = self.lane_ids[lane]
        if not lid:
            lid = self.lane_ids[lane] = self.conv.mod.constant(self.i32, lane)
        return lid

    def broadcast(self, x: int, lane: int) -> int:
        """x as held by `lane`, in every lane."""
        wide = self.wide
        if wide is None:
            return self.emit.op2(x, self.lane_id(lane))
        conv = self.conv
        y = conv.convert_scalar(x, self.ty, wide)
        y = self.emit.op2(y, self.lane_id(lane))
        return conv.convert_scalar(y, wide, self.ty)


def _unzip(pairs: list[tuple[int, int | None]]) -> tuple[list[int], list[int | None]]:
    """([re...], [im...]) of a list of (re, im) pairs."""
    return [re for re, _ in pairs], [im for _, im in pairs]


HANDLERS: HandlerRows = (
    (ConstantInst, True, "coop_constant"),
    (CoopConstructInst, False, "coop_construct"),
    (ArithBinaryInst, True, "coop_arith_binary"),
    (ArithUnaryInst, True, "coop_arith_unary"),
    (CoopScaleInst, False, "coop_scale"),
    (CastInst, True, "coop_cast"),
    (CoopExtractInst, False, "coop_extract"),
    (CoopInsertInst, False, "coop_insert"),
    (CoopMulAddInst, False, "coop_mul_add"),
    (CoopReduceInst, False, "coop_reduce"),
)
"""The instructions CoopmatrixConversion converts: (instruction class, coopmatrix result only, method)."""
