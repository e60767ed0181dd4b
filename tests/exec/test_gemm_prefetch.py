"""Prefetch on SIMD CPU cores: cooperative_matrix_prefetch becomes x86 prefetch instructions
(inline assembly, one cache line per lane), and a batched gemm whose A and B are the work-group's
entry of a stack (subview at group_id.x) prefetches the next entry's A and B while it computes
(docs/_benchmarks.rst, "What limits a batched GEMM row"); for an A that fills L1 the next
entry's A and C, and B with AVX-512 code only. The SPIR-V expectations pin the core
info, so they hold on any host; the kernels run on the CPU device against NumPy, the last
work-group prefetching its own entry (the stacks have no next one)."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

import tinytc_py
from tinytc_py import options as lib_options
from tinytc_py.compiler import compile_to_spirv
from tinytc_py.passes.lower_linalg import LowerLinalg
from tinytc_py.passes.pipeline import default_pipeline
from tinytc_py.spirv import dump
from tinytc_py.target.core_info import CoreInfo
from tinytc_py.text.dialect import parse
from tinytc_py.text.printer import print_prog

from .test_gemm_tuning import cl_device, kernel, run_and_check

pytestmark = pytest.mark.timeout(300, method="thread")

PREFETCH_ASM = re.compile(r'OpAsmINTEL %\d+ %\d+ %\d+ "prefetcht(\d) \(\$0\)" "r"')


def spirv_text(source: str, info: CoreInfo) -> str:
    """The SPIR-V dump of `source` compiled for `info` (spirv-val ran on it)."""
    return dump(compile_to_spirv(parse(source), info).data)


def cpu(isa: str) -> CoreInfo:
    return lib_options.core_info_for_device(f"cpu-{isa}")


def asm_ids(text: str) -> list[str]:
    return re.findall(r"(%\d+) = OpAsmINTEL", text)


def calls(text: str) -> int:
    return sum(len(re.findall(rf"OpAsmCallINTEL %\d+ {a} ", text)) for a in asm_ids(text))


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
@pytest.mark.parametrize(
    ("mnk", "t", "hint"),
    # A's entry 16 KiB, 18 KiB, 20 KiB with N != K (A's columns in proportion to C's), 24 KiB
    # (three quarters of the 32 KiB L1: still into L1), 30 KiB (just below L1: into L2) and
    # 32 KiB (all of L1: into L2)
    [
        ((64, 64, 64), "f32", "0"),
        ((48, 48, 48), "f64", "0"),
        ((64, 24, 80), "f32", "0"),
        ((48, 64, 64), "f64", "0"),
        ((60, 64, 64), "f64", "2"),
        ((64, 64, 64), "f64", "2"),
    ],
)
def test_batched_gemm_prefetches_the_next_entry(isa, mnk, t, hint):
    """The gemm of a stack entry at group_id.x whose A takes 16 KiB up to L1 has prefetch
    calls (A and B of entry + 1; prefetcht2 when A takes more than three quarters of L1, and
    then A and C of entry + 1, and B with AVX-512 code only) and computes what NumPy does, for every
    entry including the last, whose next entry is clamped to itself (one signed min for each
    prefetched entry: no view past the stack)."""
    text = spirv_text(kernel(*mnk, t, False), cpu(isa))
    assert [m.group(1) for m in PREFETCH_ASM.finditer(text)] == [hint]
    assert calls(text) >= 2
    views = 3 if isa == "avx512" and hint == "2" else 2
    assert len(re.findall(r"OpExtInst %\d+ %\d+ s_min ", text)) == views
    cl_device()
    from tinytc_py.runtime.opencl import program

    run_and_check(program(kernel(*mnk, t, False), core_info=cpu(isa)), *mnk, t, False, batch=7)


SHARED_C = """\
func @gemm(%A: memref<f64x64x64x?>, %B: memref<f64x64x64x?>, %C: memref<f64x64x64>) {
    %gid = group_id.x : index
    %a = subview %A[0:64,0:64,%gid] : memref<f64x64x64>
    %b = subview %B[0:64,0:64,%gid] : memref<f64x64x64>
    gemm.atomic.n.n 1.0, %a, %b, 1.0, %C
}
"""


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_next_entry_into_l2_prefetches_c_and_b_with_avx512_code(isa):
    """64^3 f64 (A fills L1: prefetched into L2): each column chunk prefetches its share of
    the next entry's A and C (as many lines of each), and of B (as many again) with AVX-512
    code only. Against the same gemm into one C shared by all entries (an accumulation: no
    next C), which prefetches A (and B), the kernel has 3/2 the prefetch calls with AVX-512
    code and twice with AVX2 code. The shared-C kernel computes what NumPy does."""
    stack_c = calls(spirv_text(kernel(64, 64, 64, "f64", False), cpu(isa)))
    shared_c = calls(spirv_text(SHARED_C, cpu(isa)))
    assert shared_c > 0
    if isa == "avx512":
        assert 2 * stack_c == 3 * shared_c
    else:
        assert stack_c == 2 * shared_c
    cl_device()
    from tinytc_py.runtime.opencl import program

    rng = np.random.default_rng(3)
    a, b = (np.asfortranarray(rng.standard_normal((64, 64, 3))) for _ in range(2))
    c = np.zeros((64, 64), order="F")
    program(SHARED_C, core_info=cpu(isa)).kernel("gemm")(a, b, c, num_groups=(3, 1, 1))
    want = sum(a[:, :, i] @ b[:, :, i] for i in range(3))
    np.testing.assert_allclose(c, want, rtol=1e-12, atol=1e-12 * 64 * 3)


@pytest.mark.parametrize(
    "source",
    [
        # one gemm, no batch
        "func @gemm(%A: memref<f32x64x64>, %B: memref<f32x64x64>, %C: memref<f32x64x64>) {\n"
        "    gemm.n.n 1.0, %A, %B, 0.0, %C\n}\n",
        # the entry at group_id.y: which one a thread runs next is not id + 1
        "func @gemm(%A: memref<f32x64x64x?>, %B: memref<f32x64x64x?>, %C: memref<f32x64x64x?>) {\n"
        "    %gid = group_id.y : index\n"
        "    %a = subview %A[0:64,0:64,%gid] : memref<f32x64x64>\n"
        "    %b = subview %B[0:64,0:64,%gid] : memref<f32x64x64>\n"
        "    %c = subview %C[0:64,0:64,%gid] : memref<f32x64x64>\n"
        "    gemm.n.n 1.0, %a, %b, 0.0, %c\n}\n",
        # B shared by all entries
        "func @gemm(%A: memref<f32x64x64x?>, %B: memref<f32x64x64>, %C: memref<f32x64x64x?>) {\n"
        "    %gid = group_id.x : index\n"
        "    %a = subview %A[0:64,0:64,%gid] : memref<f32x64x64>\n"
        "    %c = subview %C[0:64,0:64,%gid] : memref<f32x64x64>\n"
        "    gemm.n.n 1.0, %a, %B, 0.0, %c\n}\n",
        # group_id.x as the row offset of A (a kept mode), not a stack's batch mode
        "func @gemm(%A: memref<f32x4096x64>, %B: memref<f32x64x64x?>, %C: memref<f32x64x64x?>) {\n"
        "    %gid = group_id.x : index\n"
        "    %a = subview %A[%gid:64,0:64] : memref<f32x64x64,strided<1,4096>>\n"
        "    %b = subview %B[0:64,0:64,%gid] : memref<f32x64x64>\n"
        "    %c = subview %C[0:64,0:64,%gid] : memref<f32x64x64>\n"
        "    gemm.n.n 1.0, %a, %b, 0.0, %c\n}\n",
        # transposed A, transposed B
        "func @gemm(%A: memref<f32x64x64x?>, %B: memref<f32x64x64x?>, %C: memref<f32x64x64x?>) {\n"
        "    %gid = group_id.x : index\n"
        "    %a = subview %A[0:64,0:64,%gid] : memref<f32x64x64>\n"
        "    %b = subview %B[0:64,0:64,%gid] : memref<f32x64x64>\n"
        "    %c = subview %C[0:64,0:64,%gid] : memref<f32x64x64>\n"
        "    gemm.t.n 1.0, %a, %b, 0.0, %c\n}\n",
        kernel(64, 64, 64, "f32", True),
    ],
    ids=["single", "group_id.y", "shared-B", "row-offset", "transA", "transB"],
)
def test_other_gemms_do_not_prefetch(source):
    assert asm_ids(spirv_text(source, cpu("avx512"))) == []


@pytest.mark.parametrize(("mnk", "t"), [((32, 32, 32), "f32"), ((64, 64, 72), "f64")])
def test_entries_outside_the_size_band_do_not_prefetch(mnk, t):
    """A's entry below 8 KiB (32^3 f32: 4 KiB, one page) or larger than L1 (36 KiB)
    gets no prefetch."""
    assert asm_ids(spirv_text(kernel(*mnk, t, False), cpu("avx512"))) == []


def test_gpu_gemm_does_not_prefetch():
    """Only SIMD CPU cores get the CPU prefetch (the GPU paths have their own, or none)."""
    info = CoreInfo.intel_from_name("pvc")
    info.matrix = None
    assert "prefetcht" not in spirv_text(kernel(64, 64, 64, "f32", False), info)


PREFETCH_KERNEL = """\
func @k(%A: memref<f32x{rows}x{cols}{stride}>, %B: memref<f32x{rows}x{cols}{stride}>) {{
    %z = constant 0 : index
    parallel {{
        cooperative_matrix_prefetch 0, %A[%z,%z], {rows}, {cols}
        %x = cooperative_matrix_load %A[%z,%z] : coopmatrix<f32x16x1,matrix_acc>
        cooperative_matrix_store %x, %B[%z,%z]
    }}
}}
"""


@pytest.mark.parametrize(
    ("rows", "cols", "rounds"),
    # per column one point every 16 rows (a 64 B line); 16 lanes; at most 64 rounds
    [(64, 2, 1), (16, 1, 1), (17, 8, 1), (17, 9, 2), (100, 8, 4), (128, 128, 64), (128, 129, 0)],
)
def test_prefetch_instruction_lines(rows, cols, rounds):
    """A cooperative_matrix_prefetch of rows x cols covers each column's lines in rounds of
    one prefetch per lane: ceil(ceil(rows/16) * cols / 16) calls, none beyond 64 rounds."""
    source = PREFETCH_KERNEL.format(rows=rows, cols=cols, stride="")
    text = spirv_text(source, cpu("avx512"))
    assert calls(text) == rounds


def test_prefetch_of_strided_rows_is_left_out():
    """Rows that are not contiguous (stride0 != 1) are not prefetched."""
    source = PREFETCH_KERNEL.format(rows=16, cols=4, stride=",strided<2,64>")
    assert calls(spirv_text(source, cpu("avx512"))) == 0


def test_prefetch_instruction_runs():
    """A kernel with a CPU prefetch builds and runs on the CPU device: the copy it guards is
    intact."""
    cl_device()
    from tinytc_py.runtime.opencl import program

    source = PREFETCH_KERNEL.format(rows=64, cols=2, stride="")
    a = np.asfortranarray(np.arange(128, dtype=np.float32).reshape(64, 2))
    b = np.zeros_like(a)
    program(source, core_info=cpu("avx512")).kernel("k")(a, b, num_groups=(1, 1, 1))
    np.testing.assert_array_equal(b[:16, 0], a[:16, 0])
    assert not b[16:].any() and not b[:, 1].any()


def test_large_prefetch_is_left_out_and_runs():
    """A 1024x1024 f32 prefetch (4096 rounds; straight-line it was a megabyte of SPIR-V) is
    not prefetched at all: the module stays small, and the kernel builds and runs."""
    cl_device()
    from tinytc_py.runtime.opencl import program

    source = PREFETCH_KERNEL.format(rows=1024, cols=1024, stride="")
    binary = compile_to_spirv(parse(source), cpu("avx512"))
    assert len(binary.data) < 8 << 10
    assert calls(dump(binary.data)) == 0
    a = np.asfortranarray(np.arange(1 << 20, dtype=np.float32).reshape(1024, 1024))
    b = np.zeros_like(a)
    program(source, core_info=cpu("avx512")).kernel("k")(a, b, num_groups=(1, 1, 1))
    np.testing.assert_array_equal(b[:16, 0], a[:16, 0])
    assert not b[16:].any() and not b[:, 1:].any()


def lowered(source: str, info: CoreInfo) -> str:
    """The printed program of `source` after lower-linalg for `info`."""
    prog = parse(source)
    sink = io.StringIO()
    for p in default_pipeline(info):
        for func in prog.funcs:
            p.run(func, prog.ctx, sink)
        if isinstance(p, LowerLinalg):
            break
    return print_prog(prog)


def prefetched_blocks(source: str, info: CoreInfo) -> dict[str, list[tuple[int, int, int, int]]]:
    """(row, column, rows, columns) of every next-entry prefetch of `source` after
    lower-linalg, per operand ("A", "B", "C", by the stack the view is of), evaluated over the
    column-chunk loops around them (the index arithmetic of the printed IR: constant, add,
    mul, div, and `for` with an optional step)."""
    lines = lowered(source, info).splitlines()
    stacks = {m.group(1): m.group(2) for m in map(SUBVIEW.search, lines) if m}
    last = max(k for k, line in enumerate(lines) if "cooperative_matrix_prefetch" in line)
    blocks: dict[str, list[tuple[int, int, int, int]]] = {}

    def run(k: int, env: dict[str, int]) -> None:
        while k <= last:
            line = lines[k].strip()
            if m := re.fullmatch(r"(%\w+) = constant (\d+) : index", line):
                env[m.group(1)] = int(m.group(2))
            elif m := re.fullmatch(r"(%\w+) = (add|mul|div) (%\w+), (%\w+) : index", line):
                x, y = env[m.group(3)], env[m.group(4)]
                env[m.group(1)] = {"add": x + y, "mul": x * y, "div": x // y}[m.group(2)]
            elif m := re.fullmatch(r"for (%\w+)=(%\w+),(%\w+)(?:,(%\w+))? \{", line):
                step = env[m.group(4)] if m.group(4) else 1
                for i in range(env[m.group(2)], env[m.group(3)], step):
                    run(k + 1, {**env, m.group(1): i})
                return
            elif m := PREFETCH.fullmatch(line):
                view, p0, p1, rows, cols = m.groups()
                blocks.setdefault(stacks[view], []).append((env[p0], env[p1], int(rows), int(cols)))
            k += 1

    start = next(k for k, line in enumerate(lines) if line.strip() == "parallel {")
    run(start + 1, {})
    return blocks


SUBVIEW = re.compile(r"(%\d+) = subview %(\w)\[")
PREFETCH = re.compile(r"cooperative_matrix_prefetch 2, (%\d+)\[(%\w+),(%\w+)\], (\d+), (\d+)")


def covers(blocks: list[tuple[int, int, int, int]], rows: int, cols: int) -> bool:
    """Whether `blocks` of whole columns (row 0, `rows` rows) tile columns [0, cols) in order."""
    starts, ends = [b[1] for b in blocks], [b[1] + b[3] for b in blocks]
    whole = all(b[0] == 0 and b[2] == rows for b in blocks)
    return whole and starts == [0, *ends[:-1]] and ends[-1] == cols


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_next_entry_shares_are_the_chunks_blocks(isa):
    """48x100x80 f64 (A 30 KiB: into L2; M, N and K differ): per column chunk [n0, n0 + q) of
    C, the next entry's C is prefetched at [0, n0] as M rows x q columns (and B, with AVX-512
    code, at [0, n0] as K rows x q columns), so that the chunks together cover all N columns;
    A's shares are M rows at [0, n0 K / N] (ceil(q K / N) columns each), in order, covering
    its K columns and none past them."""
    m, n, k = 48, 100, 80
    blocks = prefetched_blocks(kernel(m, n, k, "f64", False), cpu(isa))
    assert sorted(blocks) == (["A", "B", "C"] if isa == "avx512" else ["A", "C"])
    c = blocks["C"]
    assert covers(c, m, n)
    if isa == "avx512":
        assert blocks["B"] == [(0, n0, k, q) for _, n0, _, q in c]
        assert covers(blocks["B"], k, n)
    a = blocks["A"]
    assert len(a) == len(c)
    assert [b[1] for b in a] == [n0 * k // n for _, n0, _, _ in c]
    assert all(b[0] == 0 and b[2] == m and b[1] + b[3] <= k for b in a)
    assert {col for b in a for col in range(b[1], b[1] + b[3])} == set(range(k))


def corner_probes(match: re.Match[str]) -> str:
    """A next-entry prefetch (PREFETCH_LINE) replaced by a load and store back of each of its
    block's two corners, which bounds-checks mode checks."""
    ind, view, p0, p1, rows, cols = match.groups()
    t = f"%probe{match.start()}"
    i, j = f"{t}i", f"{t}j"
    return "\n".join(
        ind + line
        for line in [
            f"{t}r = constant {int(rows) - 1} : index",
            f"{t}c = constant {int(cols) - 1} : index",
            f"{i} = add {p0}, {t}r : index",
            f"{j} = add {p1}, {t}c : index",
            f"{t}x = load {view}[{p0},{p1}] : f64",
            f"store {t}x, {view}[{p0},{p1}]",
            f"{t}y = load {view}[{i},{j}] : f64",
            f"store {t}y, {view}[{i},{j}]",
        ]
    )


PREFETCH_LINE = re.compile(r"( *)" + PREFETCH.pattern)


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_next_entry_prefetch_blocks_are_in_bounds(isa):
    """Each next-entry prefetch of 48x100x80 f64, its block's two corners loaded instead, runs
    in bounds-checks mode on the CPU device for every work-group including the last (whose
    next entry is clamped to its own): no prefetch block reaches past its view."""
    cl_device()
    from tinytc_py.runtime.device import default_device

    text, probes = PREFETCH_LINE.subn(
        corner_probes, lowered(kernel(48, 100, 80, "f64", False), cpu(isa))
    )
    assert probes == (3 if isa == "avx512" else 2)
    probe = tinytc_py.compile(
        tinytc_py.parse(text, name="probe"),
        device=default_device(),
        target=cpu(isa),
        flags=["bounds-checks"],
    )
    rng = np.random.default_rng(5)
    operands = [
        np.asfortranarray(rng.standard_normal(s)) for s in [(48, 80, 3), (80, 100, 3), (48, 100, 3)]
    ]
    probe.kernel("gemm")(*operands, num_groups=(3, 1, 1))
