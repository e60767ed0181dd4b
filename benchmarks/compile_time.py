"""Compile time: tensor-language text to a SPIR-V binary, in-process, median of many runs.

    .venv/bin/python benchmarks/compile_time.py [--repeat N] [-d pvc|tgl|bmg|cpu] [--detail]
                                                [--profile KERNEL] [-k KERNEL]...

Cold times (the kernel cache is not involved): this script times the steps of compile_to_spirv
one by one on a fresh parse each run:
- parse: text -> IR (lexer, preprocessor, parser, verifier);
- compile: the default pass pipeline, SPIR-V conversion, capex, the feature check and assembly
  (with --detail also split into "passes" and "convert" = conversion + capex + assembly);
- validate: SPIRV-Tools' validator, in the process when `make capi` built
  build/lib/libtinytc_spirv_val.so, else the spirv-val program (3-4 ms more per module). The
  compiler runs it, and check-ir after the lowerings, only with TINYTC_VALIDATE=1 or in
  bounds-checked mode (self_checks.py); "total" includes the validation only when the
  environment asks for it, as compile_to_spirv does.
"Cold" also means no shape seen before: the conversion keeps two per-process memos that depend
only on a cooperative-matrix shape (the layout tables and the 2-D block-message plans), which a
process compiling many kernels of one shape reuses; each run starts with them emptied
(`forget_shape_memos`), so repeating a kernel does not measure them warm.
"off": `binary_of(text)` with the kernel cache off (TINYTC_CACHE=0), the cold compile as a
caller pays it and the baseline of "miss": unlike "total" it includes the garbage collector's
scan that starts right after the compile, which pauses the collector (gc_pause.py).
Cached time ("hit"): `binary_of(text)` answered by the kernel cache from disk (a temporary
folder, filled once; the in-process memo is cleared before each run, so every run reads,
checks and decodes the entry). "memo": `binary_of(text)` again in the same process, answered by
the in-process memo before the text is parsed. "miss": `binary_of(text)` with the cache on and a
new empty folder each run, what a program's first start pays: the compile plus the folder's
check, the cache's key (with the compiler version looked up again: in this checkout the digest
the compiled modules' import hook took, or without it a stat of every source file) and the
lookup of the entry (SPIR-V takes no build lock); kernels/, its mark and the entry are written
behind (kernel_cache/writer.py), mostly after the time is taken, and the statistics at exit. "miss inst":
the same as an installed package pays it, whose compiler version is one file read (the digest
its wheel recorded; here the checkout's written to a temporary folder that the lookup is pointed
at). "off", "miss" and "miss inst" are timed in turn, one run of each per round. A kernel
that fails to compile is shown as FAILED, and the table goes on; -k picks
kernels by name. Each column is the median of its own step, so "total" (the median of the per-run sums)
need not equal their sum.

The step columns are the process's CPU time (the compiler is single-threaded, so on an idle
machine this equals the elapsed time; on a shared one, elapsed time mostly measures the other
processes); "wall" columns give the elapsed time of the same runs (total) and of the hits, as
the issue that set the goals measured it. The header names the CPU and whether the compiled
modules (src/tinytc_py/compiled.py) were in use.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from programs import PROGRAMS
from timing import cpu_description
from tinytc_py import compiled, kernel_cache, self_checks
from tinytc_py.analysis.coopmatrix_layout import coop_layout_memo
from tinytc_py.compiler import binary_of
from tinytc_py.errors import TinytcError
from tinytc_py.gc_pause import paused_gc
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.region import Prog, Region
from tinytc_py.kernel_cache import version, writer
from tinytc_py.options import DEVICES, core_info_for_device
from tinytc_py.passes.pipeline import run_default_pipeline
from tinytc_py.spirv.assembler import assemble
from tinytc_py.spirv.capex import capex, check_features
from tinytc_py.spirv.convert import convert_prog
from tinytc_py.spirv.convert.coopmatrix_dpas import plan_messages
from tinytc_py.spirv.validate import validate
from tinytc_py.target.core_info import CoreInfo
from tinytc_py.text.dialect import parse

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "ir"

ELEMENTWISE = """\
func @axpby(%alpha: f32, %x: memref<f32x?>, %beta: f32, %y: memref<f32x?>) {
    %c0 = constant 0 : index
    %n = size %x[0] : index
    foreach (%i) = (%c0), (%n) {
        %a = load %x[%i] : f32
        %b = load %y[%i] : f32
        %ax = mul %alpha, %a : f32
        %by = mul %beta, %b : f32
        %r = add %ax, %by : f32
        store %r, %y[%i]
    }
}
"""

LOOP = """\
func @colsum(%A: memref<f64x?x?>, %s: memref<f64x?>) {
    %j = group_id.x : index
    %m = size %A[0] : index
    %c0 = constant 0 : index
    %c2 = constant 2 : index
    %z = constant 0.0 : f64
    %sum = for %i=%c0,%m,%c2 init(%acc=%z) -> (f64) {
        %v = load %A[%i, %j] : f64
        %acc2 = add %acc, %v : f64
        yield (%acc2)
    } attributes {unroll=2}
    store %sum, %s[%j]
}
"""

GROUP = """\
func @grp(%G: group<memref<f32x?x3>x?, offset: ?>, %out: memref<f32x?x3>) {
    %id = group_id.x : index
    %m = load %G[%id] : memref<f32x?x3>
    %n = size %m[0] : index
    %c0 = constant 0 : index
    %c3 = constant 3 : index
    for %j=%c0,%c3 {
        %acc0 = constant 0.0 : f32
        %s = for %i=%c0,%n init(%acc=%acc0) -> (f32) {
            %x = load %m[%i, %j] : f32
            %a2 = add %acc, %x : f32
            yield (%a2)
        }
        store %s, %out[%id, %j]
    }
}
"""

ALLOCA_BARRIER = """\
func @transpose_slm(%A: memref<f32x32x32x?>, %B: memref<f32x32x32x?>) {
    %k = group_id.x : index
    %a = subview %A[0:32,0:32,%k] : memref<f32x32x32>
    %b = subview %B[0:32,0:32,%k] : memref<f32x32x32>
    %t = alloca : memref<f32x32x32,local>
    %c0 = constant 0 : index
    %c32 = constant 32 : index
    foreach (%i, %j) = (%c0, %c0), (%c32, %c32) {
        %v = load %a[%i, %j] : f32
        store %v, %t[%i, %j]
    }
    foreach (%i, %j) = (%c0, %c0), (%c32, %c32) {
        %v = load %t[%j, %i] : f32
        store %v, %b[%i, %j]
    }
}
"""


# Three chained GEMMs: A_i from a group argument, two intermediates in local memory (alloca).
GEMM_CHAIN3 = """\
func @gemm_chain3(%A: group<memref<f32x32x32>x?>, %B: memref<f32x32x32x?>,
                  %C: memref<f32x32x32x?>) {
    %gid = group_id.x : index
    %a = load %A[%gid] : memref<f32x32x32>
    %b = subview %B[0:32,0:32,%gid] : memref<f32x32x32>
    %c = subview %C[0:32,0:32,%gid] : memref<f32x32x32>
    %t1 = alloca : memref<f32x32x32,local>
    %t2 = alloca : memref<f32x32x32,local>
    %one = constant 1.0 : f32
    %zero = constant 0.0 : f32
    gemm.n.n %one, %a, %b, %zero, %t1
    gemm.n.t %one, %t1, %b, %zero, %t2
    gemm.t.n %one, %t2, %a, %zero, %c
}
"""


def arith_chain(n: int) -> str:
    """One foreach whose body is a chain of about `n` dependent scalar instructions."""
    lines = [
        "func @chain(%x: memref<f32x?>, %y: memref<f32x?>) {",
        "    %c0 = constant 0 : index",
        "    %n = size %x[0] : index",
        "    %h = constant 0.5 : f32",
        "    foreach (%i) = (%c0), (%n) {",
        "        %v0 = load %x[%i] : f32",
    ]
    ops = ("mul", "add", "sub", "max")
    for k in range(1, n + 1):
        lines.append(f"        %v{k} = {ops[k % len(ops)]} %v{k - 1}, %h : f32")
    lines += [f"        store %v{n}, %y[%i]", "    }", "}", ""]
    return "\n".join(lines)


def example(name: str) -> str:
    return (EXAMPLES / name).read_text(encoding="utf-8")


def program(name: str) -> str:
    return PROGRAMS[name].read_text(encoding="utf-8")


# name -> source text; gemm stays in the list and compiles once its lowering lands.
KERNELS: dict[str, Callable[[], str]] = {
    "axpby (foreach)": lambda: ELEMENTWISE,
    "colsum (for, dynamic)": lambda: LOOP,
    "group argument": lambda: GROUP,
    "alloca + barrier": lambda: ALLOCA_BARRIER,
    "matvec_batched.ir": lambda: example("matvec_batched.ir"),
    "chain of 1000 ops": lambda: arith_chain(1000),
    "gemm.ir": lambda: example("gemm.ir"),
    "gemm 16^3 f32 batched": lambda: program("batched 16^3 GEMM"),
    "3 gemms+group+alloca": lambda: GEMM_CHAIN3,
    "attention block": lambda: program("attention block"),
    "four GEMMs f64": lambda: program("four GEMMs f64"),
}


def count(region: Region) -> int:
    return sum(1 + sum(count(r) for r in inst.regions) for inst in region.insts)


def count_prog(prog: Prog) -> int:
    return sum(count(func.body) for func in prog.funcs)


clock = time.process_time


def ms_since(start: float) -> float:
    return (clock() - start) * 1e3


def forget_shape_memos() -> None:
    """Empty the conversion's per-shape memos, so that a run compiles as if the process had
    never seen this kernel's cooperative-matrix shapes (see the module docstring)."""
    coop_layout_memo.cache_clear()
    plan_messages.cache_clear()


def compile_steps(text: str, info: CoreInfo) -> tuple[dict[str, float], bytes]:
    """One compilation, the steps of compiler.compile_to_spirv timed separately (CPU ms), and
    its elapsed time ("wall total")."""
    forget_shape_memos()
    wall = time.perf_counter()
    with paused_gc():  # as compiler.py does
        t0 = clock()
        prog = parse(text, CompilerContext(), "bench.ir")
        t = {"parse": ms_since(t0)}
        t0 = clock()
        run_default_pipeline(prog, info, parsed=True)  # a fresh parse, as compile_text's
        t["passes"] = ms_since(t0)
        t0 = clock()
        module, _kernels = convert_prog(prog, info)
        capex(module)
        check_features(module, info, prog.loc)
        data = assemble(module)
        t["convert"] = ms_since(t0)
        t0 = clock()
        validate(data)
        t["validate"] = ms_since(t0)
        t["compile"] = t["passes"] + t["convert"]
        t["total"] = t["parse"] + t["compile"] + (t["validate"] if self_checks.requested() else 0)
        t["wall total"] = (time.perf_counter() - wall) * 1e3
    return t, data


def measure(text: str, info: CoreInfo, repeat: int) -> tuple[dict[str, float], bytes]:
    runs: dict[str, list[float]] = {}
    data = b""
    for _ in range(repeat):
        times, data = compile_steps(text, info)
        for key, value in times.items():
            runs.setdefault(key, []).append(value)
    return {key: statistics.median(values) for key, values in runs.items()}, data


@contextlib.contextmanager
def installed_version(digest: str) -> Iterator[None]:
    """The compiler version looked up as in an installed package: from a recorded digest
    (version.VERSION_FILE, which the wheel build writes; here `digest`), in a temporary folder
    that the lookup reads instead of this checkout's package folder."""
    with tempfile.TemporaryDirectory(prefix="tinytc-bench-version-") as folder:
        Path(folder, version.VERSION_FILE).write_text(digest, encoding="ascii")
        checkout, compiled.PACKAGE = compiled.PACKAGE, folder
        try:
            yield
        finally:
            compiled.PACKAGE = checkout
            version.compiler_version.cache_clear()


def run_off(text: str, info: CoreInfo) -> float:
    """CPU ms of `binary_of` with the cache off (TINYTC_CACHE=0): a cold compile as a caller
    pays it, the baseline of "miss". The collector's scan that the compile's allocations
    start comes after the call, in "off" and "miss" alike (the kernel cache keeps the compile's
    pause of the collector over a miss's bookkeeping and the off path's count: gc_pause.py,
    kernel_cache._stored)."""
    os.environ[kernel_cache.ENV_SWITCH] = "0"
    try:
        forget_shape_memos()
        t0 = clock()
        binary_of(text, info)
        return ms_since(t0)
    finally:
        del os.environ[kernel_cache.ENV_SWITCH]


def run_miss(text: str, info: CoreInfo) -> float:
    """CPU ms of `binary_of` with the cache on and nothing cached, as at a program's first
    start: a new empty folder under the caller's cache folder (also new for every kernel),
    no shape memo, and the compiler version not yet looked up. The time ends when `binary_of`
    returns: the entry is written behind (kernel_cache/writer.py), overlapping what a program
    does next; the run waits for that write after its time is taken, so it never lands in the
    next run's."""
    parent = os.environ["TINYTC_CACHE_DIR"]
    os.environ["TINYTC_CACHE_DIR"] = tempfile.mkdtemp(prefix="miss-", dir=parent)
    try:
        kernel_cache.clear_memo()
        version.compiler_version.cache_clear()
        forget_shape_memos()
        t0 = clock()
        binary_of(text, info)
        return ms_since(t0)
    finally:
        writer.wait()
        os.environ["TINYTC_CACHE_DIR"] = parent


def measure_first_start(text: str, info: CoreInfo, repeat: int) -> tuple[float, float, float]:
    """Median CPU ms of "off", "miss" and "miss inst", run in turn within each of `repeat`
    rounds, so that a change of the machine's load meets all three alike (on a shared machine
    three columns timed one after the other differed by more than the cache's own cost); the
    order rotates from round to round, so none is always the one after another's run."""
    digest = version.compiler_version()

    def miss_installed() -> float:
        with installed_version(digest):
            return run_miss(text, info)

    kinds = (lambda: run_off(text, info), lambda: run_miss(text, info), miss_installed)
    runs: tuple[list[float], list[float], list[float]] = ([], [], [])
    for round_ in range(repeat):
        for i in range(len(kinds)):
            j = (round_ + i) % len(kinds)
            runs[j].append(kinds[j]())
    off, miss, miss_inst = (statistics.median(r) for r in runs)
    return off, miss, miss_inst


def measure_hit(text: str, info: CoreInfo, repeat: int) -> tuple[float, float]:
    """Median CPU and elapsed ms of a kernel cache hit from disk (the caller points the cache
    at a temp dir)."""
    binary_of(text, info)
    cpu, wall = [], []
    for _ in range(repeat):
        kernel_cache.clear_memo()
        w0, t0 = time.perf_counter(), clock()
        binary_of(text, info)
        cpu.append(ms_since(t0))
        wall.append((time.perf_counter() - w0) * 1e3)
    return statistics.median(cpu), statistics.median(wall)


def measure_memo(text: str, info: CoreInfo, repeat: int) -> float:
    """Median CPU ms of `binary_of` answered by the in-process memo (the text compiled
    before in the process); each sample is the mean of 100 calls, below the clock's grain."""
    binary_of(text, info)
    cpu = []
    for _ in range(repeat):
        t0 = clock()
        for _ in range(100):
            binary_of(text, info)
        cpu.append(ms_since(t0) / 100)
    return statistics.median(cpu)


def profile(text: str, info: CoreInfo) -> None:
    prof = cProfile.Profile()
    prof.runcall(compile_steps, text, info)
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(25)


def row(name: str, insts: str, cells: list[str]) -> str:
    return f"{name:<22} {insts:>12} " + " ".join(f"{c:>11}" for c in cells)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=41, help="runs per kernel (median is shown)")
    ap.add_argument("-d", "--device", default="pvc", choices=DEVICES, help="target (default pvc)")
    ap.add_argument("--detail", action="store_true", help="also show passes and convert ms")
    ap.add_argument("--profile", metavar="KERNEL", choices=KERNELS, help="cProfile one run")
    ap.add_argument("-k", "--kernel", action="append", choices=KERNELS, help="only these")
    args = ap.parse_args(argv)
    info = core_info_for_device(args.device)
    if args.profile:
        profile(KERNELS[args.profile](), info)
        return 0
    keys = ["parse", "passes", "convert", "compile", "validate", "total", "wall total"]
    if not args.detail:
        keys = [k for k in keys if k not in ("passes", "convert")]
    print(f"{cpu_description()}; target: {args.device}, median of {args.repeat} runs")
    in_use, why = compiled.status()
    print(f"mypyc-compiled modules: {'yes' if in_use else 'no'} ({why})")
    print(
        "cold: kernel cache off, CPU ms per step; miss: cache on, first start (new folder);"
        " hit: read from the kernel cache's folder; memo: compiled before in the process"
    )
    heads = [f"{k} ms" for k in keys] + ["off ms", "miss ms", "miss inst ms", "hit ms"]
    heads.append("hit wall ms")
    heads.append("memo ms")
    heads.append("SPIR-V B")
    print(row("kernel", "instructions", heads))
    with tempfile.TemporaryDirectory(prefix="tinytc-bench-cache-") as folder:
        os.environ["TINYTC_CACHE_DIR"] = folder
        os.environ.pop("TINYTC_CACHE", None)
        print_rows(keys, info, args.repeat, args.kernel or list(KERNELS))
    return 0


def print_rows(keys: list[str], info: CoreInfo, repeat: int, names: list[str]) -> None:
    for name in names:
        text = KERNELS[name]()
        insts = "?"
        try:
            insts = str(count_prog(parse(text, CompilerContext(), name)))
            times, data = measure(text, info, repeat)
            off, miss, miss_installed = measure_first_start(text, info, repeat)
            hit = measure_hit(text, info, repeat)
            memo = measure_memo(text, info, repeat)
        except TinytcError as e:
            print(row(name, "FAILED", [str(e).splitlines()[0]]))
            continue
        except Exception as e:  # noqa: BLE001 - a compiler bug in one kernel: report, go on
            print(row(name, "FAILED", [f"{type(e).__name__}: {e}"]))
            continue
        cells = [f"{times[k]:.2f}" for k in keys]
        cells += [f"{t:.2f}" for t in (off, miss, miss_installed, *hit)]
        cells += [f"{memo:.4f}", str(len(data))]
        print(row(name, insts, cells))


if __name__ == "__main__":
    sys.exit(main())
