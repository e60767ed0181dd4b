"""The CPU GEMM register block: the cost model on AVX2 and AVX-512 cores, kernels lowered for a
pinned ISA executed against NumPy, and the autotuner with its per-device tuning cache."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

from tinytc_py import gemm_tuning
from tinytc_py import options as lib_options
from tinytc_py.analysis.gemm_model import (
    GemmProblem,
    _row_tile_passes,
    all_blockings,
    batched_problem,
    cpu_blocking,
    cpu_candidates,
    fits,
    next_entry_operands,
    prefetches_into_l2,
    prefetches_next_entry,
    stalls_unrolled,
    streams,
    unroll_fits,
)
from tinytc_py.compiler import compile_to_spirv
from tinytc_py.passes.pipeline import run_default_pipeline
from tinytc_py.passes.work_group_size import chosen_subgroup_size
from tinytc_py.spirv import dump
from tinytc_py.target.core_info import CoreInfo, GemmShape, MatrixExt
from tinytc_py.target.cpu_core import cpu_core
from tinytc_py.target.gemm_blocking import GemmBlocking, GemmKey
from tinytc_py.text.dialect import parse
from tinytc_py.text.printer import print_prog

pytestmark = pytest.mark.timeout(300, method="thread")


def problem(isa: str, size: int, mnk=(64, 64, 64)) -> GemmProblem:
    return GemmProblem(*mnk, size, size, cpu_core(isa).lanes(size))


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
@pytest.mark.parametrize("size", [4, 8])
def test_model_keeps_the_fma_pipes_busy(isa, size):
    """The chosen block fits the ISA's registers and keeps the FMA pipes busy (at least
    fma_units x fma_latency accumulators), on 16 ymm as on 32 zmm."""
    cpu = cpu_core(isa)
    p = problem(isa, size)
    b = cpu_blocking(p, cpu)
    assert fits(b, p, cpu)
    assert b.row_blocks * b.cols >= cpu.fma_units * cpu.fma_latency
    assert not fits(GemmBlocking(b.row_blocks + 4, b.cols + 4, b.k_unroll), p, cpu)


def test_model_depends_on_the_isa():
    """f64 64^3: on 32 zmm the tile spans all 64 rows, so A and C stream from memory in one
    run (the measured best); 16 ymm hold no such tile."""
    wide_cpu, narrow_cpu = cpu_core("avx512"), cpu_core("avx2")
    wide = cpu_blocking(problem("avx512", 8), wide_cpu)
    narrow = cpu_blocking(problem("avx2", 8), narrow_cpu)
    assert wide.row_blocks * wide_cpu.lanes(8) == 64
    assert narrow.row_blocks * narrow_cpu.lanes(8) < 64
    assert fits(narrow, problem("avx2", 8), narrow_cpu)


def test_model_counts_memory_streams():
    """A tile whose B panel is long opens a stream per column; one that does not span M opens
    runs of A and C. The f64 64^3 AVX-512 choice therefore keeps one column, not the 4 x 4
    block that the FMA count alone prefers (L1 of 48 KiB as measured: A, 32 KiB, stays in it)."""
    p = problem("avx512", 8)
    cpu = cpu_core("avx512")
    assert streams(8, 1, p, cpu, True) == 0
    assert streams(8, 2, p, cpu, True) == 1
    assert streams(4, 4, p, cpu, True) == 3 + 2
    assert streams(4, 4, p, cpu, False) == 3 + 2  # the entry (96 KiB) is not in L1
    assert cpu_blocking(p, cpu_core("avx512", l1_bytes=48 * 1024)).cols == 1


@pytest.mark.parametrize("fma_bytes", [32, 64])
def test_a_b_panel_of_nine_lines_is_one_stream(fma_bytes):
    """f32 48^3 on AVX-512: the 3 columns of B (576 B, 9 lines) of a 3 x 3 tile are one
    stream, so the model picks 3 x 3 (the measured best, 1.10x 3 x 2) whatever the FMA width;
    4 columns (768 B) still open one stream per column, and so do 3 columns of 64 f32."""
    cpu = cpu_core("avx512", fma_bytes=fma_bytes)
    p = problem("avx512", 4, (48, 48, 48))
    assert streams(3, 3, p, cpu, True) == 0
    assert streams(3, 4, p, cpu, True) == 3
    assert streams(4, 3, problem("avx512", 4), cpu, True) == 2
    assert cpu_blocking(p, cpu) == GemmBlocking(3, 3, 4)


def test_short_gaps_and_l1_resident_entries_open_no_runs():
    """AVX2 f64 23x37x19 (16 KiB per entry, in L1): a 16-row tile leaves 7 rows (56 B, less
    than a cache line) of each column, so it reads every line of A and C in one run; the
    remainder tile finds the entry in L1. The model then picks 4 x 3 with 2 K steps (12
    accumulators, at least the 8 = 2 FMA units x latency 4 the chains need) over 6 x 1 (6),
    as measured (streaming 50.5 against 44.0 GFLOP/s). At 32^3 f64 a 16-row tile leaves
    128 B of each column: its runs still count, and 8 x 1 (spanning M) stays the choice."""
    cpu = cpu_core("avx2")
    odd = problem("avx2", 8, (23, 37, 19))
    assert streams(4, 3, odd, cpu, True) == 0
    assert streams(2, 3, odd, cpu, False) == 0
    assert streams(2, 3, odd, cpu, True) == 2  # 8 rows leave 15 (120 B)
    b = cpu_blocking(odd, cpu)
    assert b == GemmBlocking(4, 3, 2)
    assert b.row_blocks * b.cols >= cpu.fma_units * cpu.fma_latency
    assert fits(b, odd, cpu)
    square = problem("avx2", 8, (32, 32, 32))
    assert streams(4, 2, square, cpu, True) == 2
    assert streams(4, 2, square, cpu, False) == 0  # 24 KiB per entry: in L1
    assert cpu_blocking(square, cpu) == GemmBlocking(8, 1, 8)


@pytest.mark.parametrize(
    ("isa", "mnk", "t", "into_l2", "operands"),
    [
        ("avx512", (64, 64, 64), "f64", True, ("A", "B", "C")),  # A 32 KiB: all of L1
        ("avx512", (60, 64, 64), "f64", True, ("A", "B", "C")),  # 30 KiB
        ("avx2", (64, 64, 64), "f64", True, ("A", "C")),  # B's prefetch lost with AVX2 code
        ("avx2", (60, 64, 64), "f64", True, ("A", "C")),
        ("avx512", (48, 64, 64), "f64", False, ("A", "B")),  # 24 KiB: into L1
        ("avx2", (48, 48, 48), "f64", False, ("A", "B")),
        ("avx512", (64, 64, 64), "f32", False, ("A", "B")),  # 16 KiB: into L1 (C measured 0.97)
    ],
)
def test_model_chooses_the_next_entry_operands(isa, mnk, t, into_l2, operands):
    """Into L1 the next entry's A and B are prefetched; into L2 (A takes more than three
    quarters of a 32 KiB L1) A and C, and B with AVX-512 code only. The pinned core's L1
    decides, not the host's: with a 64 KiB L1 the 32 KiB A goes into L1 with B and no C."""
    size = {"f32": 4, "f64": 8}[t]
    key = GemmKey(*mnk, (t,) * 3, (False, False))
    cpu = cpu_core(isa, 32 << 10, 1 << 20, 32)
    assert prefetches_next_entry(key, size, cpu)
    assert prefetches_into_l2(key, size, cpu) == into_l2
    assert next_entry_operands(key, size, cpu) == operands
    big_l1 = cpu_core(isa, 64 << 10, 1 << 20, 32)
    assert not prefetches_into_l2(key, size, big_l1)
    assert next_entry_operands(key, size, big_l1) == ("A", "B")


def test_model_charges_no_a_and_c_runs_where_the_next_entry_is_prefetched():
    """Where the lowering prefetches the next entry's A and B (static, untransposed, A's entry
    8 KiB up to L1), the A and C runs of a tile that does not span M cost nothing and the B
    panel's streams stay. AVX2 f32 64^3 then gets 4 x 2 with 8 K steps (half the rows), which
    measured 1.10-1.12x the 8 x 1 of before on the Zen 4 EPYC; the other prefetched rows of
    benchmarks/gemm_ab.py keep their choice (their wider tiles measured slower). The lowering
    of a batched kernel (subviews at group_id.x) uses the prefetched problem, as the
    autotuner does (`batched_problem`)."""
    cpu = cpu_core("avx2")
    key = GemmKey(64, 64, 64, ("f32",) * 3, (False, False))
    assert prefetches_next_entry(key, 4, cpu)
    assert not prefetches_next_entry(GemmKey(64, 64, 64, ("f32",) * 3, (False, True)), 4, cpu)
    assert not prefetches_next_entry(GemmKey(32, 32, 32, ("f32",) * 3, (False, False)), 4, cpu)
    assert not prefetches_next_entry(GemmKey(96, 96, 96, ("f32",) * 3, (False, False)), 4, cpu)
    assert not prefetches_next_entry(GemmKey(-1, 64, 64, ("f32",) * 3, (False, False)), 4, cpu)
    plain = problem("avx2", 4)
    fetched = batched_problem(key, 4, 4, 8, cpu)
    assert fetched == dataclasses.replace(plain, prefetched=True)
    assert streams(4, 2, plain, cpu, True) == 2
    assert streams(4, 2, fetched, cpu, True) == 0
    assert streams(4, 3, fetched, cpu, True) == 2  # 3 columns of 64 f32: a 768 B B panel
    assert cpu_blocking(plain, cpu) == GemmBlocking(8, 1, 8)
    assert cpu_blocking(fetched, cpu) == GemmBlocking(4, 2, 8)
    for isa, size, mnk in [
        ("avx512", 4, (64, 64, 64)),
        ("avx2", 8, (48, 48, 48)),
        ("avx512", 8, (48, 48, 48)),
        ("avx2", 8, (64, 64, 64)),
        ("avx512", 8, (64, 64, 64)),
    ]:
        p = problem(isa, size, mnk)
        assert cpu_blocking(dataclasses.replace(p, prefetched=True), cpu_core(isa)) == (
            cpu_blocking(p, cpu_core(isa))
        )
    prog = parse(kernel(64, 64, 64, "f32", False))
    run_default_pipeline(prog, lib_options.core_info_for_device("cpu-avx2"))
    text = print_prog(prog)
    assert "coopmatrix<f32x8x2,matrix_acc>" in text
    assert "coopmatrix<f32x8x1,matrix_acc>" not in text


def test_the_first_row_tile_is_the_first_one_there_is():
    """(count, row blocks, first) of the row tiles: when M < r * s there is no full tile, and
    the rest tile, the only one, is the first (it brings the entry into L1)."""
    assert _row_tile_passes(23, 4, 8) == [(1, 3, True)]
    assert _row_tile_passes(23, 2, 8) == [(1, 2, True), (1, 1, False)]
    assert _row_tile_passes(64, 2, 8) == [(1, 2, True), (3, 2, False)]
    assert _row_tile_passes(16, 2, 8) == [(1, 2, True)]


def test_model_limits_unrolling_of_tiles_without_fma_slack():
    """A tile with just fma_units x fma_latency accumulators must not unroll K so deep that one
    body loads more than 1 KiB of A (f32 64^3 on AVX-512: 4 x 2 with 8 steps measured 48 % of
    peak, with 4 steps 58 %); shallower bodies and tiles with slack keep 8 steps."""
    cpu = cpu_core("avx512")
    f32 = problem("avx512", 4)
    assert stalls_unrolled(GemmBlocking(4, 2, 8), f32, cpu)  # 8 acc, 8 x 4 x 16 x 4 B = 2 KiB
    assert not stalls_unrolled(GemmBlocking(4, 2, 4), f32, cpu)  # 1 KiB
    assert not stalls_unrolled(GemmBlocking(4, 4, 8), f32, cpu)  # 16 accumulators: slack
    assert cpu_blocking(f32, cpu) == GemmBlocking(4, 2, 4)
    small = problem("avx512", 4, (32, 32, 32))
    assert not stalls_unrolled(GemmBlocking(2, 4, 8), small, cpu)  # 2 x 16 x 4 B x 8 = 1 KiB
    assert cpu_blocking(small, cpu).k_unroll == 8
    narrow = cpu_core("avx2")
    assert cpu_blocking(problem("avx2", 8, (32, 32, 32)), narrow) == GemmBlocking(8, 1, 8)


def test_registers_hold_the_accumulators_the_b_broadcasts_and_one_vector_of_a():
    """AVX2 f32 (16 ymm): 6 x 2 and 4 x 3 run without spills in the runtime's disassembly
    (12 accumulators, 2 or 3 broadcasts, A streamed through one register); 3 x 4 and 2 x 6
    spill. AVX-512: 2 x 11 and 1 x 16 spill."""
    cpu = cpu_core("avx2")
    f32 = problem("avx2", 4, (48, 48, 48))
    assert fits(GemmBlocking(6, 2, 4), f32, cpu)
    assert fits(GemmBlocking(4, 3, 4), f32, cpu)
    assert not fits(GemmBlocking(3, 4, 4), f32, cpu)
    assert not fits(GemmBlocking(2, 6, 4), f32, cpu)
    wide = cpu_core("avx512")
    assert not fits(GemmBlocking(2, 11, 4), problem("avx512", 4), wide)
    assert not fits(GemmBlocking(1, 16, 4), problem("avx512", 4), wide)
    assert fits(GemmBlocking(2, 10, 4), problem("avx512", 4), wide)


def test_row_checked_tiles_need_registers_for_the_mask_on_avx2():
    """M = 23 is no multiple of the subgroup size, so the last tile's last row block is
    masked; on AVX2 the mask and the masked loads of A take vector registers (f64 6 x 2 spilled
    in the runtime's disassembly, 5 x 2 with 2 K steps did not), AVX-512 masks in k registers."""
    narrow, wide = cpu_core("avx2"), cpu_core("avx512")
    f64 = problem("avx2", 8, (23, 37, 19))
    assert fits(GemmBlocking(6, 2, 1), problem("avx2", 8, (24, 37, 19)), narrow)
    assert not fits(GemmBlocking(6, 2, 1), f64, narrow)
    assert fits(GemmBlocking(5, 2, 2), f64, narrow)
    f32 = problem("avx2", 4, (23, 37, 19))
    assert fits(GemmBlocking(3, 3, 1), f32, narrow)
    assert not fits(GemmBlocking(3, 3, 2), f32, narrow)
    assert fits(GemmBlocking(3, 2, 4), f32, narrow)
    assert fits(GemmBlocking(6, 2, 4), problem("avx512", 4, (23, 37, 19)), wide)
    assert GemmBlocking(6, 2, 4) in all_blockings(problem("avx2", 8, (24, 37, 19)), narrow)
    assert GemmBlocking(6, 2, 4) not in all_blockings(f64, narrow)  # 12 + 1 + 2 + 3 > 16
    assert fits(GemmBlocking(4, 3, 2), f64, narrow)  # last tile: 2 x 3 + 1 + 3 + 2 + 2 <= 16


def test_a_dynamic_m_counts_the_mask_of_every_row_block_on_avx2():
    """An unknown M may leave a remainder in every tile, and the lowering then checks all
    row blocks of the remainder tile: f64 4 x 3 with 4 K steps takes 12 accumulators, 1 A and
    3 broadcasts, plus the mask, the masked A and 2 x 3 hoisted loads (24 > 16 ymm); with a
    static M that is a multiple of the subgroup size it fits, and AVX-512 masks in k
    registers."""
    narrow, wide = cpu_core("avx2"), cpu_core("avx512")
    block = GemmBlocking(4, 3, 4)
    assert not fits(block, GemmProblem(-1, 37, 19, 8, 8, 4), narrow)
    assert fits(block, GemmProblem(64, 37, 19, 8, 8, 4), narrow)
    assert fits(block, GemmProblem(-1, 37, 19, 8, 8, 8), wide)
    assert cpu_blocking(GemmProblem(-1, 37, 19, 8, 8, 4), narrow) != block


def test_model_uses_twelve_accumulators_on_avx2():
    """AVX2 48^3: f32 6 x 2 (measured 1.3x the 6 x 1 that fits with all of A live), f64
    12 x 1 (a column of 48 rows: 12 accumulators, A as memory operands)."""
    cpu = cpu_core("avx2")
    assert cpu_blocking(problem("avx2", 4, (48, 48, 48)), cpu) == GemmBlocking(6, 2, 4)
    assert cpu_blocking(problem("avx2", 8, (48, 48, 48)), cpu) == GemmBlocking(12, 1, 4)


def test_one_column_tiles_unroll_k_fully():
    """A one-column tile folds the loads of A into its FMAs, so 8 unrolled steps do not stall
    it (AVX2 f64 32^3 8 x 1: 8 steps measured 1.2x 4 steps); a tight two-column tile with
    2 KiB of A per body still does."""
    cpu = cpu_core("avx2")
    f64 = problem("avx2", 8, (32, 32, 32))
    assert not stalls_unrolled(GemmBlocking(8, 1, 8), f64, cpu)
    assert stalls_unrolled(GemmBlocking(4, 2, 8), problem("avx512", 4), cpu_core("avx512"))
    assert cpu_blocking(f64, cpu) == GemmBlocking(8, 1, 8)


def test_a_from_l2_costs_less_than_a_second_load():
    """AVX-512 f64 64^3 with a 32 KiB L1 (A does not stay in it): 8 x 2 (measured 1.1x the
    8 x 3 that doubled loads of A would prefer)."""
    p = problem("avx512", 8)
    assert cpu_blocking(p, cpu_core("avx512", l1_bytes=32 * 1024)) == GemmBlocking(8, 2, 4)


def test_unrolled_bodies_hold_at_most_64_vector_fmas():
    """Deeper K bodies only lengthen the device build (6 x 2 on AVX2 f32: 8 steps = 96 FMAs
    measured no faster than 4); 1 step always stays, whatever the tile."""
    cpu = cpu_core("avx2")
    p = problem("avx2", 4, (48, 48, 48))
    assert unroll_fits(GemmBlocking(6, 2, 4), p, cpu)
    assert not unroll_fits(GemmBlocking(6, 2, 8), p, cpu)
    assert unroll_fits(GemmBlocking(8, 1, 8), p, cpu)
    ks = {b.k_unroll for b in all_blockings(p, cpu) if (b.row_blocks, b.cols) == (6, 2)}
    assert ks == {1, 2, 4}
    assert all(
        b.row_blocks * b.cols * b.k_unroll <= 64 or b.k_unroll == 1 for b in all_blockings(p, cpu)
    )


def test_candidates_are_distinct_and_ranked():
    cpu = cpu_core("avx2")
    ranked = cpu_candidates(problem("avx2", 4), cpu, 5)
    assert len(set(ranked)) == 5
    assert ranked[0] == cpu_blocking(problem("avx2", 4), cpu)


def test_key_and_blocking_text_round_trip():
    key = GemmKey(23, -1, 19, ("f16", "f16", "f32"), (True, False))
    assert key.text() == "23x?x19:f16,f16,f32:tn"
    assert GemmKey.from_text(key.text()) == key
    b = GemmBlocking(3, 4, 2)
    assert GemmBlocking.from_text(b.text()) == b


KERNEL = """\
func @gemm(%A: memref<{t}x{m}x{k}x?>, %B: memref<{t}x{kb0}x{kb1}x?>, %C: memref<{t}x{m}x{n}x?>) {{
    %gid = group_id.x : index
    %a = subview %A[0:{m},0:{k},%gid] : memref<{t}x{m}x{k}>
    %b = subview %B[0:{kb0},0:{kb1},%gid] : memref<{t}x{kb0}x{kb1}>
    %c = subview %C[0:{m},0:{n},%gid] : memref<{t}x{m}x{n}>
    %alpha = constant 1.5 : {t}
    %beta = constant 0.5 : {t}
    gemm.n.{tb} %alpha, %a, %b, %beta, %c
}}
"""


def kernel(m: int, n: int, k: int, t: str, trans_b: bool) -> str:
    kb = (n, k) if trans_b else (k, n)
    return KERNEL.format(m=m, n=n, k=k, t=t, kb0=kb[0], kb1=kb[1], tb="t" if trans_b else "n")


def run_and_check(prog, m: int, n: int, k: int, t: str, trans_b: bool, batch: int = 5) -> None:
    dtype = {"f32": np.float32, "f64": np.float64}[t]
    rng = np.random.default_rng(1)
    b_shape = (n, k) if trans_b else (k, n)
    A, B, C = (
        np.asfortranarray(rng.standard_normal((*s, batch)).astype(dtype))
        for s in ((m, k), b_shape, (m, n))
    )
    want = np.stack(
        [
            1.5 * A[:, :, i] @ (B[:, :, i].T if trans_b else B[:, :, i]) + 0.5 * C[:, :, i]
            for i in range(batch)
        ],
        axis=2,
    )
    prog.kernel("gemm")(A, B, C, num_groups=(batch, 1, 1))
    tol = 1e-4 if t == "f32" else 1e-12
    np.testing.assert_allclose(C, want, rtol=tol, atol=tol * k)


def compiled_subgroup_size(source: str, info) -> int:
    """The subgroup size a compile for `info` gives the first function of `source`."""
    return chosen_subgroup_size(parse(source).funcs[0], info)


def cpu_device_info():
    """The core info of the OpenCL CPU device (what `-d cpu` and the Python API compile for)."""
    from tinytc_py.runtime.opencl import core_info_for

    return core_info_for(cl_device())


def cl_device():
    pytest.importorskip("pyopencl")
    from tinytc_py.runtime import device

    try:
        return device.default_device()
    except RuntimeError:
        pytest.skip("no OpenCL device")


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
@pytest.mark.parametrize(
    ("mnk", "t", "trans_b"),
    [
        ((64, 64, 64), "f32", False),
        ((48, 48, 48), "f32", False),
        ((23, 37, 19), "f64", True),
        ((16, 16, 16), "f64", False),
    ],
)
def test_pinned_isa_gemm_runs(isa, mnk, t, trans_b):
    """Kernels lowered with either ISA's block sizes (core info pinned, so on any host) are
    correct on the CPU device: the runtime runs any subgroup size it lists."""
    cl_device()
    from tinytc_py.runtime.opencl import program

    info = lib_options.core_info_for_device(f"cpu-{isa}")
    run_and_check(program(kernel(*mnk, t, trans_b), core_info=info), *mnk, t, trans_b)


@pytest.mark.parametrize("blocking", ["1x1k1", "3x2k2", "2x7k8"])
def test_tuned_blocking_overrides_the_model(blocking):
    """A blocking in the core info's gemm_blockings is what the lowering uses: the tile's
    accumulators are row_blocks x cols coopmatrix mul_adds per K step."""
    info = lib_options.core_info_for_device("cpu-avx512")
    key = GemmKey(64, 64, 64, ("f32",) * 3, (False, False))
    b = GemmBlocking.from_text(blocking)
    tuned = dataclasses.replace(info, gemm_blockings={key: b})
    prog = parse(kernel(64, 64, 64, "f32", False))
    run_default_pipeline(prog, tuned)
    text = print_prog(prog)
    assert f"coopmatrix<f32x16x{b.cols},matrix_acc>" in text
    compile_to_spirv(parse(kernel(64, 64, 64, "f32", False)), tuned)  # spirv-val


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
@pytest.mark.parametrize(
    ("mnk", "t", "blocking"), [((16, 24, 16), "f32", "1x8k8"), ((16, 16, 16), "f64", "1x16k2")]
)
def test_cpu_tiles_of_8_or_16_columns_are_held_in_pieces_of_4(isa, mnk, t, blocking):
    """A tile of 8 or 16 columns keeps its accumulators in coopmatrices of 4 columns, so no
    8- or 16-component vector crosses the K loop (the CPU runtime's JIT shuffled and spilled
    such vectors in every K step); the result is the same."""
    info = lib_options.core_info_for_device(f"cpu-{isa}")
    key = GemmKey(*mnk, (t,) * 3, (False, False))
    tuned = dataclasses.replace(info, gemm_blockings={key: GemmBlocking.from_text(blocking)})
    prog = parse(kernel(*mnk, t, False))
    run_default_pipeline(prog, tuned)
    accs = set(re.findall(r"coopmatrix<\w+x\d+x(\d+),matrix_acc>", print_prog(prog)))
    assert accs == {"4"}
    spirv = dump(compile_to_spirv(parse(kernel(*mnk, t, False)), tuned).data)
    assert not re.search(r"OpTypeVector %\w+ (8|16)$", spirv, re.M)
    cl_device()
    from tinytc_py.runtime.opencl import program

    run_and_check(program(kernel(*mnk, t, False), core_info=tuned), *mnk, t, False)


PIECES_KERNEL = """\
func @gemm(%A: memref<f32x16x16>, %B: memref<f32x{b}>, %C: memref<f32x16x{n}>) {{
    %alpha = constant 1.5 : f32
    %beta = constant {beta} : f32
    gemm{atomic}.{ta}.{tb} %alpha, %A, %B, %beta, %C
}}
"""


@pytest.mark.parametrize(
    ("ta", "tb", "atomic", "beta", "n"),
    [
        ("n", "n", "", "0.5", "16"),
        ("t", "n", "", "0.5", "16"),
        ("n", "t", "", "0.5", "16"),
        ("t", "t", "", "0.5", "16"),
        ("n", "n", ".atomic", "0.0", "16"),
        ("n", "t", ".atomic", "1.0", "16"),
        ("n", "n", "", "0.5", "?"),  # a dynamic N: the remainder's pieces are column-checked
        ("t", "t", ".atomic", "1.0", "?"),
    ],
)
def test_cpu_tile_pieces_of_4_for_every_gemm_form(ta, tb, atomic, beta, n):
    """The 4-column pieces hold for transposed A and B, atomic stores (beta 0) and adds
    (beta 1) and a dynamic N; the SPIR-V passes spirv-val (no device needed)."""
    info = lib_options.core_info_for_device("cpu-avx512")
    key = GemmKey(16, -1 if n == "?" else 16, 16, ("f32",) * 3, (ta == "t", tb == "t"))
    tuned = dataclasses.replace(info, gemm_blockings={key: GemmBlocking.from_text("1x8k2")})
    text = PIECES_KERNEL.format(
        b=f"{n}x16" if tb == "t" else f"16x{n}", n=n, beta=beta, atomic=atomic, ta=ta, tb=tb
    )
    prog = parse(text)
    run_default_pipeline(prog, tuned)
    accs = set(re.findall(r"coopmatrix<\w+x\d+x(\d+),matrix_acc>", print_prog(prog)))
    assert accs == {"4"}
    spirv = dump(compile_to_spirv(parse(text), tuned).data)  # spirv-val
    assert not re.search(r"OpTypeVector %\w+ (8|16)$", spirv, re.M)


def test_dpas_tiles_keep_the_matrix_tables_shapes_on_a_cpu_core_info():
    """A core info with both `cpu` and a matrix table lowers a gemm the table covers on the
    DPAS path, whose accumulator shapes the table fixes: they are not cut into 4-column pieces
    (which the table does not list, and which a tile of several column blocks cannot be)."""
    info = CoreInfo.intel_from_name("pvc")
    table = MatrixExt(16, (GemmShape("f16", "f16", ("f32",), (16, 32), (8, 16), (16, 32)),))
    both = dataclasses.replace(info, cpu=cpu_core("avx512"), matrix=table)
    text = """\
func @gemm(%A: memref<f16x128x128>, %B: memref<f16x128x128>, %C: memref<f32x128x128>) \
attributes {subgroup_size=16} {
    %alpha = constant 1.0 : f16
    %beta = constant 0.0 : f16
    gemm.n.n %alpha, %A, %B, %beta, %C
}
"""
    prog = parse(text)
    run_default_pipeline(prog, both)
    accs = set(re.findall(r"coopmatrix<f32x(\d+)x(\d+),matrix_acc>", print_prog(prog)))
    assert accs and all(table.have_type("f32", int(m), int(c), "acc") for m, c in accs)
    compile_to_spirv(parse(text), both)  # spirv-val


# function-body instructions without side effects: a result of one that nothing uses is dead code
PURE_OPS = {
    "OpLoad", "OpIAdd", "OpIMul", "OpUMod", "OpUDiv", "OpSConvert", "OpULessThan",
    "OpLogicalAnd", "OpInBoundsPtrAccessChain", "OpInBoundsAccessChain", "OpBitcast", "OpPhi",
    "OpExtInst", "OpFAdd", "OpFMul", "OpFNegate", "OpCompositeExtract", "OpCompositeInsert",
    "OpCompositeConstruct", "OpSubgroupBlockReadINTEL",
}  # fmt: skip


def unused_results(text: str) -> list[str]:
    """The lines of a SPIR-V dump that define a result of PURE_OPS that no line uses."""
    defs = re.findall(r"^\s*(%\w+) = (Op\w+)", text, re.M)
    uses = re.findall(r"(%\w+)\b(?! =)", text)  # \b: %12 is no use of %1
    count = {name: 0 for name, _ in defs}
    for name in uses:
        if name in count:
            count[name] += 1
    return [f"{name} = {op}" for name, op in defs if op in PURE_OPS and count[name] == 0]


ATOMIC_KERNEL = """\
func @gemm(%A: memref<{t}x20x9>, %B: memref<{t}x9x9>, %C: memref<{t}x20x9>) {{
    %alpha = constant {two} : {t}
    %beta = constant {one} : {t}
    gemm.atomic.n.t %alpha, %A, %B, %beta, %C
}}
"""


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
@pytest.mark.parametrize(
    "text",
    [
        kernel(56, 9, 9, "f64", True),
        kernel(23, 37, 19, "f32", False),
        ATOMIC_KERNEL.format(t="f64", two="2.0", one="1.0"),
        ATOMIC_KERNEL.format(t="c32", two="[2.0,0.5]", one="[1.0,0.0]"),
    ],
)
def test_cpu_gemm_spirv_has_no_dead_code(isa, text):
    """What the device JIT builds is all used: no per-lane B values beside the uniform reads
    the FMAs take, no phis or constants made for old values of atomics that nothing reads."""
    info = lib_options.core_info_for_device(f"cpu-{isa}")
    assert unused_results(dump(compile_to_spirv(parse(text), info).data)) == []


@pytest.fixture
def tuning_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(gemm_tuning, "CANDIDATES", 3)
    return tmp_path / "tuning"


@pytest.fixture
def timed(monkeypatch) -> list:
    """The kernels the device timer times (they are still timed)."""
    from tinytc_py.runtime.autotune import ClKernelTimer

    kernels = []
    real = ClKernelTimer.launcher

    def record(self, kernel):
        kernels.append(kernel)
        return real(self, kernel)

    monkeypatch.setattr(ClKernelTimer, "launcher", record)
    return kernels


class FakeTimer:
    """A device whose i-th kernel takes 1 / (i + 1) s per launch: the last candidate is
    fastest. `launches` records the index of every launch."""

    def __init__(self) -> None:
        self.kernels = []
        self.launches = []

    def device_name(self) -> str:
        return "Fake CPU-1.0"

    def launcher(self, kernel):
        self.kernels.append(kernel)
        index = len(self.kernels) - 1

        def run() -> float:
            self.launches.append(index)
            return 1 / (index + 1)

        return run


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_tuner_keeps_the_fastest_candidate(tuning_dir, isa):
    """The compiler side needs no device: it compiles one tuning kernel per candidate (A, B, C
    of the gemm's stored shapes per batch entry), keeps the fastest and stores it under the
    timer's device name and the ISA."""
    info = lib_options.core_info_for_device(f"cpu-{isa}")
    timer = FakeTimer()
    prog = parse(kernel(23, 37, 19, "f64", True))
    tuned = gemm_tuning.tune(prog, info, timer)
    key = GemmKey(23, 37, 19, ("f64",) * 3, (False, True))
    candidates = cpu_candidates(GemmProblem(23, 37, 19, 8, 8, info.cpu.lanes(8)), info.cpu, 3)
    assert tuned.gemm_blockings == {key: candidates[-1]}
    assert len(timer.kernels) == len(candidates) == 3
    f64 = np.dtype(np.float64)
    assert {k.params for k in timer.kernels} == {
        (((23, 19), f64), ((37, 19), f64), ((23, 37), f64))
    }
    assert all(k.binary.kernel(k.name).name == "tune" for k in timer.kernels)
    assert json.loads((tuning_dir / f"Fake_CPU-1.0-{isa}-tuner3.json").read_text()) == {
        f"23x37x19:f64,f64,f64:nt:sg{info.cpu.lanes(8)}": candidates[-1].text()
    }
    timer.kernels.clear()
    assert gemm_tuning.tune(prog, info, timer) == tuned
    assert timer.kernels == []


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_tuner_times_the_model_choice_in_interleaved_rounds(tuning_dir, isa):
    """The cost model's blocking is always a candidate (the first compiled); in every round
    each candidate is launched twice in a row (untimed, then timed), all candidates once."""
    info = lib_options.core_info_for_device(f"cpu-{isa}")
    timer = FakeTimer()
    timed = {}
    real = gemm_tuning.time_candidates

    def record(launches):
        timed.update(launches)
        return real(launches)

    prog = parse(kernel(23, 37, 19, "f64", False))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gemm_tuning, "time_candidates", record)
        gemm_tuning.tune(prog, info, timer)
    model = cpu_blocking(GemmProblem(23, 37, 19, 8, 8, info.cpu.lanes(8)), info.cpu)
    assert list(timed)[0] == model
    n = len(timed)
    assert n == 3
    launches = timer.launches
    assert len(launches) == 2 * n * gemm_tuning.ROUNDS
    assert launches[0::2] == launches[1::2]  # untimed, then timed
    timed_order = launches[1::2]
    rounds = [timed_order[i : i + n] for i in range(0, len(timed_order), n)]
    assert all(sorted(r) == list(range(n)) for r in rounds)


def scripted(times: list[float]):
    """A launch that takes the given seconds, one after the other."""
    it = iter(times)
    return lambda: next(it)


def test_tuner_uses_medians_and_keeps_the_model_unless_clearly_faster():
    """Untimed launches and single outliers do not decide; a candidate must beat the model's
    median by more than MARGIN to replace it, so the choice is never slower than the model's."""
    model, other, third = GemmBlocking(3, 3, 8), GemmBlocking(3, 4, 2), GemmBlocking(3, 2, 8)
    rounds = gemm_tuning.ROUNDS

    def untimed(first: float, timed: list[float]) -> list[float]:
        """Launch times: each timed one after an untimed one (`first` for all of those)."""
        return [x for t in timed for x in (first, t)]

    medians = gemm_tuning.time_candidates(
        {
            model: scripted(untimed(9.0, [1.0] * rounds)),
            other: scripted(untimed(0.1, [0.2] + [1.2] * (rounds - 1))),  # fast untimed, outlier
            third: scripted(untimed(1.0, [0.99] * (rounds - 1) + [5.0])),  # one slow round
        }
    )
    assert medians == {model: 1.0, other: 1.2, third: 0.99}
    assert gemm_tuning.choose(medians, model) == model  # 1 % faster: noise
    assert gemm_tuning.choose({**medians, third: 0.9}, model) == third
    assert gemm_tuning.choose({model: 1.0, other: 1.2}, model) == model


def test_autotune_times_once_then_hits_the_cache(tuning_dir, timed):
    """The first autotuned compile times candidates on the device and stores the fastest under
    the device's tuning file; the second compile of the same shape does no timing."""
    cl_device()
    from tinytc_py.runtime import autotune
    from tinytc_py.runtime.opencl import core_info_for, program

    m, n, k = 24, 20, 12
    run_and_check(program(kernel(m, n, k, "f32", False), autotune=True), m, n, k, "f32", False)
    assert len(timed) == gemm_tuning.CANDIDATES
    files = list(tuning_dir.glob("*.json"))
    assert len(files) == 1
    table = json.loads(files[0].read_text())
    key = GemmKey(m, n, k, ("f32",) * 3, (False, False))
    dev = cl_device()
    info = core_info_for(dev)
    sgs = compiled_subgroup_size(kernel(m, n, k, "f32", False), info)
    chosen = GemmBlocking.from_text(table[gemm_tuning.table_key(key, sgs)])
    p = GemmProblem(m, n, k, 4, 4, sgs)
    assert chosen in cpu_candidates(p, info.cpu, gemm_tuning.CANDIDATES)

    timed.clear()
    run_and_check(program(kernel(m, n, k, "f32", False), autotune=True), m, n, k, "f32", False)
    assert timed == []
    tuned = autotune.autotune(parse(kernel(m, n, k, "f32", False)), dev, info, program)
    assert tuned.gemm_blockings[key] == chosen
    assert info.gemm_blockings == {}  # the device's core info itself is not changed


def test_autotune_uses_a_stored_choice(tuning_dir, timed):
    """A choice in the tuning file is taken as it is (keyed by device, driver and ISA)."""
    dev = cl_device()
    from tinytc_py.runtime import autotune
    from tinytc_py.runtime.opencl import core_info_for, program

    info = core_info_for(dev)
    path = gemm_tuning.tuning_file(autotune.ClKernelTimer(dev, program), info)
    assert dev.driver_version.strip().replace(" ", "_") in path.name
    assert path.name.endswith(f"-{info.cpu.isa}-tuner3.json")
    key = GemmKey(16, 16, 16, ("f64",) * 3, (False, True))
    sgs = compiled_subgroup_size(kernel(16, 16, 16, "f64", True), info)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({gemm_tuning.table_key(key, sgs): "1x3k2"}))
    prog = parse(kernel(16, 16, 16, "f64", True))
    assert autotune.autotune(prog, dev, info, program).gemm_blockings == {
        key: GemmBlocking(1, 3, 2)
    }
    run_and_check(program(kernel(16, 16, 16, "f64", True), autotune=True), 16, 16, 16, "f64", True)
    assert timed == []


def test_autotune_flag_off_by_default(tuning_dir):
    cl_device()
    from tinytc_py.runtime.opencl import program

    run_and_check(program(kernel(8, 8, 8, "f32", False)), 8, 8, 8, "f32", False)
    assert not tuning_dir.exists()


def test_cli_autotune(tuning_dir, timed, tmp_path, capsysbinary):
    """tinytc --autotune -d cpu tunes on the CPU device and a second run gives the same binary
    without timing; other devices cannot be timed."""
    cl_device()
    from tinytc_py.cli import tinytc as tinytc_cli

    src = tmp_path / "g.ir"
    src.write_text(kernel(8, 12, 4, "f32", False))
    out = tmp_path / "g.spv"
    assert tinytc_cli.main(["--autotune", "-d", "cpu", "-o", str(out), str(src)]) == 0
    assert out.read_bytes()[:4] == b"\x03\x02\x23\x07"
    (table,) = (json.loads(f.read_text()) for f in tuning_dir.glob("*.json"))
    sgs = compiled_subgroup_size(src.read_text(), cpu_device_info())
    assert list(table) == [f"8x12x4:f32,f32,f32:nn:sg{sgs}"]
    assert len(timed) == gemm_tuning.CANDIDATES
    timed.clear()
    again = tmp_path / "again.spv"
    assert tinytc_cli.main(["--autotune", "-d", "cpu", "-o", str(again), str(src)]) == 0
    assert timed == []
    assert again.read_bytes() == out.read_bytes()
    assert tinytc_cli.main(["--autotune", "-d", "pvc", str(src)]) == 1
    err = capsysbinary.readouterr().err.decode()
    assert "--autotune" in err and "-d cpu" in err


def test_api_autotune_flag(tuning_dir):
    """tinytc_py.compile(..., flags=["autotune"]) tunes on the device it compiles for."""
    cl_device()
    import tinytc_py

    prog = tinytc_py.compile(kernel(8, 4, 4, "f64", False), flags=["autotune"])
    assert "gemm" in repr(prog)
    (table,) = (json.loads(f.read_text()) for f in tuning_dir.glob("*.json"))
    sgs = compiled_subgroup_size(kernel(8, 4, 4, "f64", False), cpu_device_info())
    assert list(table) == [f"8x4x4:f64,f64,f64:nn:sg{sgs}"]
