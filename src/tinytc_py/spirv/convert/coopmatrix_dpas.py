"""Cooperative matrices on the DPAS/XMX path of PVC and BMG (docs/design.md §B3.5, §B7.3).

Cores with a matrix extension run 2D block loads/stores/prefetches and `dpas` as inline vISA
(SPV_INTEL_inline_assembly): one OpAsmINTEL per distinct (operation, types, shape), called with
OpAsmCallINTEL. Each op falls back to the block/generic path (coopmatrix.py,
coopmatrix_memory.py) when a precondition fails (§B3.2), so this class only adds fast paths.

Register image. The data a message or a dpas reads and writes must sit in registers exactly as
the generic layout (analysis/coopmatrix_layout.py) numbers the components, so the DPAS path and
the generic path can hand values to each other. With S = 16 and rows >= 16, a SPIR-V vector of
components is laid out component-major: component v of lane p sits at byte `(v*16 + p)*size`.
matrix_a of a 1- or 2-byte type is passed VNNI-packed: the ω = 4/size consecutive components
(consecutive K-columns) of a dword share one i32, channel v % ω, so its byte is
`(v/ω*16 + p)*4 + (v % ω)*size`. That is the GRF image the hardware wants: the accumulator as
`m + n*16 + bm*16*N`, A VNNI-packed along K, B with K_dpas consecutive rows per column.

Pieces. The converter keeps a coopmatrix as a list of V scalar ids. SPIR-V vectors hold at
most 16 components (spirv-val rejects longer ones, unlike upstream's, §B10 item 2), so a value
goes to the asm as several vectors of 16 (or 8) components, one asm operand each, and a result
comes back as a struct of such vectors. Every message and every dpas operand is placed inside
one piece; the message geometry is chosen so that this holds, and the register image of every
message is checked element by element against the layout above before the path is taken.

2D block messages (`raw_sends.15`, LSC 2D block): an 8-dword payload [base address (2 dwords),
width-1, height-1, pitch-1 (bytes), x, y, (array_len-1)<<16 | (height-1)<<8 | (width-1)], where
"width" runs along the memory-contiguous mode (our rows) and x is in message elements. The
hardware clamps to the surface and returns zeros outside, so the checked flags need no code.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from ...analysis.coopmatrix_layout import CoopLayout
from ...analysis.gcd import memref_gcd, value_gcd
from ...ir.enums import AddressSpace, MatrixUse, Transpose
from ...ir.inst import Inst
from ...ir.ops.arith import ConstantInst
from ...ir.ops.coopmatrix import CoopLoadInst, CoopStoreInst
from ...ir.types import DYNAMIC, CoopmatrixType, MemrefType
from ...ir.values import Value
from ...target.core_info import MatrixExt
from ..tables import Decoration, Op
from .base import MemrefDV
from .coopmatrix import CoopmatrixConversion
from .visa import block2d_asm

GRF = 64  # register size in bytes on PVC and BMG
EXEC = 16  # dpas execution size = the required subgroup size
SDEPTH = 8  # systolic depth: dwords of K per dpas
RCOUNT = 8  # repeat count: accumulator columns per dpas
ASM_TARGET = "spirv64-unknown-unknown"
#: vISA type names, and dpas precision names of the multiplicands
VISA_TYPE = {"i8": "b", "i16": "w", "i32": "d", "f16": "hf", "bf16": "bf", "f32": "f"}
PRECISION = {"i8": "s8", "f16": "hf", "bf16": "bf"}
_SIZE_LOG2 = {1: 0, 2: 1, 4: 2, 8: 3}


@dataclass(frozen=True)
class Block2d:
    """Geometry of the 2D block messages moving one matrix. `width` elements along the
    memory-contiguous mode times `height`, `arr` blocks side by side along the width; the
    matrix takes `x_msgs` x `y_msgs` messages. `size` is the message element size (4 for the
    d32 transpose of matrix_a, where `omega` matrix elements share a dword)."""

    size: int
    width: int
    height: int
    arr: int
    x_msgs: int
    y_msgs: int
    vnni: bool = False
    transpose: bool = False
    omega: int = 1

    @property
    def msg_bytes(self) -> int:
        return self.arr * self.width * self.height * self.size

    @property
    def grfs(self) -> int:
        return -(-self.msg_bytes // GRF)

    @property
    def shape_dword(self) -> int:
        """Payload dword 7."""
        return (self.arr - 1) << 16 | (self.height - 1) << 8 | (self.width - 1)

    @property
    def shift(self) -> int:
        """x = pos0 >> shift: pos0 counts matrix elements, x message elements."""
        return _SIZE_LOG2[self.omega]

    def origin(self, i: int, j: int) -> tuple[int, int]:
        """(matrix row, matrix col) where message (i, j) starts."""
        if self.transpose:
            return j * self.height, i * self.width * self.omega
        return i * self.arr * self.width, j * self.height

    def extent(self) -> tuple[int, int]:
        """(rows, cols) of the matrix that message (0, 0) covers."""
        if self.transpose:
            return self.height, self.width * self.omega
        return self.arr * self.width, self.height

    def elements(self) -> tuple[list[int], list[int], list[int]]:
        """(bytes in the message's registers, matrix rows, matrix cols) of the elements of
        message (0, 0), as three parallel lists; message (i, j) holds the same bytes of the
        elements shifted by `origin(i, j)`."""
        w, h, s = self.width, self.height, self.size
        byte_at: list[int] = []
        row_at: list[int] = []
        col_at: list[int] = []
        if self.transpose:  # d32 transpose: dword column r of memory row c lands in row r
            omega = self.omega
            es = s // omega
            for c in range(h):
                for r in range(w):
                    for sub in range(omega):
                        byte_at.append((r * h + c) * 4 + sub * es)
                        row_at.append(c)
                        col_at.append(r * omega + sub)
            return byte_at, row_at, col_at
        om = 4 // s if self.vnni else 1
        for a in range(self.arr):
            for c in range(h):
                for r in range(w):
                    if self.vnni:
                        byte_at.append(((a * (h // om) + c // om) * w + r) * 4 + c % om * s)
                    else:
                        byte_at.append(((a * h + c) * w + r) * s)
                    row_at.append(a * w + r)
                    col_at.append(c)
        return byte_at, row_at, col_at


def load_descriptor(cfg: Block2d) -> int:
    """LSC 2D block load: opcode 3, VNNI bit 7, data size bits 9.., transpose bit 15,
    response length (GRFs) bits 20..24, message length 1 bit 25."""
    return (
        3
        | cfg.vnni << 7
        | _SIZE_LOG2[cfg.size] << 9
        | cfg.transpose << 15
        | min(31, cfg.grfs) << 20
        | 1 << 25
    )


def store_descriptor(cfg: Block2d) -> int:
    """LSC 2D block store: opcode 7; the data travel as the second source."""
    return 7 | _SIZE_LOG2[cfg.size] << 9 | 1 << 25


def prefetch_descriptor(cfg: Block2d, cache_level: int) -> int:
    """A 2D block load without response; cache control (bits 17..19) 2 for the cache closest
    to the core (level 0 in the IR is L1: skip it, keep L3), else 4."""
    return 3 | _SIZE_LOG2[cfg.size] << 9 | (2 if cache_level == 1 else 4) << 17 | 1 << 25


def _fit(n: int, limit: int) -> int:
    """The largest power of two <= limit that divides n (1 if none)."""
    k = 1
    while 2 * k <= limit and n % (2 * k) == 0:
        k *= 2
    return k


def load_config(
    size: int, rows: int, cols: int, use: MatrixUse, transpose: bool, piece_bytes: int
) -> Block2d | None:
    """Messages for a load of a rows x cols matrix (§B3.5 block geometry); each message must fit
    into one piece of `piece_bytes`. None if the shape cannot be tiled."""
    if transpose:  # only matrix_a: d32 transpose of dwords of ω = 4/size K-neighbours
        omega = 4 // size
        kd = cols // omega
        w, h = min(kd, 8), min(rows, EXEC)
        if cols % omega or kd % w or rows % h:
            return None
        return Block2d(4, w, h, 1, kd // w, rows // h, transpose=True, omega=omega)
    max_w = (4 // size) * SDEPTH if use is MatrixUse.b else EXEC
    w = min(rows, max_w)
    h = cols if cols <= 32 else _fit(cols, 32)
    vnni = use is MatrixUse.a
    om = 4 // size if vnni else 1
    if rows % w or cols % h or h % om:
        return None
    arr = _fit(rows // w, GRF // (w * size)) if h == cols else 1
    while arr > 1 and arr * w * h * size > piece_bytes:
        arr //= 2
    fits = [c for c in range(h, 0, -om) if cols % c == 0 and arr * w * c * size <= piece_bytes]
    if not fits:
        return None
    h = fits[0]
    return Block2d(size, w, h, arr, rows // (w * arr), cols // h, vnni=vnni)


def store_config(size: int, rows: int, cols: int) -> Block2d | None:
    """Messages for a store: at most 16 rows (64 bytes) by 8 columns each."""
    w, h = min(rows, EXEC, GRF // size), min(cols, RCOUNT)
    if rows % w or cols % h:
        return None
    return Block2d(size, w, h, 1, rows // w, cols // h)


# 2D block prefetch messages one prefetch instruction may emit: a prefetch is a hint, so a
# region needing more (huge rows x cols, which would unroll into millions of messages) is not
# prefetched at all rather than compiled for minutes.
MAX_PREFETCH_MESSAGES = 64


def prefetch_config(size: int, rows: int, cols: int) -> Block2d | None:
    w, h = min(rows, EXEC), min(cols, 32)
    if rows % w or cols % h or (rows // w) * (cols // h) > MAX_PREFETCH_MESSAGES:
        return None
    arr = _fit(rows // w, GRF // (w * size)) if h == cols else 1
    return Block2d(size, w, h, arr, rows // (w * arr), cols // h)


@dataclass(frozen=True)
class Pieces:
    """How the components of one coopmatrix value travel to and from the asm: `count` vectors
    of `per` units; a unit is one component, or ω packed components of a matrix_a dword."""

    unit: int  # bytes of a unit per lane
    omega: int  # components per unit
    per: int
    count: int

    @property
    def piece_bytes(self) -> int:
        return self.per * EXEC * self.unit

    def place(self, offset: int, length: int) -> tuple[int, int] | None:
        """(piece, byte offset in it) of the register range [offset, offset+length); None if
        it is not GRF-aligned or crosses a piece."""
        k, off = divmod(offset, self.piece_bytes)
        if offset % GRF or off + length > self.piece_bytes:
            return None
        return k, off


@lru_cache(maxsize=256)
def plan_messages(
    cfg: Block2d, lay: CoopLayout, pc: Pieces, size: int
) -> tuple[tuple[int, int, int, int], ...] | None:
    """(x offset, y offset, piece, byte offset) of every message, after checking that each
    message's register image is exactly the layout's; None if it is not.

    The check compares, element by element, the byte each element has in the register image
    of the whole value (`_image_byte`, from the layout's owner arithmetic) with its byte in the
    message; the message fits iff the difference is the same for all its elements. That is
    one step per matrix element, and the answer depends only on these immutable values, which
    the loads and stores of a program (and of the programs of a process) repeat, so it is
    computed once per distinct question.

    Every message lies inside the M x N matrix (the Block2d geometries tile it; asserted
    below), so each element checked is one of the value's.
    """
    byte_at, row_at, col_at = cfg.elements()
    height, width = cfg.extent()
    omega, unit, count = pc.omega, pc.unit, len(byte_at)
    plan: list[tuple[int, int, int, int]] = []
    for i in range(cfg.x_msgs):
        for j in range(cfg.y_msgs):
            row0, col0 = cfg.origin(i, j)
            assert row0 + height <= lay.rows and col0 + width <= lay.cols, "message outside matrix"
            base = _image_byte(lay, row0 + row_at[0], col0 + col_at[0], omega, unit, size)
            base -= byte_at[0]
            for e in range(1, count):
                at = _image_byte(lay, row0 + row_at[e], col0 + col_at[e], omega, unit, size)
                if at - byte_at[e] != base:
                    return None
            where = pc.place(base, cfg.msg_bytes)
            if where is None:
                return None
            plan.append((i * cfg.width * cfg.arr, j * cfg.height, where[0], where[1]))
    return tuple(plan)


def _image_byte(lay: CoopLayout, row: int, col: int, omega: int, unit: int, size: int) -> int:
    """Byte of element (row, col) in the register image of a whole value (module docstring):
    component v of lane p at unit v/ω*16 + p, channel v % ω."""
    lane, v = lay.owner(row, col)
    return (v // omega * EXEC + lane) * unit + v % omega * size


def _names() -> Iterator[str]:
    n = 0
    while True:
        yield f"tinytc_{n}"
        n += 1


class CoopmatrixDpasConversion(CoopmatrixConversion):
    """The DPAS path (docs/design.md §B3.2 (1)): tried first, falls back to the inherited paths."""

    def __init__(self, core_info) -> None:
        super().__init__(core_info)
        self._asm_ids: dict[tuple, int] = {}  # (operation, types, shape) -> OpAsmINTEL id
        self._asm_names = _names()  # vISA temporaries need module-unique names
        # the matrix table's answers per coopmatrix type / (A, B, C, D) types: a GEMM asks
        # them for each of its loads, stores and mul_adds, and the table's own lookup is a
        # scan over its rows
        self._dpas_types: dict[CoopmatrixType, bool] = {}
        self._dpas_gemms: dict[tuple[CoopmatrixType, ...], bool] = {}

    # ---- preconditions --------------------------------------------------------------------------

    def dpas_matrix(self) -> MatrixExt | None:
        m = self.core_info.matrix
        return m if m is not None and self.sgs == m.required_subgroup_size == EXEC else None

    def dpas_has_type(self, m: MatrixExt, ct: CoopmatrixType) -> bool:
        """Whether `ct` may be an operand of some row of the matrix table."""
        got = self._dpas_types.get(ct)
        if got is None:
            got = m.have_type(ct.component.kind.text, ct.rows, ct.cols, ct.use.name)
            self._dpas_types[ct] = got
        return got

    def dpas_has_gemm(
        self,
        m: MatrixExt,
        at: CoopmatrixType,
        bt: CoopmatrixType,
        ct: CoopmatrixType,
        rt: CoopmatrixType,
    ) -> bool:
        """Whether the matrix table has D = A*B + C for these types (C's and D's precision)."""
        key = (at, bt, ct, rt)
        got = self._dpas_gemms.get(key)
        if got is None:
            a, b = at.component.kind.text, bt.component.kind.text
            shape = (at.rows, bt.cols, at.cols)
            got = m.have_gemm(a, b, ct.component.kind.text, *shape) and m.have_gemm(
                a, b, rt.component.kind.text, *shape
            )
            self._dpas_gemms[key] = got
        return got

    def dpas_block_io_ok(self, inst: Inst, operand: Value, size: int) -> bool:
        """check_2d_block_io (§B3.5): global memory, 64-byte base, pos0 on 4 bytes, unit stride
        in mode 0, pitch alignment of the core, width a multiple of 4 bytes."""
        m = self.core_info.matrix
        mt = operand.type
        assert m is not None and isinstance(mt, MemrefType)
        known = memref_gcd(operand, self.core_info.default_alignment)
        pitch = mt.stride[1]
        return (
            mt.addrspace is AddressSpace.global_
            and known.offset * size % m.block_io_base_alignment == 0
            and value_gcd(inst.operand("pos0")) * size % m.block_io_pos0_alignment == 0
            and mt.stride[0] == 1
            and known.stride[1] * size % m.block_io_pitch_alignment == 0
            and known.shape[0] * size % m.block_io_width_alignment == 0
            and (pitch == DYNAMIC or m.block_io_min_pitch <= pitch * size <= m.block_io_max_pitch)
        )

    def dpas_pieces(self, ct: CoopmatrixType, inst: Inst) -> Pieces | None:
        size = ct.component.size
        packed = ct.use is MatrixUse.a and size < 4
        omega = 4 // size if packed else 1
        units = self.layout_of(ct, inst).V // omega
        per = 16 if units % 16 == 0 else 8
        if units % per:
            return None
        return Pieces(4 if packed else size, omega, per, units // per)

    # ---- packing --------------------------------------------------------------------------------

    def dpas_unit_ty(self, ct: CoopmatrixType, pc: Pieces) -> int:
        return self.i32() if pc.omega > 1 else self.ty(ct.component)

    def dpas_piece_ty(self, ct: CoopmatrixType, pc: Pieces) -> int:
        return self.mod.type_vector(self.dpas_unit_ty(ct, pc), pc.per)

    def dpas_result_ty(self, ct: CoopmatrixType, pc: Pieces) -> int:
        vty = self.dpas_piece_ty(ct, pc)
        return vty if pc.count == 1 else self.mod.unique(Op.TypeStruct, *[vty] * pc.count)

    def dpas_pack(self, ct: CoopmatrixType, pc: Pieces, vals: list[int]) -> list[int]:
        """The asm operands (vectors) of a coopmatrix value."""
        blk, comp = self.block, self.ty(ct.component)
        units = vals
        if pc.omega > 1:
            wty = self.mod.type_vector(comp, pc.omega)
            units = [
                blk.op(
                    Op.Bitcast,
                    self.i32(),
                    blk.op(Op.CompositeConstruct, wty, *vals[k : k + pc.omega]),
                )
                for k in range(0, len(vals), pc.omega)
            ]
        vty = self.dpas_piece_ty(ct, pc)
        return [
            blk.op(Op.CompositeConstruct, vty, *units[k : k + pc.per])
            for k in range(0, len(units), pc.per)
        ]

    def dpas_unpack(self, ct: CoopmatrixType, pc: Pieces, res: int) -> list[int]:
        """The component ids of an asm result (a vector, or a struct of vectors)."""
        blk = self.block
        uty = self.dpas_unit_ty(ct, pc)
        idx = [[u] for u in range(pc.per)]
        if pc.count > 1:
            idx = [[k, u] for k in range(pc.count) for u in range(pc.per)]
        units = [blk.op(Op.CompositeExtract, uty, res, *ix) for ix in idx]
        if pc.omega == 1:
            return units
        comp = self.ty(ct.component)
        wty = self.mod.type_vector(comp, pc.omega)
        out = []
        for u in units:
            w = blk.op(Op.Bitcast, wty, u)
            out += [blk.op(Op.CompositeExtract, comp, w, c) for c in range(pc.omega)]
        return out

    def dpas_asm(self, key: tuple, ret: int, params: list[int], code: str, constraints: str) -> int:
        """The OpAsmINTEL for `key`, created once per module."""
        asm = self._asm_ids.get(key)
        if asm is None:
            m = self.mod
            fty = m.type_function(ret, params)
            target = m.unique(Op.AsmTargetINTEL, ASM_TARGET)
            asm = self._asm_ids[key] = m.declare(Op.AsmINTEL, ret, fty, target, code, constraints)
        return asm

    def dpas_surface(self, inst: Inst, d: MemrefDV, size: int) -> list[int]:
        """Pointer, width bytes, height, pitch bytes, pos0, pos1 (i32 but the pointer).

        Straight-line code rather than nested helpers: in the compiled module, nested
        functions that call each other make a reference cycle through the converter, which
        then outlives the conversion until the garbage collector's next scan."""
        blk, i32, i64 = self.block, self.i32(), self.i64()
        pos0 = self.val(inst.operand("pos0"), inst)
        pos1 = self.val(inst.operand("pos1"), inst)
        width = blk.op1(Op.SConvert, i32, blk.op2(Op.IMul, i64, d.shape[0], self.c64(size)))
        height = blk.op1(Op.SConvert, i32, d.shape[1])
        pitch = blk.op1(Op.SConvert, i32, blk.op2(Op.IMul, i64, d.stride[1], self.c64(size)))
        x = blk.op1(Op.SConvert, i32, pos0)
        return [d.ptr, width, height, pitch, x, blk.op1(Op.SConvert, i32, pos1)]

    def dpas_surface_types(self, d: MemrefDV) -> list[int]:
        return [self.memref_ptr_ty(d.ty)] + [self.i32()] * 5

    # ---- instructions ---------------------------------------------------------------------------

    def coop_load(self, inst: CoopLoadInst) -> None:
        res = None if inst.atomic else self.dpas_load(inst)
        if res is None:
            super().coop_load(inst)
        else:
            self.set(inst, res)

    def dpas_load(self, inst: Inst) -> list[int] | None:
        ct: CoopmatrixType = inst.results[0].type
        m, elem = self.dpas_matrix(), ct.component
        mv = inst.operand("operand")
        transpose = inst.props["tA"] is Transpose.t
        if (
            m is None
            or not self.dpas_has_type(m, ct)
            or (transpose and ct.use is not MatrixUse.a)
            or not self.dpas_block_io_ok(inst, mv, elem.size)
        ):
            return None
        pc = self.dpas_pieces(ct, inst)
        if pc is None:
            return None
        cfg = load_config(elem.size, ct.rows, ct.cols, ct.use, transpose, pc.piece_bytes)
        lay = self.layout_of(ct, inst)
        plan = plan_messages(cfg, lay, pc, elem.size) if cfg is not None else None
        if cfg is None or plan is None:
            return None
        d = self.dv(mv, inst)
        ret = self.dpas_result_ty(ct, pc)
        params = self.dpas_surface_types(d)
        key = ("load", ct, transpose, params[0])
        if key not in self._asm_ids:
            code = block2d_asm(
                "load", cfg, plan, pc.count, 0, self._asm_names, load_descriptor(cfg)
            )
            cons = ",".join(["=rw"] * pc.count + ["rw.u"] * 6)
            self.dpas_asm(key, ret, params, code, cons)
        res = self.block.op(
            Op.AsmCallINTEL, ret, self._asm_ids[key], *self.dpas_surface(inst, d, elem.size)
        )
        return self.dpas_unpack(ct, pc, res)

    def coop_store(self, inst: CoopStoreInst) -> None:
        if inst.atomic or not self.dpas_store(inst):
            super().coop_store(inst)

    def dpas_store(self, inst: Inst) -> bool:
        ct: CoopmatrixType = inst.operand("val").type
        m, elem = self.dpas_matrix(), ct.component
        mv = inst.operand("operand")
        if (
            m is None
            or inst.props["tA"] is not Transpose.n
            or not self.dpas_has_type(m, ct)
            or not self.dpas_block_io_ok(inst, mv, elem.size)
        ):
            return False
        pc = self.dpas_pieces(ct, inst)
        cfg = store_config(elem.size, ct.rows, ct.cols)
        if pc is None or cfg is None:
            return False
        plan = plan_messages(cfg, self.layout_of(ct, inst), pc, elem.size)
        if plan is None:
            return False
        d = self.dv(mv, inst)
        vty = self.dpas_piece_ty(ct, pc)
        params = [vty] * pc.count + self.dpas_surface_types(d)
        key = ("store", ct, params[-6])
        if key not in self._asm_ids:
            code = block2d_asm(
                "store", cfg, plan, pc.count, 0, self._asm_names, store_descriptor(cfg)
            )
            cons = ",".join(["rw"] * pc.count + ["rw.u"] * 6)
            asm = self.dpas_asm(key, self.mod.type_void(), params, code, cons)
            self.mod.decorate(asm, Decoration.SideEffectsINTEL)
        args = self.dpas_pack(ct, pc, self.cm(inst.operand("val"), inst))
        args += self.dpas_surface(inst, d, elem.size)
        self.block.op(Op.AsmCallINTEL, self.mod.type_void(), self._asm_ids[key], *args)
        return True

    def coop_prefetch(self, inst: Inst) -> None:
        """2D prefetch on the DPAS path; a no-op elsewhere (docs/design.md §B3.5)."""
        mv = inst.operand("operand")
        size = mv.type.element.size
        rows, cols, level = (inst.props[k] for k in ("rows", "cols", "cache_level"))
        cfg = prefetch_config(size, rows, cols) if size <= 4 else None
        if self.dpas_matrix() is None or cfg is None or not self.dpas_block_io_ok(inst, mv, size):
            super().coop_prefetch(inst)
            return
        d = self.dv(mv, inst)
        params = self.dpas_surface_types(d)
        key = ("prefetch", size, rows, cols, level, params[0])
        if key not in self._asm_ids:
            plan = [
                (i * cfg.width * cfg.arr, j * cfg.height, 0, 0)
                for i in range(cfg.x_msgs)
                for j in range(cfg.y_msgs)
            ]
            desc = prefetch_descriptor(cfg, level)
            code = block2d_asm("prefetch", cfg, plan, 0, 0, self._asm_names, desc)
            asm = self.dpas_asm(key, self.mod.type_void(), params, code, ",".join(["rw.u"] * 6))
            self.mod.decorate(asm, Decoration.SideEffectsINTEL)
        self.block.op(
            Op.AsmCallINTEL,
            self.mod.type_void(),
            self._asm_ids[key],
            *self.dpas_surface(inst, d, size),
        )

    def coop_mul_add(self, inst: Inst) -> None:
        res = self.dpas_mul_add(inst)
        if res is None:
            super().coop_mul_add(inst)
        else:
            self.set(inst, res)

    def dpas_mul_add(self, inst: Inst) -> list[int] | None:
        A, B, C = (inst.operand(k) for k in ("a", "b", "c"))
        at, bt, ct, rt = A.type, B.type, C.type, inst.results[0].type
        m = self.dpas_matrix()
        if m is None or not self.dpas_has_gemm(m, at, bt, ct, rt):
            return None
        pieces = [self.dpas_pieces(t, inst) for t in (at, bt, ct, rt)]
        if any(p is None for p in pieces):
            return None
        pa, pb, pcc, pr = pieces
        assert pa is not None and pb is not None and pcc is not None and pr is not None
        zero_c = _is_zero(C)
        key = ("dpas", at, bt, ct, rt, zero_c)
        ret = self.dpas_result_ty(rt, pr)
        params = [self.dpas_piece_ty(at, pa)] * pa.count + [self.dpas_piece_ty(bt, pb)] * pb.count
        if not zero_c:
            params += [self.dpas_piece_ty(ct, pcc)] * pcc.count
        if key not in self._asm_ids:
            code = dpas_code(at, bt, ct, rt, (pa, pb, pcc, pr), zero_c, self._asm_names)
            if code is None:
                return None
            cons = ",".join(["=rw"] * pr.count + ["rw"] * len(params))
            self.dpas_asm(key, ret, params, code, cons)
        args = self.dpas_pack(at, pa, self.cm(A, inst)) + self.dpas_pack(bt, pb, self.cm(B, inst))
        if not zero_c:
            args += self.dpas_pack(ct, pcc, self.cm(C, inst))
        res = self.block.op(Op.AsmCallINTEL, ret, self._asm_ids[key], *args)
        return self.dpas_unpack(rt, pr, res)


def _is_zero(v: Value) -> bool:
    d = v.defining_inst
    return isinstance(d, ConstantInst) and d.props["value"] in (0, (0, 0))


def dpas_code(
    at: CoopmatrixType,
    bt: CoopmatrixType,
    ct: CoopmatrixType,
    rt: CoopmatrixType,
    pieces: tuple[Pieces, Pieces, Pieces, Pieces],
    zero_c: bool,
    names: Iterator[str],
) -> str | None:
    """vISA of D = A*B + C: for every K step of ω*8, every 16 rows and every 8 columns one
    `dpas.<pa>.<pb>.8.8 (M1,16) dst src0 A B` (§B3.5 offsets). Operands: $0.. the result pieces,
    then A's, B's and (unless C is the constant 0, when the first src0 is %null) C's pieces.
    None if some dpas operand would cross a piece."""
    pa, pb, pc, pr = pieces
    sa, sb, sc, sr = (t.component.size for t in (at, bt, ct, rt))
    kk = 4 // sa * SDEPTH
    a0 = pr.count
    b0 = a0 + pa.count
    c0 = b0 + pb.count
    lines = ["{"]
    a_alias = [next(names) for _ in range(pa.count)]
    b_alias = [next(names) for _ in range(pb.count)]
    for alias, first, pcs in ((a_alias, a0, pa), (b_alias, b0, pb)):
        for k, name in enumerate(alias):
            lines.append(
                f".decl {name} v_type=G type=d num_elts={pcs.piece_bytes // 4}"
                f" align=wordx32 alias=<${first + k},0>"
            )
    temp = None
    if rt.component is not ct.component and at.cols > kk:
        temp = next(names)
        lines.append(
            f".decl {temp} v_type=G type={VISA_TYPE[ct.component.kind.text]}"
            f" num_elts={ct.rows * ct.cols} align=wordx32"
        )
    pa_name, pb_name = PRECISION[at.component.kind.text], PRECISION[bt.component.kind.text]
    nc, kc = ct.cols, at.cols

    def reg(pcs: Pieces, first: int, offset: int, length: int) -> str | None:
        where = pcs.place(offset, length)
        return None if where is None else f"${first + where[0]}.{where[1]}"

    for k in range(0, kc, kk):
        last = k + kk >= kc
        for m in range(0, ct.rows, EXEC):
            for n in range(0, nc, RCOUNT):
                a_at = pa.place((k * EXEC + m * kc) * sa, SDEPTH * EXEC * 4)
                b_at = pb.place((k * nc + n * kk) * sb, RCOUNT * kk * sb)
                tile = m * nc + n * EXEC
                if last or temp is None:
                    dst = reg(pr, 0, tile * sr, RCOUNT * EXEC * sr)
                else:
                    dst = f"{temp}.{tile * sc}"
                if k == 0:
                    src0 = "%null.0" if zero_c else reg(pc, c0, tile * sc, RCOUNT * EXEC * sc)
                elif temp is not None:
                    src0 = f"{temp}.{tile * sc}"
                else:
                    src0 = reg(pr, 0, tile * sr, RCOUNT * EXEC * sr)
                if a_at is None or b_at is None or dst is None or src0 is None:
                    return None
                lines.append(
                    f"dpas.{pa_name}.{pb_name}.{SDEPTH}.{RCOUNT} (M1,{EXEC}) {dst} {src0}"
                    f" {a_alias[a_at[0]]}.{a_at[1]} {b_alias[b_at[0]]}({b_at[1] // GRF},0)"
                )
    lines.append("}")
    return "\n".join(lines) + "\n"


__all__ = [
    "Block2d",
    "CoopmatrixDpasConversion",
    "Pieces",
    "dpas_code",
    "load_config",
    "load_descriptor",
    "prefetch_config",
    "prefetch_descriptor",
    "store_config",
    "store_descriptor",
]
