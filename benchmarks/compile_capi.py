"""Compile time through the C API, ours against upstream's library, in one C program.

    .venv/bin/python benchmarks/compile_capi.py [--repeat N] [-d pvc|tgl|bmg|tgl+f64]
                                                [--upstream-build DIR] [--lib-dir DIR]

benchmarks/c/compile_capi.c parses and compiles each program of programs.py to a SPIR-V
binary (tinytc_parse_string, tinytc_prog_compile_to_spirv_and_assemble, from a new compiler
context each run) and prints the median CPU ms (of the process, all threads) and the median
elapsed ms of --repeat runs (default 41) after one untimed run. The table compares CPU time:
on a shared machine a run of a few milliseconds is preempted by the other processes, and its
elapsed time grows with their number (with a load average of 14 on 2 cores our 4 ms compile
took 20-30 ms elapsed, upstream's 0.3 ms mostly fit in one time slice). The script builds that source twice: linked against our libtinytc.so
(build/lib, which `make capi` builds, or --lib-dir) and, when an upstream CMake build folder is
given (--upstream-build or TINYTC_UPSTREAM_BUILD: tinytc v0.4.0 built with
-DBUILD_SYCL=OFF -DBUILD_LEVEL_ZERO=OFF), against its static libtinytc.a; without one the
upstream columns are left out. Columns:
- cold: our library with TINYTC_CACHE=0 (every run parses and compiles); "wall": elapsed;
- upstream: upstream's library (it has no kernel cache);
- ratio: cold / upstream;
- again: our library with the kernel cache on (a temporary folder), the same text compiled again
  in the same process, i.e. an in-process cache hit;
- SPIR-V bytes of ours and upstream's binary.
With --miss, three more columns: "off", our library with TINYTC_CACHE=0 compiling a text no run
compiled before (the file with a comment line "; run N" appended: COMPILE_CAPI_FRESH=1), "miss",
the same texts with the kernel cache on (a temporary folder: every timed run misses, the first
start of a program, in a folder that exists), and "miss-off", what the cache adds to that first
start; "thread m-o" is the same difference in the CPU time of the calling thread alone, what the
caller pays: a C host's entry files are written by a native thread of the library
(kernel_cache/writer.py), whose CPU time the process's includes whenever a loaded machine runs
it during the next timed run instead of the 5 ms after each.
With --paired, two more columns from one process that compiles, run after run, a fresh text with
the context's kernel-cache flag off and another with it on (COMPILE_CAPI_PAIRED=1, the order
alternating): "pair m-o", miss - off in the process's CPU time, and "pair thr", in the calling
thread's. Paired in one process, both meet the same state of the machine, which separate
processes (the "miss-off" columns) do not: on a loaded machine their ranges are wider.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from programs import PROGRAMS, ROOT, upstream_build
from timing import cpu_description

SOURCE = ROOT / "benchmarks" / "c" / "compile_capi.c"
CFLAGS = ["-O2", "-Wall", "-Wextra", "-Werror"]


def upstream_source(build: Path) -> Path:
    """The source folder of an upstream CMake build (from its CMakeCache.txt)."""
    for line in (build / "CMakeCache.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("CMAKE_HOME_DIRECTORY:"):
            return Path(line.split("=", 1)[1])
    raise SystemExit(f"{build}: no CMAKE_HOME_DIRECTORY in CMakeCache.txt")


def build_ours(lib_dir: Path, exe: Path) -> Path:
    cmd = ["gcc", *CFLAGS, "-DCOMPILE_CAPI_OURS", f"-I{ROOT / 'include'}", str(SOURCE)]
    cmd += ["-o", str(exe)]
    cmd += [f"-L{lib_dir}", "-ltinytc", f"-Wl,-rpath,{lib_dir}"]
    subprocess.run(cmd, check=True)
    return exe


def build_upstream(build: Path, exe: Path) -> Path:
    """The same C source linked against upstream's static library (its generated headers are
    in the build folder, the others in the source folder)."""
    src = upstream_source(build)
    cmd = ["gcc", *CFLAGS, f"-I{build / 'include'}", f"-I{src / 'include'}", str(SOURCE)]
    cmd += ["-o", str(exe), str(build / "src" / "libtinytc.a"), "-lstdc++", "-lm"]
    subprocess.run(cmd, check=True)
    return exe


def run(exe: Path, repeat: int, target: str, env: dict[str, str]) -> dict[str, tuple]:
    """Median CPU ms, median elapsed ms, SPIR-V bytes and the calling thread's median CPU ms
    per program name; paired (COMPILE_CAPI_PAIRED=1) also the process's and the thread's
    median CPU ms of the compiles with the cache off."""
    paths = [str(p) for p in PROGRAMS.values()]
    out = subprocess.run(
        [str(exe), str(repeat), target, *paths], check=True, capture_output=True, text=True, env=env
    ).stdout
    by_path = {}
    for line in out.splitlines():
        path, cpu, wall, size, *rest = line.split("\t")
        by_path[path] = (float(cpu), float(wall), int(size), *map(float, rest))
    return {name: by_path[str(p)] for name, p in PROGRAMS.items()}


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a C host: no Python variables of this process, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.pop("TINYTC_CACHE", None)
    env.update(extra)
    return env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=41, help="timed runs (median is shown)")
    ap.add_argument("-d", "--device", default="pvc", help="tgl, pvc, bmg or tgl+f64")
    ap.add_argument("--upstream-build", type=Path, default=upstream_build())
    ap.add_argument("--lib-dir", type=Path, default=ROOT / "build" / "lib")
    ap.add_argument("--miss", action="store_true", help="add the first-start miss columns")
    ap.add_argument("--paired", action="store_true", help="add the paired miss - off columns")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tinytc-bench-") as tmp:
        work = Path(tmp)
        ours = build_ours(args.lib_dir.resolve(), work / "compile_ours")
        cold = run(ours, args.repeat, args.device, clean_env(TINYTC_CACHE="0"))
        again = run(ours, args.repeat, args.device, clean_env(TINYTC_CACHE_DIR=str(work / "cache")))
        fresh: tuple[dict, dict] | None = None
        if args.miss:
            off = run(
                ours, args.repeat, args.device, clean_env(TINYTC_CACHE="0", COMPILE_CAPI_FRESH="1")
            )
            miss = run(
                ours,
                args.repeat,
                args.device,
                clean_env(TINYTC_CACHE_DIR=str(work / "miss"), COMPILE_CAPI_FRESH="1"),
            )
            fresh = (off, miss)
        paired = None
        if args.paired:
            env = clean_env(TINYTC_CACHE_DIR=str(work / "paired"), COMPILE_CAPI_PAIRED="1")
            paired = run(ours, args.repeat, args.device, env)
        upstream = None
        if args.upstream_build:
            exe = build_upstream(args.upstream_build.resolve(), work / "compile_upstream")
            upstream = run(exe, args.repeat, args.device, clean_env())
    print(f"{cpu_description()}; load average {os.getloadavg()[0]:.2f}")
    print(
        f"parse + compile to SPIR-V through the C API, target {args.device}, "
        f"median CPU ms of {args.repeat} runs (wall: elapsed)"
    )
    head = (
        f"{'program':<18} {'cold':>7} {'wall':>7} {'upstream':>8} {'wall':>7} {'ratio':>6} "
        f"{'again':>7} {'wall':>7} {'SPIR-V B':>8} {'upstream B':>10}"
    )
    if fresh:
        head += f" {'off':>7} {'miss':>7} {'miss-off':>8} {'thread m-o':>10}"
    if paired:
        head += f" {'pair m-o':>8} {'pair thr':>8}"
    print(head)
    print("-" * len(head))
    for name in PROGRAMS:
        ms, wall, size, _ = cold[name]
        cells = [f"{ms:>7.3f}", f"{wall:>7.3f}"]
        if upstream:
            up_ms, up_wall, up_size, _ = upstream[name]
            cells += [f"{up_ms:>8.3f}", f"{up_wall:>7.3f}", f"{ms / up_ms:>6.1f}"]
        else:
            cells += [f"{'-':>8}", f"{'-':>7}", f"{'-':>6}"]
        cells += [f"{again[name][0]:>7.3f}", f"{again[name][1]:>7.3f}", f"{size:>8}"]
        cells.append(f"{up_size if upstream else '-':>10}")
        if fresh:
            off_ms, miss_ms = fresh[0][name][0], fresh[1][name][0]
            thread = fresh[1][name][3] - fresh[0][name][3]
            cells += [f"{off_ms:>7.3f}", f"{miss_ms:>7.3f}", f"{miss_ms - off_ms:>8.3f}"]
            cells.append(f"{thread:>10.3f}")
        if paired:
            miss_cpu, _, _, miss_thread, off_cpu, off_thread = paired[name]
            cells += [f"{miss_cpu - off_cpu:>8.3f}", f"{miss_thread - off_thread:>8.3f}"]
        print(f"{name:<18} {' '.join(cells)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
