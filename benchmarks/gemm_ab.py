"""A/B of kernels for one row of benchmarks/gemm_batched.py: the same batched GEMM compiled with
other subgroup sizes or register blockings, timed in interleaved rounds on the same memory.

    .venv/bin/python benchmarks/gemm_ab.py MxNxK TYPE VARIANT [VARIANT ...]
                                           [--repeat N] [--mb MB] [--cached]

A VARIANT is "model" (the compiler's choice), "sg=S" (subgroup size S, the model's blocking for
it), "RxCkU" (the blocking R row blocks x C columns, U K steps; GemmBlocking.text), both
joined by a colon ("sg=8:3x6k2"), or "xsmm" (libxsmm on the same arrays, gemm_anchors.py; with
--cached on the same 8 entries). A variant can be measured before a change of the model by
pinning what the model chose before: sg=16 is the subgroup size the compiler picked for every
f32 gemm on AVX-512 before the FMA width entered the choice (target/cpu_core.py `fma_bytes`).

Run it under `flock /work/cpu.lock` (or your machine's equivalent) and with
CL_CONFIG_CPU_TARGET_ARCH=core-avx2 for AVX2 code. Each figure is GFLOP/s of the GEMM per busy
core pair from the median CPU time of the process per launch over --repeat interleaved rounds
(timing as gemm_limits.py: on a shared machine the CPU time varies less than the elapsed time),
with the ratio to the first variant; --cached runs every variant on 8 cache-resident entries
(gemm_limits.py "cached"). With two threads the cached figures also time the cores trading the
lines of the 8 C entries (both write all of them); `taskset -c 1` gives the single-core speed.
Every variant's result is checked against NumPy (gemm_batched.py `tolerance`; FAILED and exit
status 1 above it).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

import numpy as np

import gemm_anchors
from gemm_batched import TYPES, Case, aligned_stack, kernel_text, timed_errors, tolerance
from gemm_limits import RESIDENT, cached_text
from timing import cpu_description, cpu_timed
from tinytc_py.gemm_tuning import time_candidates


@dataclasses.dataclass(frozen=True)
class Variant:
    """A kernel of the row: a subgroup size (0: the compiler's) and a blocking (None: the
    model's)."""

    subgroup_size: int
    blocking: str | None

    @classmethod
    def parse(cls, text: str) -> Variant:
        sgs, blocking = 0, None
        for part in text.split(":"):
            if part.startswith("sg="):
                sgs = int(part[3:])
            elif part != "model":
                blocking = part
        return cls(sgs, blocking)


def variant_case(m: int, n: int, k: int, ty: str, v: Variant, cached: bool) -> Case:
    from tinytc_py.analysis.gemm_model import batched_problem, cpu_blocking, subgroup_size
    from tinytc_py.runtime import device
    from tinytc_py.runtime.opencl import core_info_for
    from tinytc_py.target.gemm_blocking import GemmBlocking, GemmKey

    info = core_info_for(device.default_device())
    assert info.cpu is not None, "the default OpenCL device is not a CPU"
    size = np.dtype(TYPES[ty]).itemsize
    sgs = v.subgroup_size or subgroup_size([m], size, info.cpu)
    key = GemmKey(m, n, k, (ty, ty, ty), (False, False))
    if v.blocking is None:
        blocking = cpu_blocking(batched_problem(key, size, size, sgs, info.cpu), info.cpu)
    else:
        blocking = GemmBlocking.from_text(v.blocking)
    pinned = dataclasses.replace(info, gemm_blockings={key: blocking})
    text = kernel_text(m, n, k, ty, f"{sgs},{sgs},1" if v.subgroup_size else "")
    if cached:
        text = cached_text(text)
    case = Case(m, n, k, ty, text=text, core_info=pinned)
    case.label = f"sg={sgs}:{blocking.text()}"  # type: ignore[attr-defined]
    return case


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shape", help="MxNxK")
    ap.add_argument("type", choices=sorted(TYPES))
    ap.add_argument("variants", nargs="+", help="model | sg=S | RxCkU | sg=S:RxCkU")
    ap.add_argument("--repeat", type=int, default=15, help="interleaved rounds")
    ap.add_argument("--mb", type=float, default=60.0, help="A+B+C size in MiB (sets the batch)")
    ap.add_argument("--cached", action="store_true", help="every variant on 8 entries")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    m, n, k = map(int, args.shape.split("x"))
    ty = args.type
    kernels = [v for v in args.variants if v != "xsmm"]
    cases = [variant_case(m, n, k, ty, Variant.parse(v), args.cached) for v in kernels]
    labels = {v: f"{v} ({c.label})" for v, c in zip(kernels, cases, strict=True)}  # type: ignore[attr-defined]
    for c in cases[1:]:
        c.queue = cases[0].queue  # one queue: the kernels run in order on the same host arrays
    a, b, c = cases[0].data(cases[0].batch(args.mb))
    batch = a.shape[0]
    arrays = tuple(aligned_stack(x) for x in (a, b, c))
    fns = {labels[v]: case.launch(arrays, batch) for v, case in zip(kernels, cases, strict=True)}
    if "xsmm" in args.variants:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as gemm_batched.py
        os.environ.setdefault("KMP_BLOCKTIME", "0")
        lib = gemm_anchors.xsmm_library()
        if lib is None:
            print("xsmm: libxsmm missing", file=sys.stderr)
            return 1
        labels["xsmm"] = "xsmm"
        resident = RESIDENT if args.cached else 0
        fns["xsmm"] = gemm_anchors.xsmm_gemm(lib, m, n, k, *arrays, resident=resident)
    names = [labels[v] for v in args.variants]
    want = np.matmul(a, b)
    if args.cached:  # the entries that every work-group recomputes
        want[RESIDENT:] = 0
    errors = timed_errors(fns, arrays[2], want)

    arch = os.environ.get("CL_CONFIG_CPU_TARGET_ARCH", "native")
    print(f"CPU: {cpu_description()}; CL_CONFIG_CPU_TARGET_ARCH={arch}")
    print(
        f"{m}x{n}x{k} {ty}, batch {batch}{' (8 cached entries)' if args.cached else ''}; "
        f"load average {os.getloadavg()[0]:.2f}; median CPU time of {args.repeat} "
        f"interleaved rounds, GFLOP/s per {os.cpu_count()} busy cores"
    )
    times = time_candidates({name: cpu_timed(fn) for name, fn in fns.items()}, args.repeat)
    flops = 2.0 * m * n * k * batch
    cores = os.cpu_count() or 1
    first = times[names[0]]
    tol = tolerance(ty, k)
    for name in names:
        figure = f"{flops / (times[name] / cores) * 1e-9:8.1f}"
        print(
            f"  {name:<28} {'  FAILED' if errors[name] > tol else figure}"
            f"  {first / times[name]:5.2f}x  err {errors[name]:.1e}"
        )
    return 0 if all(e <= tol for e in errors.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
