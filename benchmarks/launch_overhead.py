"""Launch overhead from Python: one small batched GEMM (8x8x8, f32, a batch of 64) launched with
every kind of argument the kernel takes, on the default OpenCL device.

    .venv/bin/python benchmarks/launch_overhead.py [--batch 64] [--repeat 400]

Prints the device, the CPU model and the ISA the CPU runtime compiles for, then the median time
of --repeat launches (each waits for the kernel) per argument kind, fastest first:

- pyopencl arrays: device memory, no host copies (the fast path);
- NumPy, 128-byte aligned: host memory the CPU device uses in place (fine-grained system SVM);
- NumPy, not aligned: staged in cl.Buffers, C copied back;
- NumPy, C order: staged in Fortran order, C copied back;
- torch (permuted column-major views, via DLPack).

Run it alone on a shared machine (e.g. under `flock`). The kernel's own time is the first row's
minus a launch's fixed cost; the difference to the other rows is the cost of the copies and of
the argument checks.
"""

from __future__ import annotations

import argparse
import platform
from collections.abc import Callable

import numpy as np

from timing import median_time
from tinytc_py.runtime import opencl as rt

cl = rt.cl

GEMM = """
func @gemm(%A: memref<f32x8x8x?>, %B: memref<f32x8x8x?>, %C: memref<f32x8x8x?>) {
    %k = group_id.x : index
    %a = subview %A[0:8, 0:8, %k] : memref<f32x8x8>
    %b = subview %B[0:8, 0:8, %k] : memref<f32x8x8>
    %c = subview %C[0:8, 0:8, %k] : memref<f32x8x8>
    gemm.n.n 1.0, %a, %b, 0.0, %c
}
"""


def aligned(shape: tuple[int, ...], align: int = 128) -> np.ndarray:
    """A zeroed Fortran-order float32 array whose data starts on an `align`-byte boundary."""
    count = int(np.prod(shape))
    raw = np.zeros(count + align // 4, np.float32)
    first = (-raw.ctypes.data % align) // 4
    return raw[first : first + count].reshape(shape, order="F")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def cases(kernel, batch: int) -> dict[str, Callable[[], object]]:
    rng = np.random.default_rng(0)
    shape = (8, 8, batch)
    A = np.asfortranarray(rng.standard_normal(shape).astype(np.float32))
    B = np.asfortranarray(rng.standard_normal(shape).astype(np.float32))
    want = np.einsum("ikb,kjb->ijb", A, B)
    queue = rt._device.default_queue()
    import pyopencl.array as cla

    dA, dB = cla.to_device(queue, A), cla.to_device(queue, B)
    dC = cla.zeros(queue, shape, np.float32, order="F")
    aA, aB, aC = aligned(shape), aligned(shape), aligned(shape)
    aA[...], aB[...] = A, B
    uA, uB, uC = (aligned((8 * 8 * batch + 1,))[1:].reshape(shape, order="F") for _ in range(3))
    uA[...], uB[...] = A, B
    cA, cB, cC = np.ascontiguousarray(A), np.ascontiguousarray(B), np.zeros(shape, np.float32)
    out: dict[str, tuple[Callable[[], object], Callable[[], np.ndarray]]] = {
        "pyopencl arrays": (lambda: kernel(dA, dB, dC, num_groups=batch), dC.get),
        "NumPy, 128-byte aligned": (lambda: kernel(aA, aB, aC, num_groups=batch), lambda: aC),
        "NumPy, not aligned": (lambda: kernel(uA, uB, uC, num_groups=batch), lambda: uC),
        "NumPy, C order": (lambda: kernel(cA, cB, cC, num_groups=batch), lambda: cC),
    }
    try:
        import torch

        def col_major(x: np.ndarray):
            return torch.from_numpy(np.ascontiguousarray(x.transpose(2, 1, 0))).permute(2, 1, 0)

        tA, tB, tC = col_major(A), col_major(B), torch.zeros((batch, 8, 8)).permute(2, 1, 0)
        out["torch (DLPack)"] = (lambda: kernel(tA, tB, tC, num_groups=batch), tC.numpy)
    except ImportError:
        pass
    runs = {}
    for name, (run, result) in out.items():
        try:
            run()
        except Exception as e:  # noqa: BLE001 - an argument kind an older version refuses
            print(f"{name:26s} refused: {e}")
            continue
        if not np.allclose(result(), want, rtol=1e-4, atol=1e-4):
            print(f"{name:26s} wrong result (not timed)")
            continue
        runs[name] = run
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=400)
    args = parser.parse_args()
    dev = rt._device.default_device()
    info = rt.core_info_for(dev)
    isa = info.cpu.isa if getattr(info, "cpu", None) else "?"
    print(f"device: {dev.name.strip()} ({cpu_model()}), code for {isa}")
    kernel = rt.program(GEMM).kernel("gemm")
    times = {name: median_time(run, args.repeat) for name, run in cases(kernel, args.batch).items()}
    for name, t in sorted(times.items(), key=lambda item: item[1]):
        print(f"{name:26s} {t * 1e3:8.3f} ms per launch")


if __name__ == "__main__":
    main()
