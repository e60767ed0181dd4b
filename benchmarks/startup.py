"""Start-up cost with and without the kernel cache: two fresh processes build the test suite's
GEMM kernels (tests/exec/test_exec_linalg.py) for the default device, the first on an empty
cache folder, the second on the folder the first one filled.

    .venv/bin/python benchmarks/startup.py [--runtime opencl|level_zero] [--all] [--keep DIR]

Each child process imports the runtime, finds the device, then for every program compiles the
text to SPIR-V (`compiler.binary_of`, through the kernel cache) and builds it for the device
(`runtime.program`, through the cache's device binaries), and reports the time of each phase
and its cache counters. The table shows wall-clock milliseconds per phase, the whole process as
the parent saw it (interpreter start included), the processes' CPU time, and second/first; the
goal is a second start of at most 25 % of the first. By default five programs (f32 and f64
with every transpose, two static shapes, the batched kernel); --all builds all 19 (several
minutes for the first start on a CPU device).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import cpu_description

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PROGRAMS = ("f32_f32_f32", "f64_f64_f64", "static_17x33x9", "static_64x64x64", "batched")


def gemm_programs(everything: bool) -> dict[str, str]:
    sys.path.insert(0, str(ROOT / "tests"))
    from exec.test_exec_linalg import _gemm_program

    programs = _gemm_program()
    return programs if everything else {k: programs[k] for k in DEFAULT_PROGRAMS}


def child(runtime: str, everything: bool) -> None:
    """One start: time each phase and print them with the cache counters as JSON."""
    programs = gemm_programs(everything)
    t0 = time.perf_counter()
    if runtime == "opencl":
        from tinytc_py.runtime import opencl as rt

        device = rt._device.default_device()
        context = rt._device.default_context()
        info = rt.core_info_for(device)
    else:
        from tinytc_py.runtime import level_zero as rt

        device = rt.default_device()
        context = rt.default_context()
        info = device.core_info
    from tinytc_py.compiler import binary_of
    from tinytc_py.kernel_cache import stats

    t1 = time.perf_counter()
    compile_s = build_s = 0.0
    kernels = 0
    for text in programs.values():
        t = time.perf_counter()
        binary = binary_of(text, info)
        compile_s += time.perf_counter() - t
        t = time.perf_counter()
        rt.program(binary, device, context)
        build_s += time.perf_counter() - t
        kernels += len(binary.kernels)
    times = {"runtime + device": t1 - t0, "compile (SPIR-V)": compile_s, "device build": build_s}
    print(json.dumps({"times": times, "kernels": kernels, "stats": stats.process()}))


def start(runtime: str, folder: str, everything: bool) -> dict:
    env = {**os.environ, "TINYTC_CACHE_DIR": folder}
    env.pop("TINYTC_CACHE", None)
    cmd = [sys.executable, __file__, "--child", "--runtime", runtime]
    cmd += ["--all"] if everything else []
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = json.loads(out.splitlines()[-1])
    result["times"]["whole process (wall)"] = wall
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    result["times"]["whole process (CPU)"] = cpu
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runtime", choices=("opencl", "level_zero"), default="opencl")
    ap.add_argument("--all", action="store_true", help="all 19 GEMM programs of the tests")
    ap.add_argument("--keep", metavar="DIR", help="cache folder to use and keep (default: temp)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.runtime, args.all)
        return 0
    with tempfile.TemporaryDirectory(prefix="tinytc-startup-") as tmp:
        folder = args.keep or tmp
        first = start(args.runtime, folder, args.all)
        second = start(args.runtime, folder, args.all)
    print(f"{cpu_description()}, runtime {args.runtime}")
    print(f"{first['kernels']} kernels in {len(gemm_programs(args.all))} programs")
    print(f"{'phase':<24}{'first ms':>12}{'second ms':>12}{'second/first':>14}")
    for phase, t in first["times"].items():
        s = second["times"][phase]
        print(f"{phase:<24}{t * 1e3:>12.1f}{s * 1e3:>12.1f}{s / t:>13.0%}")
    for name, result in (("first", first), ("second", second)):
        counts = ", ".join(f"{k} {v}" for k, v in sorted(result["stats"].items()))
        print(f"cache counters of the {name} start: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
