"""One kernel object launched from two threads at once: every launch sets its arguments on
the kernel's one runtime kernel handle (an OpenCL cl_kernel or a Level Zero kernel handle;
clSetKernelArg or zeKernelSetArgumentValue on one kernel from two threads is unsafe), so the runtime holds the kernel's lock from the first argument
to the enqueue. Without it, one thread's arguments reach the other's launch (wrong results,
INVALID_KERNEL_ARGS, or a corrupted heap)."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

from .launch_kernels import AXPY2, kernel, runtime_device


@pytest.mark.parametrize("runtime", ["opencl", "level_zero"])
def test_two_threads_launch_one_kernel_with_their_own_arguments(runtime):
    axpy2 = kernel(AXPY2, "axpy2", runtime_device(runtime))
    failures: list[object] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for i in range(300):
            m, n = (int(v) for v in rng.integers(1, 9, 2))
            x = rng.random((m, n)).astype(np.float32)
            y = rng.random((m, n)).astype(np.float32)
            a = float(rng.integers(1, 5))
            expected = a * x + y
            try:
                axpy2(a, x, y)
            except Exception as e:  # noqa: BLE001 - collected and asserted below
                failures.append((seed, i, repr(e)))
                continue
            if not np.allclose(y, expected):
                failures.append((seed, i, m, n))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: between any two argument settings
    try:
        threads = [threading.Thread(target=work, args=(s,)) for s in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert failures == []
