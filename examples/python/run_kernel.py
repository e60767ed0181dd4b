"""Compile a real kernel from tensor-language text and run it on the default OpenCL device.

    .venv/bin/python examples/python/run_kernel.py [--batch K] [--rows M] [--cols N] [--seed S]

The kernel is examples/ir/matvec_batched.ir: y_k = alpha A_k x_k + beta y_k for a batch of
matrices with dynamic sizes (foreach over rows, a loop over columns). The script compiles it to
SPIR-V (spirv-val checked), builds it for the default device (a GPU if there is one, else the
Intel CPU runtime), launches one work-group per batch entry, and compares the result with NumPy.
It prints `OK` and exits with status 0 when the maximum error is within the float32 tolerance,
and exits with status 1 otherwise (or when compilation or the launch fails).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

KERNEL_FILE = Path(__file__).resolve().parents[1] / "ir" / "matvec_batched.ir"
KERNEL_NAME = "matvec_batched"


def reference(alpha: float, A: np.ndarray, x: np.ndarray, beta: float, y: np.ndarray):
    """y_k = alpha A_k x_k + beta y_k in float64."""
    A64, x64, y64 = (v.astype(np.float64) for v in (A, x, y))
    return alpha * np.einsum("ijk,jk->ik", A64, x64) + beta * y64


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=100, help="number of matrices K")
    ap.add_argument("--rows", type=int, default=70, help="rows M of each matrix")
    ap.add_argument("--cols", type=int, default=33, help="columns N of each matrix")
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args(argv)

    # Import order matters: runtime.device registers the PyPI Intel CPU runtime with the ICD
    # loader before pyopencl lists platforms.
    from tinytc_py.errors import TinytcError
    from tinytc_py.ir.context import CompilerContext
    from tinytc_py.runtime import device
    from tinytc_py.runtime.opencl import program
    from tinytc_py.text.parser import parse

    try:
        dev = device.default_device()
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"device: {dev.name.strip()} ({dev.platform.name.strip()})")

    try:
        prog = parse(KERNEL_FILE.read_text(encoding="utf-8"), CompilerContext(), str(KERNEL_FILE))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the CPU runtime's build log is noise here
            kernel = program(prog).kernel(KERNEL_NAME)
    except TinytcError as e:
        print(e, file=sys.stderr)
        return 1
    info = kernel.info
    print(
        f"kernel: {KERNEL_NAME} from {KERNEL_FILE.name}, subgroup size {info.subgroup_size}, "
        f"work-group size {list(info.work_group_size)}"
    )

    K, M, N = args.batch, args.rows, args.cols
    rng = np.random.default_rng(args.seed)
    alpha, beta = 1.5, -0.5
    A = np.asfortranarray(rng.standard_normal((M, N, K), dtype=np.float32))
    x = np.asfortranarray(rng.standard_normal((N, K), dtype=np.float32))
    y = np.asfortranarray(rng.standard_normal((M, K), dtype=np.float32))
    want = reference(alpha, A, x, beta, y)
    # float32 rounding bound of a length-N dot product, with room to spare
    scale = abs(alpha) * N * float(np.max(np.abs(A)) * np.max(np.abs(x)))
    tol = 1e-5 * (scale + abs(beta) * float(np.max(np.abs(y))))

    kernel(alpha, A, x, beta, y, num_groups=(K, 1, 1))

    print(f"launch: {K} work-groups, A: {M}x{N}x{K}, x: {N}x{K}, y: {M}x{K} (f32)")
    print(f"y[:4, 0]      = {np.array2string(y[:4, 0], precision=5)}")
    print(f"NumPy[:4, 0]  = {np.array2string(want[:4, 0].astype(np.float32), precision=5)}")
    err = float(np.max(np.abs(y - want)))
    print(f"max abs error vs NumPy: {err:.3e} (tolerance {tol:.1e})")
    if not err <= tol:
        print("MISMATCH", file=sys.stderr)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
