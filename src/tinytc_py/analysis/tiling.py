"""Subgroup size and work-group size heuristics (docs/design.md §B2.1) and the GEMM register block
(§B4.2), shared by work-group-size and the linear-algebra lowering.

A `BlasShape` summarises one linear-algebra instruction: the element types of A, B and the
written operand, the written operand's first two extents and whether it is a GEMM. It is found
from the instruction table: a collective instruction that writes a memref operand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..ir.inst import Exec, Inst
from ..ir.region import Func
from ..ir.types import DYNAMIC, MemrefType, NumberType, ScalarKind
from ..target.core_info import CoreInfo
from .gemm_model import subgroup_size

MAX_K_UNROLLING = 8

_ACC = {
    ScalarKind.i8: ScalarKind.i32,
    ScalarKind.f16: ScalarKind.f32,
    ScalarKind.bf16: ScalarKind.f32,
}


def acc_type(ty: NumberType) -> NumberType:
    """Accumulator type: i8 → i32, f16/bf16 → f32, others unchanged."""
    kind = _ACC.get(ty.kind)
    return ty.ctx.number(kind) if kind is not None else ty


@dataclass(frozen=True)
class BlasShape:
    a: NumberType
    b: NumberType
    c: NumberType
    shape: tuple[int, int]
    is_gemm: bool = False


def blas_shape(inst: Inst) -> BlasShape | None:
    """The shape of a linear-algebra instruction (None for other instructions and 0-d results)."""
    spec = inst.spec
    if spec.exec is not Exec.collective or not spec.writes:
        return None
    out = inst.operand(spec.writes[0])
    if not isinstance(out.type, MemrefType) or out.type.order == 0:
        return None
    reads = [inst.operand(k) for k in spec.reads if k != spec.writes[0]]
    elts = [v.type.element for v in reads if isinstance(v.type, MemrefType)] or [out.type.element]
    a, b = elts[0], elts[-1]
    shape = out.type.shape
    return BlasShape(
        a, b, out.type.element, (shape[0], shape[1] if len(shape) > 1 else 0), inst.name == "gemm"
    )


def blas_shapes(func: Func) -> list[BlasShape]:
    found: list[BlasShape] = []
    for inst in func.body.walk():
        if inst.spec.writes:  # blas_shape's first test, without a call for most instructions
            shape = blas_shape(inst)
            if shape is not None:
                found.append(shape)
    return found


def max_register_block_gemm(
    size_a: int,
    size_b: int,
    size_c: int,
    subgroup_size: int,
    register_space: int,
    c_blocks: int = 1,
) -> tuple[int, int]:
    """(rows, cols) of the register block maximising rows*cols/(rows+cols) within half the
    register space: rows*(cols*c_blocks*size_c + 8*size_a) + cols*8*size_b <= register_space/2.

    rows*cols/(rows+cols) grows with cols, so for each row count only the most columns that
    fit can win (the first of equal ratios, the smallest row count, is kept)."""
    budget = register_space // 2
    k = MAX_K_UNROLLING

    def max_rows(cols: int) -> int:
        per_row = subgroup_size * (cols * c_blocks * size_c + k * size_a)
        return (budget - cols * k * size_b) // per_row * subgroup_size

    def max_cols(rows: int) -> int:
        return (budget - rows * k * size_a) // (rows * c_blocks * size_c + k * size_b)

    best, rows, cols = 0.0, subgroup_size, 1
    for r in range(subgroup_size, max_rows(1) + 1, subgroup_size):
        c = max_cols(r)
        if c >= 1 and r * c / (r + c) > best:
            best, rows, cols = r * c / (r + c), r, c
    return rows, cols


def suggest_subgroup_size(shapes: list[BlasShape], info: CoreInfo) -> int:
    sizes = list(info.subgroup_sizes)
    native = simd_subgroup_size(shapes, info)
    if native is not None:
        return native
    matrix = info.matrix
    if matrix is not None and any(
        s.is_gemm and matrix.have_precision(s.a.kind.text, s.b.kind.text, s.c.kind.text)
        for s in shapes
    ):
        return matrix.required_subgroup_size
    candidates = [sizes[0]]
    max_size = max((s.c.size for s in shapes), default=0)
    if max_size < 8:
        half = info.register_space // 2
        limit = math.isqrt(half // max_size) if max_size else None
        candidates += [s for s in sizes[1:] if limit is None or s <= limit]
    if len(candidates) == 1:
        return candidates[0]
    if not shapes:
        return candidates[-1]
    # The shape with the largest static shape[0]; a dynamic extent counts as 0 but keeps its raw
    # (negative sentinel) value, which every candidate exceeds.
    shape0 = max(shapes, key=lambda s: 0 if s.shape[0] == DYNAMIC else s.shape[0]).shape[0]
    return next((c for c in candidates if c >= shape0), candidates[-1])


def simd_subgroup_size(shapes: list[BlasShape], info: CoreInfo) -> int | None:
    """On a core that runs a subgroup as the SIMD lanes of a CPU thread: the subgroup size
    whose lanes fill one vector register with the largest accumulator type (32-bit without
    shapes), so a coopmatrix row block is one register (f32 on AVX-512: 16, f64: 8). Wider
    subgroups make the runtime split every operation; narrower ones leave lanes idle, except
    on FMA units narrower than the vectors, where a function with a gemm gets the GEMM model's
    choice (`gemm_model.subgroup_size`) for the rows of all its shapes (the FMA passes summed
    over every linear-algebra instruction of the function, gemm or not; any dynamic row
    extent keeps the full vector). None on other cores or when no such size is supported."""
    if info.cpu is None:
        return None
    size = max((acc_type(s.c).size for s in shapes), default=4)
    native = info.cpu.lanes(size)
    rows = [-1 if s.shape[0] == DYNAMIC else s.shape[0] for s in shapes]
    best = subgroup_size(rows, size, info.cpu) if any(s.is_gemm for s in shapes) else native
    return next((s for s in (best, native) if s in info.subgroup_sizes), None)


def suggest_local_tiling(
    shapes: list[BlasShape], subgroup_size: int, info: CoreInfo
) -> tuple[int, int]:
    """(m_tiles, n_tiles): the work-group size is [m_tiles * subgroup_size, n_tiles].

    On a SIMD CPU core (`vector_register_size`) a work-group runs on one thread, its subgroups
    one after the other, so more subgroups add no parallelism, only loop overhead: one subgroup.
    """
    if not shapes or info.vector_register_size:
        return 1, 1
    big = max(shapes, key=lambda s: acc_type(s.c).size)
    M = max(s.shape[0] for s in shapes)
    N = max(s.shape[1] for s in shapes)
    rows, cols = max_register_block_gemm(
        big.a.size, big.b.size, acc_type(big.c).size, subgroup_size, info.register_space
    )
    max_threads = max(1, info.max_work_group_size(subgroup_size) // subgroup_size)
    m_limit = max_threads if M == DYNAMIC else max(1, -(-M // rows))
    n_limit = max_threads if N == DYNAMIC else max(1, -(-N // cols))
    best, tiling = -1.0, (1, 1)
    m = 1
    while m <= min(m_limit, max_threads):
        n = _pow2_floor(min(n_limit, max_threads // m))
        score = (m * rows) * (n * cols) / (m * rows + n * cols)
        if score > best:
            best, tiling = score, (m, n)
        m *= 2
    return tiling


def _pow2_floor(x: int) -> int:
    return 1 << (x.bit_length() - 1) if x >= 1 else 1
