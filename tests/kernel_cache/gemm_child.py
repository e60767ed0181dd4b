"""A child process of the kernel cache tests: builds GEMM programs on the default device of a
runtime (text -> SPIR-V -> device binary, through the kernel cache in $TINYTC_CACHE_DIR), runs
every kernel, compares with NumPy and prints one JSON line: {"errors": {kernel: max abs
error}, "stats": this process's cache counters}.

    python gemm_child.py [COUNT [opencl|level_zero [BARRIER N]]]
                         # the first COUNT programs of PROGRAMS (default: all) on OpenCL

With BARRIER (a folder) and N, the child starts compiling only when N children have set up
their device: each leaves a file there and waits for N files, so that they all miss the empty
cache at the same moment.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from tinytc_py.kernel_cache import stats

DEVICE = "tinytc_py.runtime.device"  # OpenCL's default device
TRANSPOSES = [("n", "n"), ("n", "t"), ("t", "n"), ("t", "t")]


def _dynamic_f32() -> str:
    sig = "%alpha: f32, %A: memref<f32x?x?>, %B: memref<f32x?x?>, %beta: f32, %C: memref<f32x?x?>"
    return "\n".join(
        f"func @gemm_{a}{b}({sig}) {{\n    gemm.{a}.{b} %alpha, %A, %B, %beta, %C\n}}"
        for a, b in TRANSPOSES
    )


STATIC_F64 = """func @gemm_static(%alpha: f64, %A: memref<f64x17x9>, %B: memref<f64x33x9>,
                   %beta: f64, %C: memref<f64x17x33>) {
    gemm.n.t %alpha, %A, %B, %beta, %C
}"""

PROGRAMS = [STATIC_F64, _dynamic_f32()]
M, N, K = 17, 33, 9


def _operands(name: str, dtype: type) -> tuple[np.ndarray, np.ndarray, str, str]:
    rng = np.random.default_rng(len(name))
    ta, tb = ("n", "t") if name == "gemm_static" else (name[-2], name[-1])
    a = rng.standard_normal((K, M) if ta == "t" else (M, K)).astype(dtype)
    b = rng.standard_normal((N, K) if tb == "t" else (K, N)).astype(dtype)
    return np.asfortranarray(a), np.asfortranarray(b), ta, tb


def barrier(folder: Path, count: int) -> None:
    (folder / str(os.getpid())).touch()
    while len(os.listdir(folder)) < count:
        time.sleep(0.005)


def run(count: int, runtime: str, wait: tuple[Path, int] | None = None) -> dict[str, float]:
    module = importlib.import_module(f"tinytc_py.runtime.{runtime}")
    if wait is not None:
        devices = module if runtime == "level_zero" else importlib.import_module(DEVICE)
        devices.default_device()
        barrier(*wait)
    errors = {}
    for text in PROGRAMS[:count]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prog = module.program(text)
        for name in prog.binary.kernels:
            dtype = np.float64 if name == "gemm_static" else np.float32
            a, b, ta, tb = _operands(name, dtype)
            c = np.asfortranarray(np.ones((M, N), dtype))
            expect = 2.0 * (a.T if ta == "t" else a) @ (b.T if tb == "t" else b) + 0.5 * c
            prog.kernel(name)(dtype(2.0), a, b, dtype(0.5), c)
            errors[name] = float(np.max(np.abs(c - expect)))
    return errors


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else len(PROGRAMS)
    wait = (Path(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else None
    errors = run(count, sys.argv[2] if len(sys.argv) > 2 else "opencl", wait)
    print(json.dumps({"errors": errors, "stats": stats.process()}))
