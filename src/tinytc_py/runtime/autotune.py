"""GEMM autotuner, device side: times the tuner's candidate kernels on an OpenCL device.

What to try, what to keep and where to store it is the compiler side's business
(gemm_tuning.py); this module only builds a kernel on the device and measures it. `autotune`
is the runtimes' entry point: the compiler-side tuner with this device's timer.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..gemm_tuning import BatchedKernel, tune
from ..ir.region import Prog
from ..target.core_info import CoreInfo
from .device import cl

MIN_LAUNCH_S = 0.01  # one timed launch takes at least this long (the batch grows until it does)
REPEAT = 7


def autotune(prog: Prog, dev: Any, info: CoreInfo) -> CoreInfo:
    """`info` with tuned blockings for the gemms of `prog`, timed on the OpenCL device `dev`
    (or taken from its tuning cache)."""
    return tune(prog, info, ClKernelTimer(dev))


class ClKernelTimer:
    """Times batched kernels on one OpenCL device (a context and queue made on first use, so
    a compile that finds every choice in the tuning cache creates none)."""

    def __init__(self, dev: Any) -> None:
        self.dev = dev
        self._context: Any = None
        self._queue: Any = None

    def device_name(self) -> str:
        return f"{self.dev.name.strip()}-{self.dev.driver_version.strip()}"

    def seconds_per_entry(self, kernel: BatchedKernel) -> float:
        """The fastest of REPEAT launches (the least disturbed by other processes), the batch
        grown until a launch takes MIN_LAUNCH_S."""
        import pyopencl.array as cla

        from .opencl import program

        if self._queue is None:
            self._context = cl.Context([self.dev])
            self._queue = cl.CommandQueue(self._context)
        queue = self._queue
        built = program(kernel.binary, self.dev, self._context).kernel(kernel.name)
        batch = 64
        while True:
            rng = np.random.default_rng(0)
            bufs = [
                cla.to_device(queue, np.asfortranarray(rng.standard_normal((*s, batch)).astype(t)))
                for s, t in kernel.params
            ]

            def run(bufs: list = bufs, batch: int = batch) -> float:
                t0 = time.perf_counter()
                built(*bufs, num_groups=(batch, 1, 1), queue=queue)
                return time.perf_counter() - t0

            run()
            times = [run() for _ in range(REPEAT)]
            if min(times) >= MIN_LAUNCH_S or batch >= 1 << 16:
                return min(times) / batch
            batch *= 4
