"""Column softmax with and without the language extensions: examples/ir/softmax.ir
(work_group_reduce_max / _add) vs examples/ir/softmax_no_extensions.ir (subgroup reductions
exchanged through local memory and barriers), and NumPy.

    .venv/bin/python benchmarks/softmax.py [--rows 1024,8192] [--work-groups 128,512,1024]
                                           [--repeat N] [--min-ms T]

For every work-group size W (the examples' `$W`, one work-group per column) and column length
n the script compiles both kernels for the default OpenCL device, checks both against NumPy,
picks the number of columns K so that one launch of the extension kernel takes at least
--min-ms, and prints the median time of --repeat launches (after a warm-up) of each kernel on
device-resident arrays, NumPy's time for the same softmax on the host, and the speed-up of the
extension kernel over the portable one. GB/s counts the 3 passes' traffic (read X twice, write
Y twice, read Y once). The portable kernel's combining loop reads W / 16 subgroup results per
work-item, so its cost grows with W; the work-group reductions do not.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from timing import median_time
from tinytc_py.runtime import opencl as rt

cl = rt.cl
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "ir"
KERNELS = {"extensions": "softmax.ir", "portable": "softmax_no_extensions.ir"}


def softmax_reference(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=0))
    return e / e.sum(axis=0)


def source(file: str, work_group_size: int) -> str:
    """The example with its `$W = ...` definition set to `work_group_size`."""
    text = (EXAMPLES / file).read_text()
    return re.sub(r"^\$W = \d+", f"$W = {work_group_size}", text, count=1, flags=re.M)


class Kernel:
    def __init__(self, file: str, work_group_size: int) -> None:
        self.prog = rt.program(source(file, work_group_size))
        self.kernel = self.prog.kernel("softmax")
        self.queue = cl.CommandQueue(self.prog.context)

    def launch(self, x: np.ndarray) -> tuple[Callable[[], None], object]:
        import pyopencl.array as cla

        dx = cla.to_device(self.queue, np.asfortranarray(x))
        dy = cla.zeros(self.queue, x.shape, np.float32, order="F")
        cols = x.shape[1]

        def run() -> None:
            self.kernel(dx, dy, num_groups=(cols, 1, 1), queue=self.queue)

        return run, dy

    def error(self, x: np.ndarray) -> float:
        run, dy = self.launch(x)
        run()
        return float(np.max(np.abs(dy.get() - softmax_reference(x))))


def data(n: int, cols: int) -> np.ndarray:
    return np.asfortranarray(
        (np.random.default_rng(n).standard_normal((n, cols)) * 4).astype(np.float32)
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1024,8192", help="column lengths n")
    ap.add_argument("--work-groups", default="128,512,1024", help="work-group sizes W")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--min-ms", type=float, default=30.0)
    args = ap.parse_args(argv)

    dev = rt._device.default_device()
    print(f"device: {dev.name.strip()} ({dev.max_compute_units} compute units)")
    print(f"median of {args.repeat} runs after a warm-up\n")
    head = (
        f"{'W':>5} {'n':>6} {'columns':>8} {'ext ms':>8} {'ext GB/s':>8} {'port ms':>8} "
        f"{'numpy ms':>9} {'port/ext':>8} {'err ext':>8} {'err port':>8}"
    )
    print(head)
    print("-" * len(head))
    for w in map(int, args.work_groups.split(",")):
        kernels = {name: Kernel(file, w) for name, file in KERNELS.items()}
        for n in map(int, args.rows.split(",")):
            errors = {name: k.error(data(n, 17)) for name, k in kernels.items()}
            cols = 64
            while True:
                run, _ = kernels["extensions"].launch(data(n, cols))
                if median_time(run, 3) * 1e3 >= args.min_ms or cols >= 1 << 16:
                    break
                cols *= 2
            x = data(n, cols)
            times = {}
            for name, k in kernels.items():
                run, _ = k.launch(x)
                times[name] = median_time(run, args.repeat)
            host = median_time(lambda x=x: softmax_reference(x), args.repeat)
            gbs = 5 * 4 * n * cols / times["extensions"] * 1e-9
            print(
                f"{w:>5} {n:>6} {cols:>8} {times['extensions'] * 1e3:>8.2f} {gbs:>8.1f} "
                f"{times['portable'] * 1e3:>8.2f} {host * 1e3:>9.2f} "
                f"{times['portable'] / times['extensions']:>8.2f} "
                f"{errors['extensions']:>8.1e} {errors['portable']:>8.1e}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
