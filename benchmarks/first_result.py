"""Time to the first result, per program: compile, device build, first launch, and a second
process that finds the kernel cache filled; ours and, given an upstream build, upstream's.

    .venv/bin/python benchmarks/first_result.py [--upstream-build DIR] [-d tgl+f64|pvc|...]
                                                [--repeat N]

For every program of programs.py a fresh Python process (so nothing is warm) opens the default
OpenCL device (the CPU device here), then
- ours: compiles the text for that device with the kernel cache on, in a new empty cache folder
  (`binary_of`: the first start's cache miss), builds the SPIR-V on the device (the JIT of the
  OpenCL runtime; the device binary goes into the kernel cache), and launches the kernel once on
  NumPy arrays (copies in and out included), checking the result against NumPy;
- ours, second process: the same in a new process with the same cache folder (the compile and
  the device build are cache hits).
With an upstream build (--upstream-build or TINYTC_UPSTREAM_BUILD), its compile time and SPIR-V
come from benchmarks/c/compile_capi.c linked against upstream's library (the median elapsed
time of 5 runs) for the target -d, default tgl+f64 (upstream has no CPU target, and its pvc
code loads and stores matrices with inline vISA assembly, 2-D block messages, which the CPU
runtime builds but executes wrongly; tgl with f64 on uses subgroup block reads instead). A
fresh process builds that SPIR-V with the same runtime through pyopencl and launches it the
same way, with our compile's kernel metadata (the calling convention is the same) and the
work-group size upstream's kernel declares (upstream has no kernel cache: its second process
repeats the first). "first" = compile + build + launch; the device
build total and the SPIR-V sizes are summed over the programs at the end.

Elapsed milliseconds, the median of --repeat runs (default 3; every run of ours starts from a new
empty cache folder), except "build CPU": the CPU time of the process (all its threads) during
the device build. On a shared machine the elapsed time of a build mostly measures the other
processes (load average about 5 on 2 cores: seven builds of the same SPIR-V in one process took
400 ms at least and 596 ms in the median, but 279 and 291 ms of CPU time), so the build ratio
(ours / upstream, per program and in total) compares CPU times. The CPU runtime's code
generation target follows CL_CONFIG_CPU_TARGET_ARCH (`core-avx2` for AVX2 code), for ours and
upstream's SPIR-V alike.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from compile_capi import build_upstream, clean_env
from programs import PROGRAMS, upstream_build
from timing import cpu_description

Case = tuple[list, int, Callable[[list], float]]  # arguments, work-groups, error of the result


def rel_err(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want)))))


def batched(x: np.ndarray) -> np.ndarray:
    """(rows, cols, batch) -> (batch, rows, cols), for np.matmul."""
    return x.transpose(2, 0, 1)


def gemm_case(n: int, batch: int, rng: np.random.Generator) -> Case:
    a, b, c = (rng.standard_normal((n, n, batch)).astype(np.float32) for _ in range(3))
    want = 1.5 * np.matmul(batched(a), batched(b)) + 0.5 * batched(c)
    args = [np.float32(1.5), a, b, np.float32(0.5), c]
    return args, batch, lambda out: rel_err(batched(out[4]), want)


def matvec_case(rng: np.random.Generator) -> Case:
    m, n, batch = 48, 40, 64
    a = rng.standard_normal((m, n, batch)).astype(np.float32)
    x = rng.standard_normal((n, batch)).astype(np.float32)
    y = rng.standard_normal((m, batch)).astype(np.float32)
    want = 1.5 * np.einsum("ijk,jk->ik", a, x) - 0.5 * y
    return [np.float32(1.5), a, x, np.float32(-0.5), y], batch, lambda out: rel_err(out[4], want)


def attention_case(rng: np.random.Generator) -> Case:
    batch = 32
    q, k, v = (rng.standard_normal((64, 64, batch)).astype(np.float32) for _ in range(3))
    o = np.zeros_like(q)
    scale = np.float32(0.125)
    s = scale * np.matmul(batched(k).transpose(0, 2, 1), batched(q))
    p = np.exp(s - s.max(axis=1, keepdims=True))
    want = np.matmul(batched(v), p / p.sum(axis=1, keepdims=True))
    return [q, k, v, o, scale], batch, lambda out: rel_err(batched(out[3]), want)


def four_gemm_case(rng: np.random.Generator) -> Case:
    batch = 64
    d1, d2 = (np.asfortranarray(rng.standard_normal((56, 56))) for _ in range(2))
    q = [np.asfortranarray(rng.standard_normal((56, 9))) for _ in range(batch)]
    s = [np.asfortranarray(rng.standard_normal((9, 9))) for _ in range(batch)]
    i = rng.standard_normal((56, 9, batch))
    want = [i[:, :, e] + d2 @ (d1 @ q[e] @ s[e].T) @ s[e] for e in range(batch)]
    return [d1, d2, q, s, i], batch, lambda out: rel_err(batched(out[4]), np.stack(want))


CASES: dict[str, Callable[[np.random.Generator], Case]] = {
    "gemm.ir": lambda rng: gemm_case(32, 64, rng),
    "matvec_batched.ir": matvec_case,
    "batched 16^3 GEMM": lambda rng: gemm_case(16, 64, rng),
    "attention block": attention_case,
    "four GEMMs f64": four_gemm_case,
}


def ms_since(t0: float) -> float:
    return (time.perf_counter() - t0) * 1e3


def child(name: str, spirv: Path | None) -> dict[str, float]:
    """One fresh process's compile, build and first launch (ours, or upstream's `spirv`)."""
    from tinytc_py.compiler import binary_of
    from tinytc_py.runtime import device
    from tinytc_py.runtime import opencl as rt

    dev, ctx = device.default_device(), device.default_context()
    info = rt.core_info_for(dev)
    text = PROGRAMS[name].read_text(encoding="utf-8")
    t0 = time.perf_counter()
    binary = binary_of(text, info)
    times = {"compile": ms_since(t0)}
    if spirv is not None:  # upstream's SPIR-V with our metadata (the same calling convention)
        binary = dataclasses.replace(binary, data=spirv.read_bytes(), cache=False)
    t0, c0 = time.perf_counter(), time.process_time()
    prog = rt.Program(binary, ctx, dev)
    times["build"] = ms_since(t0)
    times["build_cpu"] = (time.process_time() - c0) * 1e3
    kernel_name = next(iter(binary.kernels))
    kernel = prog.kernel(kernel_name)
    if spirv is not None:  # the work-group size upstream's kernel declares
        wgs = rt.cl.Kernel(prog.cl_program, kernel_name).get_work_group_info(
            rt.cl.kernel_work_group_info.COMPILE_WORK_GROUP_SIZE, dev
        )
        kernel.info = dataclasses.replace(kernel.info, work_group_size=(wgs[0], wgs[1]))
    args, groups, error = CASES[name](np.random.default_rng(0))
    t0 = time.perf_counter()
    kernel(*args, num_groups=groups)
    times["launch"] = ms_since(t0)
    times["error"] = error(args)
    times["spirv"] = len(binary.data)
    return times


def run_child(name: str, env: dict[str, str], spirv: Path | None = None) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--child", name]
    if spirv is not None:
        cmd += ["--spirv", str(spirv)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.splitlines()[-1])


def upstream_compile(build: Path, target: str, work: Path) -> dict[str, float]:
    """Upstream's compile ms per program; its SPIR-V goes to work/spv/NAME.spv."""
    exe = build_upstream(build, work / "compile_upstream")
    (work / "spv").mkdir()
    env = clean_env(SPIRV_OUT_DIR=str(work / "spv"))
    out = subprocess.run(
        [str(exe), "5", target, *map(str, PROGRAMS.values())],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    ms = {line.split("\t")[0]: float(line.split("\t")[2]) for line in out.splitlines()}
    return {name: ms[str(path)] for name, path in PROGRAMS.items()}


def first(t: dict[str, float]) -> float:
    return t["compile"] + t["build"] + t["launch"]


def median_run(runs: list[dict[str, float]]) -> dict[str, float]:
    """Per key the median over the runs ("first" of each run included); "error" the largest."""
    out = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    out["first"] = statistics.median(first(r) for r in runs)
    out["error"] = max(r["error"] for r in runs)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--upstream-build", type=Path, default=upstream_build())
    ap.add_argument("-d", "--device", default="tgl+f64", help="upstream's target")
    ap.add_argument("--repeat", type=int, default=3, help="runs per cell (median is shown)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--spirv", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.spirv)))
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="tinytc-first-") as tmp:
        work = Path(tmp)
        up_ms = (
            upstream_compile(args.upstream_build, args.device, work) if args.upstream_build else {}
        )
        for name, path in PROGRAMS.items():
            runs: dict[str, list[list[dict[str, float]]]] = {"ours": [[], []]}
            if args.upstream_build:
                runs["upstream"] = [[], []]
            for rep in range(args.repeat):
                env = clean_env(TINYTC_CACHE_DIR=str(work / f"cache-{len(rows)}-{rep}"))
                env.update({k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ})
                for t, who in zip((run_child(name, env), run_child(name, env)), runs["ours"]):
                    who.append(t)
                if args.upstream_build:
                    spv = work / "spv" / f"{path.name}.spv"
                    for who in runs["upstream"]:
                        t = run_child(name, clean_env(TINYTC_CACHE="0"), spv)
                        t["compile"] = up_ms[name]
                        who.append(t)
            rows.append((name, {who: [median_run(r) for r in pair] for who, pair in runs.items()}))
    print_table(rows, args)
    return 0


def print_table(rows: list, args: argparse.Namespace) -> None:
    arch = os.environ.get("CL_CONFIG_CPU_TARGET_ARCH", "")
    print(f"{cpu_description()}; load average {os.getloadavg()[0]:.2f}")
    print(f"CPU runtime target: {arch or 'native (the host ISA)'}")
    print(
        f"elapsed ms (build CPU: CPU ms of the device build), median of {args.repeat} runs; "
        "first = compile + build + launch; 2nd = a second process"
    )
    if args.upstream_build:
        print(f"upstream: its C API compile for {args.device}, SPIR-V built on the same device")
    head = (
        f"{'program':<18} {'who':<8} {'compile':>8} {'build':>8} {'build CPU':>9} {'launch':>8} "
        f"{'first':>8} {'2nd':>8} {'SPIR-V B':>9} {'err':>8}"
    )
    print(head)
    print("-" * len(head))
    totals: dict[str, list[float]] = {}
    ratios = []
    for name, by_who in rows:
        for who, (t1, t2) in by_who.items():
            print(
                f"{name:<18} {who:<8} {t1['compile']:>8.1f} {t1['build']:>8.1f} "
                f"{t1['build_cpu']:>9.1f} {t1['launch']:>8.1f} {t1['first']:>8.1f} "
                f"{t2['first']:>8.1f} {int(t1['spirv']):>9} {max(t1['error'], t2['error']):>8.1e}"
            )
            total = totals.setdefault(who, [0.0, 0.0, 0.0])
            total[0] += t1["build"]
            total[1] += t1["build_cpu"]
            total[2] += t1["spirv"]
        if "upstream" in by_who:
            ratios.append(
                (name, by_who["ours"][0]["build_cpu"] / by_who["upstream"][0]["build_cpu"])
            )
    for who, (build, build_cpu, size) in totals.items():
        print(
            f"total {who}: device build {build / 1e3:.2f} s (CPU {build_cpu / 1e3:.2f} s), "
            f"SPIR-V {size / 1024:.1f} KiB"
        )
    if ratios:
        cells = ", ".join(f"{name} {r:.2f}" for name, r in ratios)
        total_ratio = totals["ours"][1] / totals["upstream"][1]
        print(f"device build CPU ours/upstream: {cells}; total {total_ratio:.2f}")


if __name__ == "__main__":
    sys.exit(main())
