"""Compile a real kernel from tensor-language text and run it on the default OpenCL device.

    .venv/bin/python examples/python/run_kernel.py [--batch K] [--rows M] [--cols N] [--seed S]

The kernel is examples/ir/matvec_batched.ir: y_k = alpha A_k x_k + beta y_k for a batch of
matrices with dynamic sizes (foreach over rows, a loop over columns). The script uses the public
API only: `tinytc_py.compile` compiles the file to SPIR-V (validated) for the default device (a
GPU if there is one, else the Intel CPU runtime), `Program.kernel` builds it there, and the
kernel is called with NumPy arrays, one work-group per batch entry; the result is compared with
NumPy. It prints the device, the kernel's work-group size, a few results, the maximum error and
`OK`, and exits with status 0 when the maximum error is within the float32 tolerance, and with
status 1 otherwise (or when compilation or the launch fails).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

import tinytc_py

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

    try:
        prog = tinytc_py.compile(KERNEL_FILE)
        print(f"device: {prog.device.name} ({prog.device.runtime})")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the CPU runtime's build log is noise here
            kernel = prog.kernel(KERNEL_NAME)
    except tinytc_py.TinytcError as e:  # no device, or an error in the program
        print(e, file=sys.stderr)
        return 1
    print(
        f"kernel: {KERNEL_NAME} from {KERNEL_FILE.name}, "
        f"work-group size {list(kernel.work_group_size)}"
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
