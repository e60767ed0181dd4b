"""Batched small GEMM, C_i = alpha A_i B_i + beta C_i: our kernel vs numpy.matmul vs torch.bmm.

    .venv/bin/python benchmarks/gemm_batched.py [--repeat N] [--min-ms T] [--sizes 16,32,64]
                                                [--no-torch] [--max-mb MB]

For every (M, N, K) and dtype (f32, f64) the script
- compiles a batched gemm kernel (one work-group per batch entry: `%gid = group_id.x`, subviews,
  `gemm.n.n`) for the default OpenCL device and checks one small launch against NumPy;
- picks the batch so that one launch of our kernel takes at least --min-ms (default 50 ms; capped
  by --max-mb of device data);
- times our kernel on device-resident pyopencl arrays (no host copies: the launch wrapper uses
  pyopencl arrays in place and waits for the queue), numpy.matmul(A, B, out=T) and
  torch.bmm(A, B, out=T) on stacked host arrays of the same values (each in its preferred
  layout), and torch.baddbmm(C, A, B, alpha, beta, out=C) which does the same update as ours.
Each figure is the median of --repeat timed runs after one warm-up run (the first launch, JIT
and first-touch are excluded). GFLOP/s counts 2*M*N*K flops per batch entry for every column
(the alpha/beta update is not counted).

Theoretical peak (from /proc/cpuinfo): cores x clock x SIMD lanes x 2 FMA units x 2 flops/FMA,
where cores = the number of "processor" entries (logical CPUs; here each is one core), clock =
"cpu MHz" (the nominal frequency, no turbo), lanes = 512 bits / element bits when the flags
contain avx512f (else 256 with avx2, else 128). On this machine: 2 x 2.596 GHz x 16 x 2 x 2 =
332.3 GFLOP/s f32 and 166.2 f64.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from tinytc_py.runtime import opencl as rt

cl = rt.cl

TYPES = {"f32": np.float32, "f64": np.float64}


def cpu_peak() -> tuple[dict[str, float], str]:
    """GFLOP/s peak per dtype and a description of what was read from /proc/cpuinfo."""
    procs, mhz, flags = 0, 0.0, set()
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "processor":
                procs += 1
            elif key == "cpu MHz" and not mhz:
                mhz = float(value)
            elif key == "flags" and not flags:
                flags = set(value.split())
    bits = 512 if "avx512f" in flags else 256 if "avx2" in flags else 128
    peak = {
        name: procs * mhz * 1e-3 * (bits // (8 * np.dtype(t).itemsize)) * 2 * 2
        for name, t in TYPES.items()
    }
    desc = (
        f"/proc/cpuinfo: {procs} processors x {mhz:.0f} MHz x {bits}-bit SIMD "
        f"({'avx512f' if bits == 512 else 'no avx512f'}) x 2 FMA units x 2 flops"
    )
    return peak, desc


def kernel_text(m: int, n: int, k: int, ty: str, sizes: str = "") -> str:
    """The kernel; `sizes` = "S,W0,W1" sets subgroup_size and work_group_size explicitly."""
    attrs = ""
    if sizes:
        s, w0, w1 = sizes.split(",")
        attrs = f" attributes {{subgroup_size={s}, work_group_size=[{w0},{w1}]}}"
    return f"""\
func @gemm(%alpha: {ty}, %A: memref<{ty}x{m}x{k}x?>, %B: memref<{ty}x{k}x{n}x?>, %beta: {ty},
           %C: memref<{ty}x{m}x{n}x?>){attrs} {{
    %gid = group_id.x : index
    %a = subview %A[0:{m},0:{k},%gid] : memref<{ty}x{m}x{k}>
    %b = subview %B[0:{k},0:{n},%gid] : memref<{ty}x{k}x{n}>
    %c = subview %C[0:{m},0:{n},%gid] : memref<{ty}x{m}x{n}>
    gemm.n.n %alpha, %a, %b, %beta, %c
}}
"""


def median_time(fn: Callable[[], object], repeat: int) -> float:
    """Median seconds of `repeat` calls after one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def fortran_stack(x: np.ndarray) -> np.ndarray:
    """(batch, r, c) -> column-major (r, c, batch): the memref<r x c x ?> layout."""
    return np.asfortranarray(x.transpose(1, 2, 0))


class Case:
    def __init__(self, m: int, n: int, k: int, ty: str, sizes: str = "") -> None:
        self.m, self.n, self.k, self.ty = m, n, k, ty
        self.dtype = TYPES[ty]
        self.prog = rt.program(kernel_text(m, n, k, ty, sizes))
        self.kernel = self.prog.kernel("gemm")
        self.queue = cl.CommandQueue(self.prog.context)
        self.alpha, self.beta = 1.5, 0.5

    def data(self, batch: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rng = np.random.default_rng(0)
        shapes = ((batch, self.m, self.k), (batch, self.k, self.n), (batch, self.m, self.n))
        return tuple(rng.standard_normal(s).astype(self.dtype) for s in shapes)  # type: ignore[return-value]

    def device_launch(self, a, b, c) -> tuple[Callable[[], None], object]:
        import pyopencl.array as cla

        da, db, dc = (cla.to_device(self.queue, fortran_stack(x)) for x in (a, b, c))
        batch = a.shape[0]
        al, be = self.dtype(self.alpha), self.dtype(self.beta)

        def run() -> None:
            self.kernel(al, da, db, be, dc, num_groups=(batch, 1, 1), queue=self.queue)

        return run, dc

    def check(self) -> float:
        a, b, c = self.data(37)
        run, dc = self.device_launch(a, b, c)
        run()
        got = dc.get().transpose(2, 0, 1)
        want = self.alpha * np.matmul(a, b) + self.beta * c
        return float(np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want)))))

    def choose_batch(self, min_ms: float, max_mb: float) -> int:
        per_entry = (self.m * self.k + self.k * self.n + self.m * self.n) * self.dtype().itemsize
        cap = max(1, int(max_mb * 2**20 // per_entry))
        batch = min(cap, 4096)
        while True:
            a, b, c = self.data(batch)
            run, _ = self.device_launch(a, b, c)
            t = median_time(run, 3)
            if t * 1e3 >= min_ms or batch >= cap:
                return batch
            batch = min(cap, int(batch * max(2.0, 1.3 * min_ms / max(t * 1e3, 1e-3))))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="timed runs (median is shown)")
    ap.add_argument("--min-ms", type=float, default=50.0, help="minimum time of one launch")
    ap.add_argument("--max-mb", type=float, default=1024.0, help="cap on A+B+C size in MiB")
    ap.add_argument("--sizes", default="16,32,64", help="M=N=K values, comma separated")
    ap.add_argument("--odd", default="23x37x19", help="extra MxNxK case ('' for none)")
    ap.add_argument("--types", default="f32,f64")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument(
        "--sizes-attr",
        default="",
        metavar="S,W0,W1",
        help="force subgroup_size=S, work_group_size=[W0,W1] (default: the compiler's choice)",
    )
    args = ap.parse_args(argv)

    torch = None
    if not args.no_torch:
        try:
            import torch  # type: ignore[no-redef]

            torch.set_num_threads(os.cpu_count() or 1)
        except ImportError:
            print("torch not installed: its columns are n/a", file=sys.stderr)
            torch = None

    peak, desc = cpu_peak()
    dev = rt._device.default_device()
    print(f"device: {dev.name.strip()} ({dev.max_compute_units} compute units)")
    print(f"peak: {desc} = {peak['f32']:.1f} GFLOP/s f32, {peak['f64']:.1f} f64")
    if torch is not None:
        print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"median of {args.repeat} runs after a warm-up; GFLOP/s = 2*M*N*K*batch / time\n")

    shapes = [(s, s, s) for s in map(int, args.sizes.split(",")) if args.sizes]
    if args.odd:
        m, n, k = map(int, args.odd.split("x"))
        shapes.append((m, n, k))
    head = (
        f"{'MxNxK':>10} {'type':>4} {'batch':>8} {'wgs':>8} {'ours':>8} {'%peak':>6} "
        f"{'numpy':>8} {'bmm':>8} {'baddbmm':>8} {'ours/bmm':>8} {'err':>8}"
    )
    print(head)
    print("-" * len(head))
    for ty in args.types.split(","):
        for m, n, k in shapes:
            case = Case(m, n, k, ty, args.sizes_attr)
            err = case.check()
            batch = case.choose_batch(args.min_ms, args.max_mb)
            a, b, c = case.data(batch)
            flops = 2.0 * m * n * k * batch
            run, _ = case.device_launch(a, b, c)
            ours = flops / median_time(run, args.repeat) * 1e-9
            out = np.empty((batch, m, n), dtype=case.dtype)
            npy = (
                flops
                / median_time(lambda a=a, b=b, out=out: np.matmul(a, b, out=out), args.repeat)
                * 1e-9
            )
            bmm = badd = float("nan")
            if torch is not None:
                ta, tb, tc = (torch.from_numpy(x) for x in (a, b, c))
                to = torch.from_numpy(out)
                bmm = (
                    flops
                    / median_time(
                        lambda ta=ta, tb=tb, to=to: torch.bmm(ta, tb, out=to), args.repeat
                    )
                    * 1e-9
                )
                badd = (
                    flops
                    / median_time(
                        lambda ta=ta, tb=tb, tc=tc: torch.baddbmm(
                            tc, ta, tb, beta=0.5, alpha=1.5, out=tc
                        ),
                        args.repeat,
                    )
                    * 1e-9
                )
            wgs = "x".join(str(w) for w in case.kernel.work_group_size[:2])
            print(
                f"{f'{m}x{n}x{k}':>10} {ty:>4} {batch:>8} {wgs:>8} {ours:>8.1f} "
                f"{100 * ours / peak[ty]:>5.1f}% {npy:>8.1f} {bmm:>8.1f} {badd:>8.1f} "
                f"{ours / bmm:>8.2f} {err:>8.1e}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
