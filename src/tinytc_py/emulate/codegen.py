"""Translate one parsed vISA program into a portable SPIR-V function (OpenCL environment).

Model. vISA names registers of the whole SIMD thread, and an OpenCL subgroup is one thread.
The program runs on a byte image of the registers it touches (roots at register boundaries,
aliases at their offsets). A per-lane operand ("rw" constraint) of a vector of n components
sits in it with component v of lane p at byte (v*S + p)*size for the subgroup size S; a
uniform one ("rw.u") is its single value at byte 0 (a pointer as its 64-bit address). The
image is in one of two places, chosen per kernel by the caller (rewrite.py), which hands the
emulation function a pointer to it:
- shared (Workgroup memory, one register file per subgroup): each lane writes its own input
  components, lane 0 runs the instructions and every lane reads its output components back;
  the steps are ordered by memory barriers and subgroup broadcasts the next step's accesses
  depend on.
- private (Function memory, one copy per work-item; for work-groups whose register files do
  not fit in local memory): every lane fills its copy with all lanes' input components
  (subgroup broadcasts) and, after a memory barrier ordering the lanes' earlier stores before
  the program's loads, runs the instructions on its copy and reads its own outputs; only
  lane 0 writes memory.
The instructions are one function per asm and storage, not inlined: the CPU JIT compiles them
once.

Instructions (semantics of the public vISA and Xe LSC specifications):
- mov/add/mul/shl/shr/asr/and/or/xor with regions `V(r,c)<v;w,h>`, destination `<h>`, GRF of
  64 bytes; sources are converted to the destination type.
- raw_sends to the LSC (SFID 15) with a 2D block load/store descriptor: payload dwords
  [0..1] base address, [2] surface width-1 (bytes), [3] height-1 (rows), [4] pitch-1 (bytes),
  [5] x (elements), [6] y (rows), [7] block width-1 | height-1 << 8 | array length-1 << 16.
  Elements outside the surface read as 0 and are not written. Loads support the VNNI
  transform (data size 1 or 2) and the transpose (data size 4 or 8); a load without
  destination is a prefetch (no effect on results). Block rows in the registers are padded to
  a power of two elements, blocks of an array to whole registers.
- dpas.<p1>.<p2>.<depth>.<repeat> (hf, bf, s8, u8): dst(r, c) = src0(r, c) + sum over depth d
  and the 4/size elements e of a dword of src1(d, c)[e] * src2(r, d)[e], accumulated in f32
  (floats) or i32 (integers).

The block shape of a message must be a constant (payload dword 7 written by an immediate
move): the translation is static, like the hardware's message decoding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..spirv.module import Block, Function, Module, iter_instructions
from ..spirv.tables import (
    Capability,
    FunctionControl,
    LoopControl,
    MemoryAccess,
    Op,
    Scope,
    StorageClass,
)
from .visa import TYPES, Instruction, Operand, Program, UnsupportedConstruct

GRF = 64
ALU = {"mov", "add", "mul", "shl", "shr", "asr", "and", "or", "xor"}
LSC_SFID = 15
LSC_LOAD_BLOCK2D, LSC_STORE_BLOCK2D = 3, 7
DATA_SIZES = {0: 1, 1: 2, 2: 4, 3: 8}
UNSIGNED = {1: "ub", 2: "uw", 4: "ud", 8: "uq"}
PRECISIONS = {"hf": ("hf", 2), "bf": ("bf", 2), "s8": ("b", 1), "u8": ("ub", 1)}


@dataclass(frozen=True)
class Signature:
    """An OpAsmINTEL's interface: SPIR-V result type, parameter types, constraint string."""

    ret: int
    params: tuple[int, ...]
    constraints: tuple[str, ...]


@dataclass
class Root:
    offset: int  # of its first byte in the register file
    size: int


@dataclass(frozen=True)
class RegisterFile:
    """Where the operands and variables of one asm sit in its register image, and the image's
    size in bytes (whole registers)."""

    roots: dict[str, Root]
    vtypes: dict[str, str]  # root -> vISA type
    shapes: tuple[tuple[str, int, int], ...]  # operand -> (vISA type, components, type id)
    size: int
    results: tuple[int, ...]  # the type ids of the outputs (the result or its members)


def register_file(mod: Module, prog: Program, sig: Signature, sgs: int) -> RegisterFile:
    """The register image of `prog` called with `sig` at subgroup size `sgs`: the operands
    $k first (a per-lane one holds sgs values of each component), then the declared
    variables, each at a register boundary."""
    types = _TypeReader(mod)
    ret = types.members(sig.ret) if sig.ret != mod.type_void() else []
    outputs = [c for c in sig.constraints if c.startswith("=")]
    inputs = [c for c in sig.constraints if not c.startswith("=")]
    if len(outputs) != len(ret) or len(inputs) != len(sig.params):
        raise UnsupportedConstruct("inline assembly whose constraints do not match its type")
    for c in sig.constraints:
        if c.lstrip("=") not in ("rw", "rw.u"):
            raise UnsupportedConstruct(f"inline assembly constraint {c!r}")
    shapes = tuple(types.shape(t) for t in [*ret, *sig.params])
    roots: dict[str, Root] = {}
    vtypes: dict[str, str] = {}
    size = 0

    def add(name: str, nbytes: int, vt: str) -> None:
        nonlocal size
        roots[name] = Root(size, nbytes)
        vtypes[name] = vt
        size += -(-max(nbytes, 1) // GRF) * GRF

    for k, (c, (vt, n, _)) in enumerate(zip(sig.constraints, shapes)):
        add(f"${k}", TYPES[vt][0] * n * (1 if c.endswith(".u") else sgs), vt)
    for name, decl in prog.decls.items():
        if decl.alias is None:
            add(name, TYPES[decl.type][0] * decl.num_elts, decl.type)
    return RegisterFile(roots, vtypes, shapes, size, tuple(ret))


class _TypeReader:
    """Reads the SPIR-V types of asm operands from a module."""

    def __init__(self, mod: Module):
        self.m = mod

    def members(self, ty: int) -> list[int]:
        key = self.key(ty)
        return list(key[1:]) if key[0] == Op.TypeStruct else [ty]

    def key(self, ty: int) -> tuple[int, ...]:
        """(opcode, operands...) of the type instruction defining `ty`."""
        for key, value in self.m._unique.items():
            if value == ty and isinstance(key[0], int):
                return key  # type: ignore[return-value]
        g = self.m.globals
        for op, off, n in iter_instructions(g):
            if op == Op.TypeStruct and g[off + 1] == ty:
                return (Op.TypeStruct, *g[off + 2 : off + n])
        raise UnsupportedConstruct(f"inline assembly operand type %{ty}")

    def shape(self, ty: int) -> tuple[str, int, int]:
        """(vISA type, components, component type id) of an operand type."""
        key = self.key(ty)
        if key[0] == Op.TypeVector:
            vt = self.shape(key[1])[0]
            return vt, key[2], key[1]
        if key[0] == Op.TypePointer:
            return "uq", 1, ty
        if key[0] == Op.TypeFloat:
            return {16: "hf", 32: "f", 64: "df"}[key[1]], 1, ty
        if key[0] == Op.TypeInt:
            return {8: "b", 16: "w", 32: "d", 64: "q"}[key[1]], 1, ty
        raise UnsupportedConstruct(f"inline assembly operand of type opcode {key[0]}")


def _next_pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


class Emitter:
    """Builds the function emulating one vISA program for subgroup size `sgs`, on a register
    image in Workgroup memory (shared by the subgroup) or, if `private`, in Function memory
    (a copy per work-item); `lane` is the SubgroupLocalInvocationId input. `build()` adds
    the function to `mod` and returns its id; `file` is register_file of the same program,
    signature and subgroup size."""

    def __init__(
        self,
        mod: Module,
        prog: Program,
        sig: Signature,
        file: RegisterFile,
        sgs: int,
        lane: int,
        private: bool,
    ):
        self.m, self.prog, self.sig, self.sgs = mod, prog, sig, sgs
        self.lane_input, self.private = lane, private
        self.lane = 0  # this lane's id as an i64 ordered after the program ran (build)
        self.writer = 0  # a bool: this lane writes memory (in the program function)
        m = mod
        self.u8, self.i16, self.i32, self.i64 = (m.type_int(w) for w in (8, 16, 32, 64))
        self.f32 = m.type_float(32)
        self.bool = m.type_bool()
        self.sc = StorageClass.Function if private else StorageClass.Workgroup
        self.p_u8 = m.type_pointer(self.sc, self.u8)
        self.file = file
        self.roots: dict[str, Root] = self.file.roots
        self.vtypes: dict[str, str] = self.file.vtypes  # root -> vISA type
        self.consts: dict[tuple[str, int], tuple[int, int]] = {}  # (root, byte) -> (size, value)
        self.bases: dict[str, int] = {}  # root -> pointer to its first byte, in self.fn
        fty = m.type_function(sig.ret, [self.p_u8, *sig.params])
        self.fn: Function = m.add_function(sig.ret, fty, control=FunctionControl.Inline)
        self.image = self.fn.add_parameter(self.p_u8)
        self.params = [self.fn.add_parameter(t) for t in sig.params]
        self.entry = self.fn.add_block()
        self.blk: Block = self.fn.add_block()

    # ---- types and constants -------------------------------------------------------------------

    def ty(self, vt: str) -> int:
        size, kind = TYPES[vt]
        if kind == "f":
            return self.m.type_float(size * 8)
        return self.m.type_int(size * 8)

    def c64(self, v: int) -> int:
        return self.m.constant(self.i64, v)

    def imm(self, v: int | float, vt: str) -> int:
        size, kind = TYPES[vt]
        if kind == "f":
            return self.m.constant(self.ty(vt), float(v))
        return self.m.constant(self.ty(vt), int(v) & ((1 << (8 * size)) - 1))

    def op(self, opcode: int, ty: int, *args: int) -> int:
        return self.blk.op(opcode, ty, *args)

    # ---- the register image --------------------------------------------------------------------

    def set_bases(self, regfile: int) -> None:
        """Pointers to every root's first byte from `regfile` (a pointer to the file) in the
        current function."""
        self.bases = {
            name: self.op(Op.InBoundsPtrAccessChain, self.p_u8, regfile, self.c64(r.offset))
            for name, r in self.roots.items()
        }

    def resolve(self, name: str) -> tuple[str, int]:
        """(root variable, byte offset) of a declared name, following aliases."""
        offset = 0
        seen = set()
        while name not in self.roots:
            decl = self.prog.decls.get(name)
            if decl is None or decl.alias is None or name in seen:
                raise UnsupportedConstruct(f"reference to undeclared variable {name!r}")
            seen.add(name)
            name, off = decl.alias
            offset += off
        return name, offset

    def vtype(self, name: str) -> str:
        return self.prog.decls[name].type if name in self.prog.decls else self.vtypes[name]

    def ptr(self, root: str, off: int | int, ty: int, dynamic: bool = False) -> int:
        """Pointer to a `ty` at byte `off` (a Python int, or an i64 id if dynamic)."""
        index = off if dynamic else self.c64(off)
        p = self.op(Op.InBoundsPtrAccessChain, self.p_u8, self.bases[root], index)
        return self.op(Op.Bitcast, self.m.type_pointer(self.sc, ty), p)

    def load(self, root: str, off: int, vt: str, dynamic: bool = False) -> int:
        ty = self.ty(vt)
        p = self.ptr(root, off, ty, dynamic)
        return self.op(Op.Load, ty, p, MemoryAccess.Aligned, TYPES[vt][0])

    def store(self, root: str, off: int, vt: str, value: int, dynamic: bool = False) -> None:
        p = self.ptr(root, off, self.ty(vt), dynamic)
        self.blk.emit(Op.Store, p, value, MemoryAccess.Aligned, TYPES[vt][0])
        if not dynamic:
            self.forget(root, off, TYPES[vt][0])

    def forget(self, root: str, off: int, size: int) -> None:
        for key in [k for k, (s, _) in self.consts.items() if k[0] == root]:
            if key[1] < off + size and off < key[1] + self.consts[key][0]:
                del self.consts[key]

    # ---- structured control flow ---------------------------------------------------------------

    def loop(self, count: int, body: Callable[[int], None]) -> None:
        """for (i = 0; i < count; ++i) body(i), i an i64 id."""
        m, pre = self.m, self.blk
        header = self.fn.add_block()
        cont_label, merge_label, nxt = m.new_id(), m.new_id(), m.new_id()
        pre.emit(Op.Branch, header.label)
        i = header.op(Op.Phi, self.i64, self.c64(0), pre.label, nxt, cont_label)
        cond = header.op(Op.SLessThan, self.bool, i, self.c64(count))
        header.emit(Op.LoopMerge, merge_label, cont_label, LoopControl.DontUnroll)
        first = self.fn.add_block()
        header.emit(Op.BranchConditional, cond, first.label, merge_label)
        self.blk = first
        body(i)
        self.blk.emit(Op.Branch, cont_label)
        cont = self.fn.add_block(cont_label)
        cont.op(Op.IAdd, self.i64, i, self.c64(1), result_id=nxt)
        cont.emit(Op.Branch, header.label)
        self.blk = self.fn.add_block(merge_label)

    def when(self, cond: int, body: Callable[[], None]) -> None:
        merge_label = self.m.new_id()
        then = self.fn.add_block()
        self.blk.emit(Op.SelectionMerge, merge_label, 0)
        self.blk.emit(Op.BranchConditional, cond, then.label, merge_label)
        self.blk = then
        body()
        self.blk.emit(Op.Branch, merge_label)
        self.blk = self.fn.add_block(merge_label)

    # ---- conversions ---------------------------------------------------------------------------

    def convert(self, value: int, src: str, dst: str) -> int:
        if src == dst:
            return value
        (ss, sk), (ds, dk) = TYPES[src], TYPES[dst]
        if sk == "bf":
            return self.convert(self.bf16_to_f32(value), "f", dst)
        if dk == "bf":
            return self.f32_to_bf16(self.convert(value, src, "f"))
        dty = self.ty(dst)
        if sk == "f" and dk == "f":
            return self.op(Op.FConvert, dty, value)
        if sk == "f":
            return self.op(Op.ConvertFToS if dk == "s" else Op.ConvertFToU, dty, value)
        if dk == "f":
            return self.op(Op.ConvertSToF if sk == "s" else Op.ConvertUToF, dty, value)
        if ss == ds:
            return value
        if ss > ds:
            return self.op(Op.UConvert, dty, value)
        return self.op(Op.SConvert if sk == "s" else Op.UConvert, dty, value)

    def bf16_to_f32(self, bits: int) -> int:
        wide = self.op(Op.UConvert, self.i32, bits)
        shifted = self.op(Op.ShiftLeftLogical, self.i32, wide, self.m.constant(self.i32, 16))
        return self.op(Op.Bitcast, self.f32, shifted)

    def f32_to_bf16(self, value: int) -> int:
        """Round to nearest even; NaN stays a quiet NaN."""
        c = lambda v: self.m.constant(self.i32, v)  # noqa: E731
        bits = self.op(Op.Bitcast, self.i32, value)
        odd = self.op(
            Op.BitwiseAnd, self.i32, self.op(Op.ShiftRightLogical, self.i32, bits, c(16)), c(1)
        )
        rounded = self.op(Op.IAdd, self.i32, bits, self.op(Op.IAdd, self.i32, odd, c(0x7FFF)))
        quiet = self.op(Op.BitwiseOr, self.i32, bits, c(0x400000))
        nan = self.op(Op.IsNan, self.bool, value)
        chosen = self.op(Op.Select, self.i32, nan, quiet, rounded)
        high = self.op(Op.ShiftRightLogical, self.i32, chosen, c(16))
        return self.op(Op.UConvert, self.i16, high)

    # ---- the function --------------------------------------------------------------------------

    def build(self) -> int:
        sig, i64 = self.sig, self.i64
        ret = self.file.results
        shapes = self.file.shapes
        regfile = self.image
        self.set_bases(regfile)
        operands = [(f"${len(ret) + k}", p) for k, p in enumerate(self.params)]
        in_regs = {n: not sig.constraints[int(n[1:])].endswith(".u") for n, _ in operands}
        lane32 = self.op(Op.Load, self.i32, self.lane_input)
        program = self._program()

        def store_uniforms() -> None:
            for name, param in operands:
                if not in_regs[name]:
                    self._store_uniform(name, param, shapes[int(name[1:])])

        if self.private:  # every lane runs the program on its copy of all lanes' inputs
            self.lane = self.op(Op.UConvert, i64, lane32)
            for name, param in operands:
                if in_regs[name]:
                    self._gather_all(name, param, shapes[int(name[1:])])
            store_uniforms()

            def call() -> None:
                self.op(Op.FunctionCall, self.m.type_void(), program, regfile)

            # the lanes' memory writes before any lane's reads in the program (the call
            # depends on a broadcast after the barrier, as lane 0's does in shared mode)
            first = self._sync(lane32, 0x308)
            self.when(self.op(Op.IEqual, self.bool, first, self.c64(0)), call)
            # lane 0's memory writes before any lane's later accesses
            self._barrier(0x208)
        else:  # lane 0 runs the program on the subgroup's registers
            lane = self.op(Op.IAdd, i64, self.op(Op.UConvert, i64, lane32), self._sync(lane32))
            for name, param in operands:
                if in_regs[name]:
                    self._gather(name, param, shapes[int(name[1:])], lane)
            ready = self.op(Op.IAdd, i64, lane, self._sync(lane32, 0x308))

            def run() -> None:
                store_uniforms()
                self.op(Op.FunctionCall, self.m.type_void(), program, regfile)

            self.when(self.op(Op.IEqual, self.bool, ready, self.c64(0)), run)
            self.lane = self.op(Op.IAdd, i64, lane, self._sync(lane32))
        if ret:
            parts = [
                self._scatter(f"${k}", t, shapes[k], sig.constraints[k].endswith(".u"))
                for k, t in enumerate(ret)
            ]
            result = (
                parts[0] if len(parts) == 1 else self.op(Op.CompositeConstruct, sig.ret, *parts)
            )
            self.blk.emit(Op.ReturnValue, result)
        else:
            self.blk.emit(Op.Return)
        self.entry.emit(Op.Branch, self.fn.blocks[1].label)
        return self.fn.id

    def _program(self) -> int:
        """The function running the vISA instructions on the register file it is handed. It is
        not inlined: the CPU JIT compiles it once rather than at every asm call (with the
        kernel's vectorization across lanes), which keeps the build of emulated kernels
        fast; it has no subgroup operations (those stay in the inlined caller). On private
        copies every lane runs it and only lane 0 writes memory."""
        outer = self.fn, self.entry, self.blk, self.bases
        void = self.m.type_void()
        self.fn = self.m.add_function(
            void, self.m.type_function(void, [self.p_u8]), control=FunctionControl.DontInline
        )
        regfile = self.fn.add_parameter(self.p_u8)
        self.entry = self.fn.add_block()
        self.blk = self.fn.add_block()
        self.set_bases(regfile)
        if self.private:
            lane = self.op(Op.Load, self.i32, self.lane_input)
            self.writer = self.op(Op.IEqual, self.bool, lane, self.m.constant(self.i32, 0))
        for inst in self.prog.code:
            self.instruction(inst)
        self.blk.emit(Op.Return)
        self.entry.emit(Op.Branch, self.fn.blocks[1].label)
        fn = self.fn.id
        self.fn, self.entry, self.blk, self.bases = outer
        return fn

    def _components(self, value: int, n: int, comp_ty: int) -> list[int]:
        if n == 1:
            return [value]
        return [self.op(Op.CompositeExtract, comp_ty, value, v) for v in range(n)]

    def _sync(self, lane32: int, semantics: int = 0x108) -> int:
        """An i64 zero that no lane has before every lane got here, with the accesses of the
        memory in `semantics` (default: workgroup memory) before it visible after it: a memory
        barrier and a subgroup broadcast (of lane 0's id) that the following accesses depend
        on. (Not OpControlBarrier with subgroup
        scope: with it, upstream's 48x16x32 GEMM, whose subgroups run different numbers of asm
        calls, gave wrong rows on the CPU runtime.)"""
        self._barrier(semantics)
        first = self._broadcast(lane32, self.m.constant(self.i32, 0))
        return self.op(Op.UConvert, self.i64, first)

    def _barrier(self, semantics: int) -> None:
        """A subgroup-scope memory barrier (acquire-release on the memory in `semantics`)."""
        c = lambda v: self.m.constant(self.i32, v)  # noqa: E731
        self.blk.emit(Op.MemoryBarrier, c(Scope.Subgroup), c(semantics))

    def _broadcast(self, value: int, lane: int) -> int:
        """`value` (an i32) of lane `lane` (a uniform i32)."""
        self.m.add_capability(Capability.Groups)
        scope = self.m.constant(self.i32, Scope.Subgroup)
        return self.op(Op.GroupBroadcast, self.i32, scope, value, lane)

    def _value_components(self, value: int, shape: tuple[str, int, int]) -> list[int]:
        vt, n, comp_ty = shape
        if comp_ty != self.ty(vt):  # a pointer
            value = self.op(Op.ConvertPtrToU, self.i64, value)
            comp_ty = self.i64
        return self._components(value, n, comp_ty)

    def _store_uniform(self, name: str, value: int, shape: tuple[str, int, int]) -> None:
        vt = shape[0]
        for v, comp in enumerate(self._value_components(value, shape)):
            self.store(name, v * TYPES[vt][0], vt, comp)

    def _gather(self, name: str, value: int, shape: tuple[str, int, int], lane: int) -> None:
        """Each lane writes its own components: component v of lane p at byte (v*S + p)*size
        of the subgroup's register file (no cross-lane operation)."""
        vt = shape[0]
        size = TYPES[vt][0]
        for v, comp in enumerate(self._value_components(value, shape)):
            slot = self.op(Op.IAdd, self.i64, lane, self.c64(v * self.sgs))
            self.store(
                name, self.op(Op.IMul, self.i64, slot, self.c64(size)), vt, comp, dynamic=True
            )

    def _gather_all(self, name: str, value: int, shape: tuple[str, int, int]) -> None:
        """Each lane writes every lane's components into its copy: component v of lane q at
        byte (v*S + q)*size, lane q's value by subgroup broadcast (in 32-bit pieces)."""
        vt = shape[0]
        size = TYPES[vt][0]
        ity = self.m.type_int(size * 8)
        pieces = []  # (component, byte offset in it, i32 piece)
        for v, comp in enumerate(self._value_components(value, shape)):
            bits = self.op(Op.Bitcast, ity, comp) if TYPES[vt][1] == "f" else comp
            if size < 4:
                pieces.append((v, 0, self.op(Op.UConvert, self.i32, bits)))
            elif size == 4:
                pieces.append((v, 0, bits))
            else:
                pair = self.op(Op.Bitcast, self.m.type_vector(self.i32, 2), bits)
                for h in range(2):
                    pieces.append((v, 4 * h, self.op(Op.CompositeExtract, self.i32, pair, h)))

        def copy(q: int) -> None:
            q32 = self.op(Op.UConvert, self.i32, q)
            for v, byte, piece in pieces:
                got = self._broadcast(piece, q32)
                slot = self.op(Op.IAdd, self.i64, q, self.c64(v * self.sgs))
                off = self.op(
                    Op.IAdd,
                    self.i64,
                    self.op(Op.IMul, self.i64, slot, self.c64(size)),
                    self.c64(byte),
                )
                if size < 4:
                    narrow = self.op(Op.UConvert, ity, got)
                    self.store(name, off, UNSIGNED[size], narrow, dynamic=True)
                else:
                    self.store(name, off, "ud", got, dynamic=True)

        self.loop(self.sgs, copy)

    def _scatter(self, name: str, ty: int, shape: tuple[str, int, int], uniform: bool) -> int:
        vt, n, _ = shape
        size = TYPES[vt][0]
        lane = self.lane
        comps = []
        for v in range(n):
            if uniform:
                comps.append(self.load(name, v * size, vt))
                continue
            off = self.op(
                Op.IMul,
                self.i64,
                self.op(Op.IAdd, self.i64, lane, self.c64(v * self.sgs)),
                self.c64(size),
            )
            comps.append(self.load(name, off, vt, dynamic=True))
        return comps[0] if n == 1 else self.op(Op.CompositeConstruct, ty, *comps)

    # ---- instructions --------------------------------------------------------------------------

    def instruction(self, inst: Instruction) -> None:
        if inst.op in ALU:
            self.alu(inst)
        elif inst.op == "raw_sends":
            self.raw_sends(inst)
        elif inst.op == "dpas":
            self.dpas(inst)
        else:
            raise UnsupportedConstruct(f"vISA instruction {inst.op!r} in {inst.text!r}")

    def element(self, o: Operand, i: int, dst: bool) -> tuple[str, int, str]:
        """(root, byte, vISA type) of channel i of a region operand."""
        root, base = self.resolve(o.var)
        vt = self.vtype(o.var)
        size = TYPES[vt][0]
        start = base + o.row * GRF + o.col * size
        if dst:
            return root, start + i * o.region[0] * size, vt
        vs, w, hs = o.region
        return root, start + ((i // w) * vs + (i % w) * hs) * size, vt

    def alu(self, inst: Instruction) -> None:
        dst, *srcs = inst.operands
        n_src = 1 if inst.op == "mov" else 2
        if len(srcs) != n_src or dst.imm is not None or len(dst.region) != 1:
            raise UnsupportedConstruct(f"operands of {inst.text!r}")
        for i in range(inst.exec_size):
            droot, dbyte, dvt = self.element(dst, i, True)
            values, known = [], []
            for s in srcs:
                if s.imm is not None:
                    assert s.type is not None
                    values.append(self.convert(self.imm(s.imm, s.type), s.type, dvt))
                    known.append(int(s.imm) if TYPES[s.type][1] in "su" else None)
                    continue
                if len(s.region) != 3:
                    raise UnsupportedConstruct(f"source region in {inst.text!r}")
                root, byte, vt = self.element(s, i, False)
                values.append(self.convert(self.load(root, byte, vt), vt, dvt))
                c = self.consts.get((root, byte))
                known.append(c[1] if c is not None and c[0] == TYPES[vt][0] else None)
            result = values[0] if inst.op == "mov" else self.arith(inst.op, dvt, *values)
            self.store(droot, dbyte, dvt, result)
            if inst.op == "mov" and known[0] is not None and TYPES[dvt][1] in "su":
                self.consts[(droot, dbyte)] = (
                    TYPES[dvt][0],
                    known[0] & ((1 << (8 * TYPES[dvt][0])) - 1),
                )

    def arith(self, op: str, vt: str, a: int, b: int) -> int:
        ty, kind = self.ty(vt), TYPES[vt][1]
        if kind in ("f", "bf"):
            if kind == "bf":
                raise UnsupportedConstruct(f"{op} on bf")
            table = {"add": Op.FAdd, "mul": Op.FMul}
        else:
            table = {
                "add": Op.IAdd, "mul": Op.IMul, "shl": Op.ShiftLeftLogical,
                "shr": Op.ShiftRightLogical, "asr": Op.ShiftRightArithmetic,
                "and": Op.BitwiseAnd, "or": Op.BitwiseOr, "xor": Op.BitwiseXor,
            }  # fmt: skip
        if op not in table:
            raise UnsupportedConstruct(f"{op} on type {vt}")
        return self.op(table[op], ty, a, b)

    # ---- LSC 2D block messages -----------------------------------------------------------------

    def raw_sends(self, inst: Instruction) -> None:
        mods = inst.modifiers
        if len(mods) != 4 or not all(x.isdigit() for x in mods) or len(inst.operands) != 5:
            raise UnsupportedConstruct(f"raw_sends form {inst.text!r}")
        sfid, _, n_src1, n_dst = (int(x) for x in mods)
        exdesc, desc, payload, src1, dst = inst.operands
        if sfid != LSC_SFID:
            raise UnsupportedConstruct(f"send to shared function {sfid} in {inst.text!r}")
        if desc.imm is None or exdesc.imm is None:
            raise UnsupportedConstruct(f"send with a descriptor in a register in {inst.text!r}")
        d = int(desc.imm)
        opcode, vnni, transpose = d & 0x3F, bool(d >> 7 & 1), bool(d >> 15 & 1)
        size = DATA_SIZES.get(d >> 9 & 7)
        if opcode not in (LSC_LOAD_BLOCK2D, LSC_STORE_BLOCK2D) or size is None:
            raise UnsupportedConstruct(
                f"LSC message (opcode {opcode}, data size field {d >> 9 & 7}) in {inst.text!r}"
            )
        proot, pbase = self.resolve(payload.var)
        pbase += payload.byte
        shape = self.consts.get((proot, pbase + 28))
        if shape is None or shape[0] != 4:
            raise UnsupportedConstruct(
                f"2D block message whose block shape (payload dword 7) is not a constant in {inst.text!r}"
            )
        w, h, arr = (shape[1] & 0xFF) + 1, (shape[1] >> 8 & 0xFF) + 1, (shape[1] >> 16 & 0xF) + 1
        if opcode == LSC_STORE_BLOCK2D and (vnni or transpose or arr != 1):
            raise UnsupportedConstruct(
                f"2D block store with transform or array length in {inst.text!r}"
            )
        if transpose and (vnni or size < 4 or arr != 1):
            raise UnsupportedConstruct(f"2D block transpose of data size {size} in {inst.text!r}")
        if vnni and size > 2:
            raise UnsupportedConstruct(f"VNNI transform of data size {size} in {inst.text!r}")
        layout = _Layout(size, w, h, arr, vnni, transpose)
        data = dst if opcode == LSC_LOAD_BLOCK2D else src1
        if data.var == "%null":
            if opcode == LSC_STORE_BLOCK2D:
                raise UnsupportedConstruct(f"2D block store without data in {inst.text!r}")
            return  # prefetch: a cache hint
        grfs = n_dst if opcode == LSC_LOAD_BLOCK2D else n_src1
        # register counts are 5-bit fields: 31 stands for a 32-register (2 KiB) block too
        if layout.bytes > (32 if grfs == 31 else grfs) * GRF:
            raise UnsupportedConstruct(
                f"2D block message of {layout.bytes} bytes with {grfs} registers in {inst.text!r}"
            )
        droot, dbase = self.resolve(data.var)
        dbase += data.byte
        surf = self._surface(proot, pbase)
        store = opcode == LSC_STORE_BLOCK2D
        self.loop(arr * h * w, lambda i: self._block_element(i, layout, surf, droot, dbase, store))

    def _surface(self, root: str, base: int) -> dict[str, int]:
        i64 = self.i64

        def field(k: int, signed: bool, plus_one: bool) -> int:
            v = self.load(root, base + 4 * k, "d" if signed else "ud")
            v = self.op(Op.SConvert if signed else Op.UConvert, i64, v)
            return self.op(Op.IAdd, i64, v, self.c64(1)) if plus_one else v

        return {
            "addr": self.load(root, base, "uq"),
            "width": field(2, False, True),
            "height": field(3, False, True),
            "pitch": field(4, False, True),
            "x": field(5, True, False),
            "y": field(6, True, False),
        }

    def _block_element(
        self, i, lay: _Layout, s: dict[str, int], root: str, base: int, store: bool
    ) -> None:
        i64, c = self.i64, self.c64
        op = self.op
        col = op(Op.SRem, i64, i, c(lay.w))
        row = op(Op.SRem, i64, op(Op.SDiv, i64, i, c(lay.w)), c(lay.h))
        a = op(Op.SDiv, i64, i, c(lay.w * lay.h))
        grf = op(Op.IAdd, i64, c(base), lay.byte(self, a, row, col))
        x = op(Op.IAdd, i64, s["x"], op(Op.IAdd, i64, op(Op.IMul, i64, a, c(lay.w)), col))
        y = op(Op.IAdd, i64, s["y"], row)
        xb = op(Op.IMul, i64, x, c(lay.size))
        inside = [
            op(Op.SGreaterThanEqual, self.bool, x, c(0)),
            op(Op.SLessThanEqual, self.bool, op(Op.IAdd, i64, xb, c(lay.size)), s["width"]),
            op(Op.SGreaterThanEqual, self.bool, y, c(0)),
            op(Op.SLessThan, self.bool, y, s["height"]),
        ]
        cond = inside[0]
        for more in inside[1:]:
            cond = op(Op.LogicalAnd, self.bool, cond, more)
        vt = UNSIGNED[lay.size]
        ety = self.ty(vt)
        gptr = self.m.type_pointer(StorageClass.CrossWorkgroup, ety)
        addr = op(Op.IAdd, i64, s["addr"], op(Op.IAdd, i64, op(Op.IMul, i64, y, s["pitch"]), xb))

        def memory() -> int:
            return self.blk.op(Op.ConvertUToPtr, gptr, addr)

        if store:

            def write() -> None:
                value = self.load(root, grf, vt, dynamic=True)
                self.blk.emit(Op.Store, memory(), value, MemoryAccess.Aligned, lay.size)

            if self.private:
                cond = op(Op.LogicalAnd, self.bool, cond, self.writer)
            self.when(cond, write)
            return
        self.store(root, grf, vt, self.m.constant(ety, 0), dynamic=True)

        def read() -> None:
            value = self.blk.op(Op.Load, ety, memory(), MemoryAccess.Aligned, lay.size)
            self.store(root, grf, vt, value, dynamic=True)

        self.when(cond, read)
        self.forget(root, 0, 1 << 30)

    # ---- dpas ----------------------------------------------------------------------------------

    def dpas(self, inst: Instruction) -> None:
        mods = inst.modifiers
        if len(mods) != 4 or mods[0] not in PRECISIONS or mods[1] not in PRECISIONS:
            raise UnsupportedConstruct(f"dpas precisions in {inst.text!r}")
        (t1, s1), (t2, s2) = PRECISIONS[mods[0]], PRECISIONS[mods[1]]
        if s1 != s2:
            raise UnsupportedConstruct(f"dpas with mixed operand sizes in {inst.text!r}")
        depth, repeat, es = int(mods[2]), int(mods[3]), inst.exec_size
        omega = 4 // s1
        dst, src0, src1, src2 = inst.operands
        floating = TYPES[t1][1] in ("f", "bf")
        acc_t = "f" if floating else "d"
        ops = {
            op: (self.resolve(o.var), self.vtype(o.var), self._start(o))
            for op, o in (("dst", dst), ("src1", src1), ("src2", src2))
        }
        zero = src0.var == "%null"
        s0 = None if zero else (self.resolve(src0.var), self.vtype(src0.var), self._start(src0))
        (droot, dbase), dvt, dstart = ops["dst"]
        (r1, b1), _, st1 = ops["src1"]
        (r2, b2), _, st2 = ops["src2"]
        add = Op.FAdd if floating else Op.IAdd
        mul = Op.FMul if floating else Op.IMul

        acc_ty = self.ty(acc_t)
        acc_var = self.entry.op(
            Op.Variable, self.m.type_pointer(StorageClass.Function, acc_ty), StorageClass.Function
        )

        def channel(i: int) -> None:  # dst(r, ch) for i = r*es + ch
            i64, c, op = self.i64, self.c64, self.op
            r = op(Op.SDiv, i64, i, c(es))
            ch = op(Op.SRem, i64, i, c(es))
            if s0 is None:
                acc = self.m.constant(acc_ty, 0.0 if floating else 0)
            else:
                (r0, b0), vt0, st0 = s0
                off0 = op(Op.IAdd, i64, c(b0 + st0), op(Op.IMul, i64, i, c(TYPES[vt0][0])))
                acc = self.convert(self.load(r0, off0, vt0, dynamic=True), vt0, acc_t)
            self.blk.emit(Op.Store, acc_var, acc)
            a_row = op(Op.IAdd, i64, c(b1 + st1), op(Op.IMul, i64, ch, c(4)))
            b_row = op(Op.IAdd, i64, c(b2 + st2), op(Op.IMul, i64, r, c(4 * depth)))

            def step(k: int) -> None:  # one dword of the systolic depth: omega products
                a_k = self.op(Op.IAdd, i64, a_row, self.op(Op.IMul, i64, k, c(es * 4)))
                b_k = self.op(Op.IAdd, i64, b_row, self.op(Op.IMul, i64, k, c(4)))
                acc = self.op(Op.Load, acc_ty, acc_var)
                for e in range(omega):
                    a_off = self.op(Op.IAdd, i64, a_k, c(e * s1))
                    b_off = self.op(Op.IAdd, i64, b_k, c(e * s1))
                    av = self.convert(self.load(r1, a_off, t1, dynamic=True), t1, acc_t)
                    bv = self.convert(self.load(r2, b_off, t2, dynamic=True), t2, acc_t)
                    acc = self.op(add, acc_ty, acc, self.op(mul, acc_ty, av, bv))
                self.blk.emit(Op.Store, acc_var, acc)

            self.loop(depth, step)
            acc = self.op(Op.Load, acc_ty, acc_var)
            doff = self.op(
                Op.IAdd, i64, c(dbase + dstart), self.op(Op.IMul, i64, i, c(TYPES[dvt][0]))
            )
            self.store(droot, doff, dvt, self.convert(acc, acc_t, dvt), dynamic=True)

        self.loop(repeat * es, channel)
        self.forget(droot, 0, 1 << 30)

    def _start(self, o: Operand) -> int:
        if o.raw:
            return o.byte
        return o.row * GRF + o.col * TYPES[self.vtype(o.var)][0]


@dataclass(frozen=True)
class _Layout:
    """Where element (array block a, row, col) of a 2D block message sits in the registers."""

    size: int
    w: int
    h: int
    arr: int
    vnni: bool
    transpose: bool

    @property
    def row_elems(self) -> int:
        return _next_pow2(self.w)

    @property
    def block_bytes(self) -> int:
        if self.transpose:
            return -(-self.w * _next_pow2(self.h) * self.size // GRF) * GRF
        h = self.h
        if self.vnni:
            om = 4 // self.size
            h = -(-h // om) * om
        return -(-h * self.row_elems * self.size // GRF) * GRF

    @property
    def bytes(self) -> int:
        return self.arr * self.block_bytes

    def byte(self, e: Emitter, a: int, row: int, col: int) -> int:
        i64, c, op = e.i64, e.c64, e.op
        blk = op(Op.IMul, i64, a, c(self.block_bytes))
        if self.transpose:
            inner = op(Op.IAdd, i64, op(Op.IMul, i64, col, c(_next_pow2(self.h))), row)
            return op(Op.IAdd, i64, blk, op(Op.IMul, i64, inner, c(self.size)))
        if self.vnni:
            om = 4 // self.size
            group = op(Op.SDiv, i64, row, c(om))
            sub = op(Op.SRem, i64, row, c(om))
            dword = op(Op.IAdd, i64, op(Op.IMul, i64, group, c(self.row_elems)), col)
            inner = op(
                Op.IAdd, i64, op(Op.IMul, i64, dword, c(4)), op(Op.IMul, i64, sub, c(self.size))
            )
            return op(Op.IAdd, i64, blk, inner)
        inner = op(Op.IAdd, i64, op(Op.IMul, i64, row, c(self.row_elems)), col)
        return op(Op.IAdd, i64, blk, op(Op.IMul, i64, inner, c(self.size)))


__all__ = ["Emitter", "RegisterFile", "Signature", "register_file"]
