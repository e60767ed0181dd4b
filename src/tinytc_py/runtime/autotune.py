"""GEMM autotuner, device side: times the tuner's candidate kernels on an OpenCL device.

What to try, what to keep and where to store it is the compiler side's business
(gemm_tuning.py); this module only builds a kernel on the device and measures it. `autotune`
is the runtimes' entry point: the compiler-side tuner with this device's timer. The runtime's
program builder (runtime/opencl.py's `program`) comes in as a callable, so that this module,
which the OpenCL runtime calls, does not import it back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..binary import Binary
from ..gemm_tuning import BatchedKernel, tune
from ..ir.region import Prog
from ..target.core_info import CoreInfo
from .device import cl

WORKING_SET = 256 << 20  # bytes of A, B and C per timed launch: beyond the last-level cache

# Builds a binary on an OpenCL device in a context: (binary, device, context) -> a built
# program whose `.kernel(name)` launches (runtime/opencl.py's `program`).
ProgramBuilder = Callable[[Binary, Any, Any], Any]


def autotune(prog: Prog, dev: Any, info: CoreInfo, build: ProgramBuilder) -> CoreInfo:
    """`info` with tuned blockings for the gemms of `prog`, timed on the OpenCL device `dev`
    with programs that `build` makes (or taken from its tuning cache)."""
    return tune(prog, info, ClKernelTimer(dev, build))


class ClKernelTimer:
    """Times batched kernels on one OpenCL device (a context and queue made on first use, so
    a compile that finds every choice in the tuning cache creates none).

    Why WORKING_SET and not just a long enough launch: a small batch stays in the caches, where
    other blockings win than on a large batch streamed from memory (the case batched GEMM is
    for); timed on 64 entries, the choices ran at down to 0.6x the cost model's in the GEMM
    benchmark. The buffers are made once per parameter list and shared by the candidates."""

    def __init__(self, dev: Any, build: ProgramBuilder) -> None:
        self.dev = dev
        self.build = build
        self._context: Any = None
        self._queue: Any = None
        self._buffers: dict[tuple, tuple[int, list[Any]]] = {}

    def device_name(self) -> str:
        return f"{self.dev.name.strip()}-{self.dev.driver_version.strip()}"

    def launcher(self, kernel: BatchedKernel) -> Callable[[], float]:
        if self._queue is None:
            self._context = cl.Context([self.dev])
            self._queue = cl.CommandQueue(self._context)
        queue = self._queue
        built = self.build(kernel.binary, self.dev, self._context).kernel(kernel.name)
        batch, bufs = self._data(kernel.params)

        def run() -> float:
            t0 = time.perf_counter()
            built(*kernel.scalars, *bufs, num_groups=(batch, 1, 1), queue=queue)
            return (time.perf_counter() - t0) / batch

        return run

    def _data(self, params: tuple) -> tuple[int, list[Any]]:
        """The batch and device arrays for a parameter list (random values in [0, 1): no
        denormals). Only the latest list is kept: candidates of one shape are timed back to back,
        and each list holds WORKING_SET bytes of device memory."""
        import pyopencl.array as cla

        if params not in self._buffers:
            self._buffers.clear()
            entry = sum(int(np.prod(shape)) * np.dtype(t).itemsize for shape, t in params)
            batch = max(1, WORKING_SET // entry)
            rng = np.random.default_rng(0)
            host = (np.asfortranarray(rng.random((*s, batch)).astype(t)) for s, t in params)
            self._buffers[params] = batch, [cla.to_device(self._queue, h) for h in host]
        return self._buffers[params]
