"""Launch overhead from Python: one small batched GEMM (8x8x8, f32, a batch of 64) launched with
every kind of argument the kernel takes, on the default OpenCL device.

    .venv/bin/python benchmarks/launch_overhead.py [--batch 64] [--repeat 400]
    .venv/bin/python benchmarks/launch_overhead.py --fixed-cost [--against OTHER/src] [--rounds 21]

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

--fixed-cost times the fixed cost of one launch instead: a kernel with a batched GEMM's
arguments (alpha, A, B, beta, C: f64 16x16x?, five scalar kernel arguments with the batch
extents, three 128-byte aligned NumPy arrays used in place) whose work-groups load and store
one element, at 1 and 2560 work-groups; CPU time of the process per launch (median of
--rounds interleaved rounds of 100 launches), beside the same cl.Kernel with its arguments set,
enqueued and waited for with pyopencl alone. --against OTHER/src adds the kernel call of
another checkout (its runtime/launch.py and runtime/opencl.py, loaded into this process; the
rest of the package is this one's), for an A/B in one process.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

import numpy as np

from timing import cpu_description, median_time
from tinytc_py.gemm_tuning import time_candidates
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


# The fixed cost of a launch: a batched GEMM's arguments, one element per work-group.
FIXED = """
func @fixed(%alpha: f64, %A: memref<f64x16x16x?>, %B: memref<f64x16x16x?>, %beta: f64,
            %C: memref<f64x16x16x?>) {
    %g = group_id.x : index
    %c0 = constant 0 : index
    %a = load %A[%c0, %c0, %g] : f64
    %b = load %B[%c0, %c0, %g] : f64
    %c = load %C[%c0, %c0, %g] : f64
    %ab = mul %a, %b : f64
    %r1 = mul %alpha, %ab : f64
    %r2 = mul %beta, %c : f64
    %r = add %r1, %r2 : f64
    store %r, %C[%c0, %c0, %g]
}
"""
FIXED_BATCH = 2560


def aligned(shape: tuple[int, ...], align: int = 128, dtype: type = np.float32) -> np.ndarray:
    """A zeroed Fortran-order array whose data starts on an `align`-byte boundary."""
    count, item = int(np.prod(shape)), np.dtype(dtype).itemsize
    raw = np.zeros(count + align // item, dtype)
    first = (-raw.ctypes.data % align) // item
    return raw[first : first + count].reshape(shape, order="F")


def reference_runtime(src: Path) -> types.ModuleType:
    """The OpenCL runtime of another checkout: its runtime/launch.py and runtime/opencl.py as
    modules of this package (launch_reference, opencl_reference)."""
    for name in ("launch", "opencl"):
        path = src / "tinytc_py" / "runtime" / f"{name}.py"
        text = path.read_text(encoding="utf-8")
        text = text.replace("from .launch import", "from .launch_reference import")
        module = types.ModuleType(f"tinytc_py.runtime.{name}_reference")
        module.__package__ = "tinytc_py.runtime"
        sys.modules[module.__name__] = module  # dataclasses look their module up
        exec(compile(text, str(path), "exec"), module.__dict__)  # noqa: S102 - a checkout's source
    return sys.modules["tinytc_py.runtime.opencl_reference"]


def fixed_cost(against: Path | None, rounds: int) -> None:
    """Prints the fixed cost of a launch (see --fixed-cost) per runtime and grid."""
    A, B, C = (aligned((16, 16, FIXED_BATCH), dtype=np.float64) for _ in range(3))
    runtimes = {"this tree": rt}
    if against is not None:
        runtimes[str(against)] = reference_runtime(against)
    launches: dict[tuple[str, int], Callable[[], object]] = {}
    for groups in (1, FIXED_BATCH):
        for name, runtime in runtimes.items():
            k = runtime.program(FIXED).kernel("fixed")
            launches[name, groups] = lambda k=k, n=groups: k(1.0, A, B, 0.0, C, num_groups=n)
        k = rt.program(FIXED).kernel("fixed")
        cl_kernel, queue = k.cl_kernel, rt._device.default_queue()
        svm = [cl.SVM(x) for x in (A, B, C)]
        n = np.int64(FIXED_BATCH)
        cl_kernel.set_args(np.float64(1), svm[0], n, svm[1], n, np.float64(0), svm[2], n)
        size, local = (groups * k.work_group_size[0], 1, 1), k.work_group_size

        def alone(cl_kernel=cl_kernel, size=size, local=local, queue=queue) -> None:
            cl.enqueue_nd_range_kernel(queue, cl_kernel, size, local)
            queue.finish()

        launches["pyopencl alone", groups] = alone

    def per_launch(fn: Callable[[], object]) -> Callable[[], float]:
        def run() -> float:
            t0 = time.process_time()
            for _ in range(100):
                fn()
            return (time.process_time() - t0) / 100

        return run

    medians = time_candidates({key: per_launch(fn) for key, fn in launches.items()}, rounds)
    print(f"CPU: {cpu_description()}")
    print(f"fixed cost of a launch, CPU us per launch, median of {rounds} rounds of 100")
    for (name, groups), t in medians.items():
        print(f"  {groups:5d} work-groups  {name:40s} {t * 1e6:8.1f}")


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
    parser.add_argument("--fixed-cost", action="store_true")
    parser.add_argument("--against", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    if args.fixed_cost:
        fixed_cost(args.against, args.rounds)
        return
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
