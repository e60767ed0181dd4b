"""Compile kernels and run them through Level Zero: a custom kernel and a recipe.

    .venv/bin/python examples/python/level_zero.py

Without an Intel GPU the runtime loads tinytc-py's CPU driver (build/lib/libze_tinytc_cpu.so,
built by `make capi`) through the real Level Zero loader. The script
1. compiles examples/ir/matvec_batched.ir for the default Level Zero device and launches it on
   NumPy arrays (copied to shared USM and back), then checks y = alpha A x + beta y;
2. runs the small GEMM batched recipe on arrays that live in shared USM (`shared_array`) with
   its own immediate command list and event, and checks C_i = A_i B_i.
It prints `OK` and exits with 0 when both match NumPy, else exits with 1.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

KERNEL_FILE = Path(__file__).resolve().parents[1] / "ir" / "matvec_batched.ir"


def matvec(ze) -> bool:
    K, M, N = 20, 70, 33
    rng = np.random.default_rng(1)
    A = np.asfortranarray(rng.standard_normal((M, N, K), dtype=np.float32))
    x = np.asfortranarray(rng.standard_normal((N, K), dtype=np.float32))
    y = np.asfortranarray(rng.standard_normal((M, K), dtype=np.float32))
    want = 1.5 * np.einsum("ijk,jk->ik", A.astype(np.float64), x) - 0.5 * y
    kernel = ze.program(KERNEL_FILE.read_text(encoding="utf-8")).kernel("matvec_batched")
    kernel(1.5, A, x, -0.5, y, num_groups=K)
    err = float(np.max(np.abs(y - want)))
    print(f"matvec_batched: max abs error {err:.2e}")
    return err < 1e-3


def recipe(ze) -> bool:
    from tinytc_py.recipes import small_gemm_batched

    n, howmany = 16, 50
    dev, ctx = ze.default_device(), ze.default_context()
    r = small_gemm_batched(dev.core_info, "f32", "n", "n", n, n, n, n, n * n, n, n * n, n, n * n)
    A = ctx.shared_array((n, n, howmany), np.float32, dev)
    B = ctx.shared_array((n, n, howmany), np.float32, dev)
    C = ctx.shared_array((n, n, howmany), np.float32, dev)
    rng = np.random.default_rng(2)
    A[...] = rng.standard_normal(A.shape)
    B[...] = rng.standard_normal(B.shape)
    handler = ze.RecipeHandler(r, ctx, dev)
    one, zero = np.float32(1).tobytes(), np.float32(0).tobytes()
    addr = [a.__array_interface__["data"][0] for a in (A, B, C)]
    kernel, args, groups = r.small_gemm_batched_args(
        howmany, one, (1, addr[0]), (1, addr[1]), zero, (1, addr[2])
    )
    handler.set(kernel, args, groups)
    with (
        ze.CommandList.immediate(ctx, dev) as lst,
        ze.EventPool.create(ctx) as pool,
        pool.event() as done,
    ):
        handler.submit(lst, signal=done)
        done.wait()
    want = np.einsum("ikb,kjb->ijb", A, B)
    err = float(np.max(np.abs(C - want)))
    print(f"small_gemm_batched: {howmany} x {n}x{n}x{n}, max abs error {err:.2e}")
    handler.close()
    return err < 1e-4


def main() -> int:
    from tinytc_py.errors import TinytcError
    from tinytc_py.runtime import level_zero as ze

    try:
        print(f"device: {ze.default_device().name}")
        ok = matvec(ze) and recipe(ze)
    except TinytcError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
