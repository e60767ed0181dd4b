"""Cost model for the register block of a GEMM on a SIMD CPU core (core info `cpu`).

Why a model and not one fixed block: the best block depends on the register file. AVX-512 has
32 registers of 64 B, AVX2 16 of 32 B; a block fitted to one spills or leaves FMA pipes idle on
the other. The model estimates the cycles of the whole gemm for a candidate blocking
(`GemmBlocking`: row_blocks x S rows, `cols` columns, `k_unroll`) from the core's vector width,
register count, FMA units and latency, load units and L1 size, and picks the cheapest. The
autotuner times the best few candidates (`cpu_candidates`) on the device.

Per K step a subgroup tile of r row blocks and c columns loads r vectors of A and broadcasts c
elements of B, and issues r*c FMAs into r*c accumulators. Its cycles per K step are the
largest of: the FMA issue time r*c / fma_units, the load time (r * regs * a + c) / load_units
(a = 1 when A stays in L1 across the column chunks, else A_FROM_L2) and the FMA latency (each
accumulator waits for its previous FMA). A tile pays a fixed overhead plus loading and storing
its part of C. The block must fit the register file (`fits`), else the JIT spills.

Measured on an AMD EPYC (Zen 4, 32 KiB L1d; CPU time of 9-15 interleaved launches on a busy
machine, GFLOP/s): AVX2 f32 48^3 6 x 2 (12 accumulators; it fits 16 ymm because A streams
through one register) 146-168 against 6 x 1 107-129; AVX2 f64 48^3 12 x 1 75 against 4 x 2
60; AVX-512 f64 64^3 (A is 32 KiB: not in L1) 8 x 2 72-75 against 8 x 3 66-68, which a
doubled cost of the loads of A from L2 would prefer.

A batched GEMM streams its operands from memory, and that, not the FMA count, decides the
larger sizes: the hardware prefetcher follows one ascending stream well but not many short
ones. So each memory stream a tile opens costs `STREAM_CYCLES` (`streams`): a tile whose rows
do not span M reads A and C in runs of its height (unless the gaps between the runs are
shorter than a cache line, or the entry is in L1 after the first row tile); a tile whose B
panel (its columns of B) is longer than `STREAM_BYTES` reads each column as its own stream (a
shorter panel is one).
Measured on an AMD EPYC (Zen 5) with 1 GB of batched operands on AVX-512, in % of the FMA
peak at the measured clock: f64 64^3 8 row blocks x 1 column 60 %, 8 x 2 36 %, 4 x 4 (the best
block by FMA count alone) 31 %; f64 32^3 4 x 2 40 %, 4 x 4 31 %.

Deep K unrolling is not free when the tile has no FMA slack (`stalls_unrolled`): measured on
the same EPYC, AVX-512 f32 64^3 4 x 2 (8 accumulators = 2 FMA units x latency 4) runs at
244-261 GFLOP/s (46-50 %) with 8 unrolled steps (2 KiB of A per unrolled body) and at
293-306 (56-58 %) with 4 or 2; tight tiles whose 8 steps load at most 1 KiB of A gain from
them: f32 32^3 2 x 4, 212 GFLOP/s with 8 steps, 203 with 4; AVX2 f64 64^3 4 x 2, 76 with 8,
69 with 4, 60 with 2.

The subgroup size (`subgroup_size`) is the lanes of one vector register, so that a row block is
one register, except on a core whose FMA units are narrower than its vectors (`CpuCore.fma_bytes`:
AMD Zen 4 runs a 512-bit FMA as two 256-bit passes). There a row block of the FMA width costs
half the passes of a full one, and an M that leaves a full row block half empty runs in fewer
passes with the narrower subgroup: at 23 rows, f32 on AVX-512, 3 row blocks of 8 lanes take 3
passes per column against 2 x 2 for 2 row blocks of 16 (9 of 32 lanes idle). Measured on the
Zen 4 EPYC (family 25 model 17), batched 23x37x19 f32, AVX-512 code, interleaved A/B, the first
two runs of 11 rounds, streaming: subgroup size 8 with the model's 3 x 6 tile 139.0 / 139.6
GFLOP/s against 111.4 / 113.2 at 16 (2 x 6); the later runs of 21 rounds with
benchmarks/gemm_ab.py, 120.0 / 122.6 -> 154.3 / 156.6 at load 4, are the ones
docs/performance.rst quotes (docs/_benchmarks.rst has all).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.enums import Transpose
from ..ir.inst import Inst
from ..ir.types import DYNAMIC
from ..target.core_info import ceil_div
from ..target.cpu_core import CpuCore
from ..target.gemm_blocking import GemmBlocking, GemmKey

K_UNROLLS = (1, 2, 4, 8)
TILE_OVERHEAD = 24  # cycles per subgroup tile: loop control, address set-up, the C epilogue
STREAM_CYCLES = 150  # cycles per memory stream a tile opens (what the prefetcher does not hide)
STREAM_BYTES = 576  # a tile's B panel up to this long is one stream (adjacent lines; `streams`)
LINE_BYTES = 64  # a cache line
A_FROM_L2 = 1.5  # load slots of a vector of A that comes from L2 rather than L1 (see above)
UNROLL_A_BYTES = 1024  # A bytes one unrolled K body of a tile without FMA slack may load
BODY_FMAS = 64  # vector FMAs one unrolled K body may hold (`unroll_fits`)
DYNAMIC_EXTENT = 256  # what an unknown M or N is assumed to be (K: 64)
PREFETCH_MIN_BYTES = 8 << 10  # A's entry from which the next one is prefetched (two pages)


NEXT_ENTRY_OPERANDS = ("A", "B", "C")  # the operand names `next_entry_operands` returns
B_PREFETCH_VECTOR_BYTES = 64  # vector bytes from which B's next entry is prefetched into L2


def prefetches_next_entry(key: GemmKey, a_size: int, cpu: CpuCore) -> bool:
    """Whether the lowering prefetches the next batch entry's operands (`next_entry_operands`)
    for a gemm of `key` with A elements of `a_size` bytes, when A and B are entries of stacks
    (subviews at group_id.x, which passes/lower_linalg_gemm.py `next_entry_views` checks on
    the program): static sizes, no transposes, and A's entry from PREFETCH_MIN_BYTES up to L1,
    whatever its element type. The first read of an A of two 4 KiB pages or more is a burst
    that the hardware prefetcher, which stops at page boundaries, does not run ahead of; an A
    of one page (4 KiB) is read in a burst too short for the prefetch code to pay. Measured on
    the Zen 4 EPYC (family 25 model 17), benchmarks/gemm_ab.py, CPU time, interleaved rounds,
    load average 3-8: f64 32^3 (8 KiB) 1.08 / 1.10x with C read, 1.19 / 1.21x with C
    nontemporal (`stores_c_nontemporal`); f32 48^3 (9 KiB, into L1), 16 KiB before: AVX2 code
    (6 x 2) 0.98-1.14x in 21 runs (median 1.04), AVX-512 code (3 x 3) 0.98-1.03x in 13
    (median 1.01); f32 32^3 (4 KiB) lost: 0.86-0.92x (AVX2), 0.79-0.91x (AVX-512), as
    did 23x37x19 f64 (0.80x) and 16^3 f64 (0.88x)."""
    if min(key.M, key.N, key.K) < 0 or any(key.transposes):
        return False
    return PREFETCH_MIN_BYTES <= key.M * key.K * a_size <= cpu.l1_bytes


NONTEMPORAL_TYPES = frozenset({"f64"})  # the element types `nontemporal_candidate` admits


def nontemporal_candidate(key: GemmKey) -> bool:
    """Whether a gemm of `key` stores a batch entry's C nontemporal where it prefetches the
    next entry (`stores_c_nontemporal`): A, B and C of element types in NONTEMPORAL_TYPES
    (f64, measured with AVX2 and AVX-512 code). Other types, also the 8-byte c32 and i64, keep
    their plain stores and their prefetch of C. f32 was measured and left out: by A's bytes the
    f32 rows sit where the f64 ones gained (48^3 9 KiB, 64^3 16 KiB, prefetched into L1), and
    the read for ownership saved is the same quarter of an entry's traffic, yet on the Zen 4
    EPYC (family 25 model 17, benchmarks/gemm_ab.py, CPU time, 11-31 interleaved rounds, load
    average 3-8, f32 nontemporal C with the prefetch from 8 KiB against plain stores with the
    prefetch from 16 KiB, 13-23 runs per row) the ratio stayed within the noise: AVX2 48^3
    0.95-1.06 (median 1.02; with plain stores and the prefetch from 8 KiB in the same rounds
    1.04 against 1.035: the gain is the prefetch's, `prefetches_next_entry`), 64^3 0.95-1.05
    (1.00); AVX-512 48^3 0.99-1.03 (1.00), 64^3 0.96-1.03 (1.00). Prefetching only A with them:
    0.94-1.06, into L2: 0.91-1.02; at 32^3 (4 KiB) nontemporal C with the prefetch lost
    (0.78-0.94), without a prefetch it ran 0.99-1.03. The f32 rows' gap to libxsmm at 48^3 is
    not the read for ownership (docs/_benchmarks.rst, the f32 nontemporal stores)."""
    return all(t in NONTEMPORAL_TYPES for t in key.types)


def prefetches_into_l2(key: GemmKey, a_size: int, cpu: CpuCore) -> bool:
    """Whether the next entry of a prefetched gemm (`prefetches_next_entry`) goes into L2
    (prefetcht2) rather than L1: A's entry takes more than three quarters of L1, so that the
    next one would evict the current A, which every column chunk reads again
    (passes/lower_linalg_gemm.py `next_entry_views`)."""
    return 4 * key.M * key.K * a_size > 3 * cpu.l1_bytes


def next_entry_operands(
    key: GemmKey, a_size: int, cpu: CpuCore, c_nontemporal: bool = False
) -> tuple[str, ...]:
    """Which of the next entry's operands (of NEXT_ENTRY_OPERANDS) a prefetched gemm
    (`prefetches_next_entry`) prefetches: A and B into L1; into L2 (`prefetches_into_l2`)
    also C, so that the next work-group's stores of C find their lines in L2 instead of
    reading them from memory for ownership, and B only with vectors of
    B_PREFETCH_VECTOR_BYTES (AVX-512): A, B and C, else A and C, or A alone where the gemm
    stores C nontemporal (`c_nontemporal`, `stores_c_nontemporal`; AVX-512 code keeps A, B
    and C with the nontemporal stores). Measured on the Zen 4 EPYC
    (family 25 model 17), batched 64^3 f64, the model's tiles, interleaved A/B with
    benchmarks/gemm_ab.py (CPU time, load average 2-7; docs/_benchmarks.rst). AVX-512 code,
    8 x 2 (subgroup size 8): A, B and C 1.05-1.14x A and B in five runs (up to 92.9 GFLOP/s,
    79 % of the measured peak); without B 0.90 / 0.99 of that. AVX2 code, 6 x 2 (subgroup
    size 4), before the nontemporal stores: A and C 1.09-1.22x A and B in four runs, A alone
    1.00-1.17x, A, B and C 0.84-1.03x; presumably the prefetch code, one call per 4 lanes
    (twice AVX-512's calls for the same lines), each lane's prefetch behind a branch, costs
    more than B's lines gain where the hardware prefetcher follows B's columns. The rule
    follows the measured ISA, not the lanes per call: AVX-512 code with subgroups of 4 lanes
    (a core with 32-byte FMAs, e.g. 60x64x64 f64 on the Zen 4 core info) prefetches B too,
    unmeasured.
    Into L1 (64^3 f32) C measured 0.97 (0.98 with prefetcht2): the current A needs L1."""
    a, b, c = NEXT_ENTRY_OPERANDS
    if not prefetches_into_l2(key, a_size, cpu):
        return (a, b)
    if cpu.vector_bytes >= B_PREFETCH_VECTOR_BYTES:
        return (a, b, c)
    return (a,) if c_nontemporal else (a, c)


def stores_c_nontemporal(key: GemmKey, a_size: int, cpu: CpuCore) -> bool:
    """Whether a gemm that prefetches the next entry (`prefetches_next_entry`) stores C with
    nontemporal stores (`nontemporal_candidate`: f64), where C is a subview at
    group_id.x too and C is not read (passes/lower_linalg_gemm.py `nontemporal_c`: beta 0, or
    a run-time beta with a run-time alpha, whose branch for 1 and 0 stores nontemporal; and
    nothing else in the function touches C, and its alignment allows it); into L2 (`prefetches_into_l2`)
    the next entry's C is then not prefetched (`next_entry_operands`). A nontemporal store
    writes its line to memory without reading it first (the read for ownership is a quarter
    of an entry's traffic) and without evicting the next entry's operands from the caches.
    Measured on the Zen 4 EPYC (family 25 model 17), AVX2 code, interleaved A/B with
    benchmarks/gemm_ab.py (CPU time, 15 rounds, load average 3-6): 64^3 f64 (6 x 2)
    nontemporal C with A prefetched 1.08 / 1.04x the prefetch of A and C, with A and B
    1.08 / 1.05x, with A and C 1.02 / 1.02x; 48^3 f64 (12 x 1, A and B prefetched into L1)
    1.04 / 1.02x. With the stores nontemporal, an A of 8 KiB (PREFETCH_MIN_BYTES) is
    prefetched as well: 32^3 f64 (the model's 4 x 2 with 8 K steps once prefetched, 8 x 1
    with 8 steps without) 1.19 / 1.21x, prefetched with C read 1.08 / 1.10x; below 8 KiB
    the prefetch lost (23x37x19 0.80x, 16^3 0.88x; with nontemporal C 1.00x at 16^3).
    AVX-512 code (the Zen 4 core info: subgroups of 8 doubles, one zmm register), two runs of
    11 rounds: 32^3 f64 (4 x 2, prefetched from 8 KiB) 1.13 / 1.13x, 64^3 f64 (8 x 2, still
    prefetching A, B and C) 1.10 / 1.03x, 48^3 f64 (6 x 1) 0.98 / 1.01x; without the prefetch
    of C and B, 64^3 lost (0.87-0.91x: `next_entry_operands`)."""
    return nontemporal_candidate(key) and prefetches_next_entry(key, a_size, cpu)


@dataclass(frozen=True)
class GemmProblem:
    """Sizes (-1 = unknown) and byte sizes of one gemm on a CPU core with subgroup size S."""

    M: int
    N: int
    K: int
    a_size: int
    acc_size: int
    subgroup_size: int
    prefetched: bool = False  # the lowering prefetches the next entry's operands (`streams`)

    def sizes(self) -> tuple[int, int, int]:
        return (
            self.M if self.M >= 0 else DYNAMIC_EXTENT,
            self.N if self.N >= 0 else DYNAMIC_EXTENT,
            self.K if self.K >= 0 else 64,
        )


def batched_problem(
    key: GemmKey, a_size: int, acc_size: int, subgroup_size: int, cpu: CpuCore
) -> GemmProblem:
    """The problem of a gemm of `key` whose A and B are entries of stacks (subviews at
    group_id.x, as in the batched kernels of the autotuner and the benchmarks), prefetched
    where the lowering prefetches the next entry (`prefetches_next_entry`)."""
    prefetched = prefetches_next_entry(key, a_size, cpu)
    return GemmProblem(key.M, key.N, key.K, a_size, acc_size, subgroup_size, prefetched)


def row_passes(m: int, s: int, acc_size: int, cpu: CpuCore) -> int:
    """FMA unit passes of one column and K step over m rows in row blocks of s lanes."""
    return ceil_div(m, s) * cpu.fma_passes(s * acc_size)


def subgroup_size(rows: list[int], acc_size: int, cpu: CpuCore) -> int:
    """The subgroup size for accumulators of `acc_size` bytes and row extents `rows` (< 0:
    unknown at compile time): the lanes of one vector register, or, on a core whose FMA units
    are narrower than its vectors, the lanes of one FMA unit when their row blocks take fewer
    passes over the known rows (`row_passes`; a tie keeps the full vector, whose row blocks
    need fewer loads and instructions)."""
    native = cpu.lanes(acc_size)
    narrow = max(1, cpu.fma_bytes // acc_size)
    if narrow >= native or not rows or min(rows) < 0:
        return native

    def passes(s: int) -> int:
        return sum(row_passes(m, s, acc_size, cpu) for m in rows)

    return narrow if passes(narrow) < passes(native) else native


def gemm_key(inst: Inst) -> GemmKey:
    """The key of a gemm instruction, from its operand types (what the lowering sees)."""
    A, B, C = (inst.operand(k).type for k in ("A", "B", "C"))
    tA = inst.props["tA"] is Transpose.t
    tB = inst.props["tB"] is Transpose.t
    m, n, k = (-1 if x == DYNAMIC else x for x in (C.shape[0], C.shape[1], A.shape[0 if tA else 1]))
    types = (A.element.kind.text, B.element.kind.text, C.element.kind.text)
    return GemmKey(m, n, k, types, (tA, tB))


def registers_per_block(p: GemmProblem, cpu: CpuCore) -> int:
    """Vector registers one coopmatrix row block of accumulators takes."""
    return max(1, ceil_div(p.subgroup_size * p.acc_size, cpu.vector_bytes))


def fits(b: GemmBlocking, p: GemmProblem, cpu: CpuCore) -> bool:
    """Whether the block stays in registers: the accumulators plus the B broadcasts of one K
    step plus one vector of A, which the JIT streams through a single register (seen in the
    runtime's disassembly, AVX2 f32: 6x2 and 4x3 run without spills, 3x4, 2x6 and 1x12
    spill; AVX-512: 2x11 and 1x16 spill; the K unrolling does not add live registers, the JIT
    interleaves the unrolled steps: 8x1 f64 with 8 unrolled steps runs without spills on
    AVX-512). The tile that holds the last rows of an M that is no multiple of the subgroup
    size must fit too (`masked_registers`), and so must every tile of a dynamic M, whose
    remainder tile checks all its row blocks."""
    regs = registers_per_block(p, cpu)
    a_regs = max(1, ceil_div(p.subgroup_size * p.a_size, cpu.vector_bytes))
    r, c = b.row_blocks, b.cols
    if r * c * regs + a_regs + c > cpu.registers:
        return False
    if cpu.mask_registers:
        return True
    s = p.subgroup_size
    if p.M < 0:
        last = r  # the lowering checks every row block of a dynamic M's remainder tile
    elif p.M % s == 0:
        return True
    else:
        last = ceil_div(p.M % (r * s), s)
    return last * c * regs + a_regs + c + masked_registers(b) <= cpu.registers


def masked_registers(b: GemmBlocking) -> int:
    """Vector registers a tile with a row-checked block needs beyond the accumulators, A and
    the broadcasts on a core without mask registers (`CpuCore.mask_registers`: AVX2, AVX and
    SSE4.2 keep the mask in a vector register): the mask, the masked load of A
    (it cannot be an FMA's memory operand), and c - 1 per further unrolled K step, whose
    loads the JIT then hoists. Seen in the runtime's AVX2 disassembly at M = 23: f64 6 x 2
    with 1 K step spills (12 + 1 + 2 + 2 > 16), 5 x 2 with 2 steps does not; f32 3 x 3 with 2
    steps spills, with 1 step and 3 x 2 with 4 steps do not."""
    return 2 + (b.k_unroll - 1) * (b.cols - 1)


def stalls_unrolled(b: GemmBlocking, p: GemmProblem, cpu: CpuCore) -> bool:
    """Whether the unrolled K body stalls the FMA chains: the tile has no more accumulators
    than the FMA latency needs (fma_units x fma_latency), so every FMA must issue on time, and
    the body loads more than `UNROLL_A_BYTES` of A. Presumably the JIT schedules the body's
    loads ahead of its FMAs and the out-of-order window then cannot feed the chains on time;
    a tile with slack hides this (measurements in the module docstring). A one-column tile
    uses each vector of A once, so the JIT folds its loads into the FMAs (memory operands) and
    the body has no loads to schedule ahead: AVX2 f64 32^3 8 x 1 ran at 58-61 GFLOP/s with 8
    steps, 48-49 with 4."""
    tight = b.row_blocks * b.cols * registers_per_block(p, cpu) <= cpu.fma_units * cpu.fma_latency
    a_bytes = b.k_unroll * b.row_blocks * p.subgroup_size * p.a_size
    return b.cols > 1 and tight and a_bytes > UNROLL_A_BYTES


def unroll_fits(b: GemmBlocking, p: GemmProblem, cpu: CpuCore) -> bool:
    """Whether the unrolled K body holds at most `BODY_FMAS` vector FMAs. The device JIT's
    time grows with the body, and deeper bodies measured no faster on the Zen 4 EPYC: AVX2 f32
    48^3 6 x 2 with 8 steps (96 FMAs) 146-168 GFLOP/s, with 4 141-161; AVX-512 f64 64^3 8 x 2
    with 8 steps (128) 74-75, with 4 72-77 (CPU time, busy machine)."""
    return b.row_blocks * b.cols * registers_per_block(p, cpu) * b.k_unroll <= BODY_FMAS


def _k_step_cycles(r: int, c: int, p: GemmProblem, cpu: CpuCore, a_in_l1: bool) -> float:
    regs = registers_per_block(p, cpu)
    fmas = r * c * regs
    loads = r * regs * (1 if a_in_l1 else A_FROM_L2) + c
    return max(fmas / cpu.fma_units, loads / cpu.load_units, float(cpu.fma_latency))


def _chunks(n: int, c: int) -> list[tuple[int, int]]:
    """(count, length) of the column chunks the lowering splits a static N into (q+1 or q)."""
    blocks = ceil_div(n, c)
    q, rem = divmod(n, blocks)
    return [(rem, q + 1), (blocks - rem, q)]


def _row_tiles(m: int, r: int, s: int) -> list[tuple[int, int]]:
    """(count, row blocks) of the subgroup tiles along M."""
    full, rest = divmod(m, r * s)
    return [(full, r), (1 if rest else 0, ceil_div(rest, s))]


def streams(r: int, c: int, p: GemmProblem, cpu: CpuCore, first: bool) -> int:
    """Memory streams a tile of r row blocks and c columns opens beyond the first: per B
    column when its B panel is long, and its A and C runs when it does not span M. The runs
    cost nothing when the rows outside the tile take less than a cache line of each column
    (the tile touches every line of A and C: one run with short gaps), nor in a tile after
    the first row tile (`first`) when the entry's A, B and C fit in L1 (the first row tile
    brought them in). Measured (busy Zen 4 EPYC, AVX2 f64 23x37x19, 15 interleaved rounds,
    GFLOP/s): 4 x 3 with 2 K steps, whose 16-row tile leaves 7 rows (56 B) of each column,
    streaming 50.5 and cached 56.5 against 44.0 and 45.1 for 6 x 1 (6 accumulators, fewer
    than the 8 the FMA latency needs), which these runs' full cost had made the cheapest.

    Where the lowering prefetches the next batch entry's operands (`GemmProblem.prefetched`,
    `prefetches_next_entry`, `next_entry_operands`), the A and C runs cost nothing: measured on the
    Zen 4 EPYC (family 25 model 17), AVX2 f32 64^3, 15 interleaved rounds, the tiles of half the
    rows ran 1.10-1.13x the full-height 8 x 1 that the runs' cost had chosen (4 x 2 with 8 K steps
    1.10 / 1.12). The B panel's streams stay: the wide tiles they keep out lost with the prefetch
    too (AVX-512 4 x 6 against the model's 4 x 2 f32 64^3 0.61 / 0.62, f64 64^3 0.73 / 0.76;
    docs/_benchmarks.rst).

    STREAM_BYTES is the longest panel measured to stream as one: 9 lines, the 3 columns of
    48 f32 (576 B), whose tile 3 x 3 (AVX-512, subgroup size 16) ran 1.10-1.12x the 3 x 2 that a
    limit of 8 lines (512 B) chose, in four runs of 11 interleaved rounds streaming (Zen 4 EPYC,
    family 25 model 17, batched 48^3 f32, 168-172 -> 184-192 GFLOP/s); the wider 3 x 4
    (768 B), 3 x 5 and 3 x 6 ran 0.90-0.91x 3 x 3, as do the 12 lines of 64^3 f32 4 x 3 against
    4 x 2 (0.84-0.96)."""
    M, N, K = p.sizes()
    out = c - 1 if c * K * p.a_size > STREAM_BYTES else 0
    rows = min(r * p.subgroup_size, M)
    in_l1 = (M * K + K * N + M * N) * p.a_size <= cpu.l1_bytes
    runs = (M - rows) * p.a_size >= LINE_BYTES and (first or not in_l1)
    if runs and not p.prefetched:
        out += 2
    return out


def cycles(b: GemmBlocking, p: GemmProblem, cpu: CpuCore) -> float:
    """Estimated cycles of the whole gemm with blocking `b`."""
    M, N, K = p.sizes()
    s = p.subgroup_size
    a_in_l1 = (M * K + K * b.cols) * p.a_size <= cpu.l1_bytes
    k_body, k_rest = divmod(K, b.k_unroll)
    total = 0.0
    for tiles, r, first in _row_tile_passes(M, b.row_blocks, s):
        for chunks, c in _chunks(N, b.cols):
            if not tiles or not chunks or not c:
                continue
            step = _k_step_cycles(r, c, p, cpu, a_in_l1)
            loop = k_body * (b.k_unroll * step + 1) + k_rest * (step + 1)
            memory = STREAM_CYCLES * streams(r, c, p, cpu, first)
            total += tiles * chunks * (loop + TILE_OVERHEAD + 2 * r * c + memory)
    return total


def _row_tile_passes(m: int, r: int, s: int) -> list[tuple[int, int, bool]]:
    """_row_tiles with the first row tile apart: (count, row blocks, first), groups of no tile
    left out (when M < r * s the only tile is the rest, and it is the first)."""
    out: list[tuple[int, int, bool]] = []
    for tiles, blocks in _row_tiles(m, r, s):
        if tiles and not out:
            out.append((1, blocks, True))
            tiles -= 1
        if tiles:
            out.append((tiles, blocks, False))
    return out


def all_blockings(p: GemmProblem, cpu: CpuCore) -> list[GemmBlocking]:
    """Every blocking that fits the register file, does not exceed the sizes and whose K
    unrolling neither stalls its FMA chains nor exceeds the body size (the smallest unrolling,
    1, always stays)."""
    M, N, K = p.sizes()
    max_r = ceil_div(M, p.subgroup_size)
    out = []
    for r in range(1, max_r + 1):
        for c in range(1, min(N, cpu.registers) + 1):
            for k in K_UNROLLS:
                b = GemmBlocking(r, c, k)
                if k > max(1, K) or not fits(b, p, cpu) or stalls_unrolled(b, p, cpu):
                    continue
                if k == 1 or unroll_fits(b, p, cpu):
                    out.append(b)
    return out


def cpu_candidates(p: GemmProblem, cpu: CpuCore, count: int) -> list[GemmBlocking]:
    """The `count` blockings with the fewest estimated cycles, best first."""
    ranked = sorted(all_blockings(p, cpu), key=lambda b: (cycles(b, p, cpu), -b.k_unroll))
    return ranked[:count]


def cpu_blocking(p: GemmProblem, cpu: CpuCore) -> GemmBlocking:
    """The cost model's choice."""
    best = cpu_candidates(p, cpu, 1)
    return best[0] if best else GemmBlocking(1, 1, 1)
