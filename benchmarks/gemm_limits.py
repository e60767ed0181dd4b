"""What limits a row of benchmarks/gemm_batched.py: our kernel against the same launch with the
GEMM taken out and against the GEMM with the memory taken out, next to libxsmm.

    .venv/bin/python benchmarks/gemm_limits.py [--repeat N] [--mb MB] [--sizes 16,32,48,64]
                                               [--odd 23x37x19] [--types f32,f64]

Run it with CL_CONFIG_CPU_TARGET_ARCH=core-avx2 and LIBXSMM_TARGET=hsw for AVX2 code. Columns,
all for the batch of gemm_batched.py (A, B and C of all entries take --mb MiB, one work-group
per entry), in GFLOP/s of the GEMM (2*M*N*K per entry) per busy core pair:
- ours: the kernel of gemm_batched.py (cost model's blocking), streaming A, B and C;
- cached: the same kernel with work-group g on entry g % 8, so A, B and C stay in the caches:
  the GEMM code's own speed;
- floor: a kernel with the same launch that loads all of A and B of its entry and stores all of
  C (C[:, j] = A[:, j % K] + B[:, j], one vector per column and row block, no FMAs): what the CPU runtime's cost per work-group
  and the streaming of the entries leave for any GEMM code in this launch. When "ours" is near
  "floor", no change of the GEMM code can make the row faster;
- xsmm: libxsmm (gemm_anchors.py), OpenMP static over the batch.
All columns run on the same column-major NumPy stacks (gemm_batched.aligned_stack: 2 MiB
aligned), which our kernels use in place. "ours" and "xsmm" are checked on these arrays, "floor"
on a small batch, each as gemm_batched.py checks its columns (a relative error; FAILED instead
of the figure above the tolerance, and exit status 1); "err" is the largest of these errors.
The columns are timed in interleaved rounds (timing.interleaved_medians) as CPU time of the
process per launch, which on a shared machine varies less than the elapsed time (a descheduled
process accrues none); with both cores busy it equals twice the elapsed time.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

import gemm_anchors
from gemm_batched import (
    TYPES,
    Case,
    aligned_stack,
    cells,
    kernel_text,
    relative_error,
    timed_errors,
    tolerance,
)
from timing import cpu_description, cpu_timed
from tinytc_py.gemm_tuning import time_candidates

RESIDENT = 8  # entries the "cached" kernel cycles through


def cached_text(text: str) -> str:
    """A kernel of gemm_batched.kernel_text on entry group_id % RESIDENT."""
    head = "    %gid = group_id.x : index\n"
    wrap = f"    %gid0 = group_id.x : index\n    %r = constant {RESIDENT} : index\n"
    return text.replace(head, wrap + "    %gid = rem %gid0, %r : index\n")


def floor_text(m: int, n: int, k: int, ty: str, s: int) -> str:
    """Per work-group: for every column j of C, C[:, j] = A[:, j % k] + B[:, j] in vectors of
    `s` rows (B's rows beyond C's height added to the last vector): all of A (n >= k), B and C
    pass through once, each store depends on two loads only, no FMAs."""
    if n < k:
        raise ValueError(f"the floor kernel reads A through C's columns: needs N >= K ({n}x{k})")
    acc = f"coopmatrix<{ty}x{s}x1,matrix_acc>"

    def check(i: int, rows: int) -> str:
        return ".rows_checked" if i + s > rows else ""

    lines = [
        f"        %cn = constant {n} : index",
        f"        %ck = constant {k} : index",
        "        %c0 = constant 0 : index",
        "        for %j = %c0, %cn {",
        "            %ja = rem %j, %ck : index",
    ]
    blocks = list(range(0, m, s))
    for i in range(0, max(m, k), s):
        lines.append(f"            %r{i} = constant {i} : index")
    for i in blocks:
        lines.append(
            f"            %x{i} = cooperative_matrix_load{check(i, m)} %a[%r{i}, %ja] : {acc}"
        )
        total = f"%x{i}"
        extra = [i] if i < k else []
        if i == blocks[-1]:
            extra += list(range(i + s, k, s))
        for r in extra:
            lines += [
                f"            %y{r} = cooperative_matrix_load{check(r, k)} %b[%r{r}, %j] : {acc}",
                f"            %s{i}_{r} = add {total}, %y{r} : {acc}",
            ]
            total = f"%s{i}_{r}"
        lines.append(f"            cooperative_matrix_store{check(i, m)} {total}, %c[%r{i}, %j]")
    lines.append("        }")
    body = "\n".join(lines)
    attrs = f"attributes {{subgroup_size={s}, work_group_size=[{s},1]}}"
    gemm = kernel_text(m, n, k, ty).replace(") {\n", f") {attrs} {{\n", 1)
    return gemm.replace(
        "    gemm.n.n %alpha, %a, %b, %beta, %c\n", f"    parallel {{\n{body}\n    }}\n"
    )


def floor_expected(a: np.ndarray, b: np.ndarray, s: int) -> np.ndarray:
    """What the floor kernel stores, for stacks a (batch, M, K) and b (batch, K, N): C[:, j] =
    A[:, j % K] + B[:, j] per block of `s` rows, B's blocks beyond C's last one added to it."""
    _, m, k = a.shape
    n = b.shape[2]
    out = a[:, :, np.arange(n) % k].copy()
    last = (m - 1) // s * s
    for r in range(0, k, s):
        dest = r if r < m else last
        rows = min(s, k - r, m - dest)
        out[:, dest : dest + rows, :] += b[:, r : r + rows, :]
    return out


def floor_check(case: Case, s: int) -> float:
    """The floor kernel's `relative_error` on a small batch."""
    a, b, c = case.data(5)
    arrays = case.to_device(a, b, c)
    case.launch(arrays, 5)()
    got = arrays[2].get().transpose(2, 0, 1)
    return relative_error(got, floor_expected(a, b, s))


def row(args: argparse.Namespace, m: int, n: int, k: int, ty: str, xsmm, s: int) -> bool:
    """Times and prints one row; False when a column's result failed its check."""
    ours = Case(m, n, k, ty)
    cases = {
        "ours": ours,
        "cached": Case(m, n, k, ty, text=cached_text(kernel_text(m, n, k, ty))),
        "floor": Case(m, n, k, ty, text=floor_text(m, n, k, ty, s)),
    }
    for case in cases.values():
        case.queue = ours.queue  # one queue: the kernels run in order on the same host arrays
    a, b, c = ours.data(ours.batch(args.mb))
    batch = a.shape[0]
    arrays = tuple(aligned_stack(x) for x in (a, b, c))  # every column's memory
    fns = {name: case.launch(arrays, batch) for name, case in cases.items()}
    if xsmm is not None:
        fns["xsmm"] = gemm_anchors.xsmm_gemm(xsmm, m, n, k, *arrays)
    # the GEMM columns on the arrays they are timed on ("cached" writes 8 entries only, and
    # "floor" computes something else: checked on a small batch)
    gemms = {name: fns[name] for name in ("ours", "xsmm") if name in fns}
    errors = timed_errors(gemms, arrays[2], np.matmul(a, b))
    errors["floor"] = floor_check(cases["floor"], s)

    times = time_candidates({name: cpu_timed(fn) for name, fn in fns.items()}, args.repeat)
    cores = os.cpu_count() or 1
    flops = 2.0 * m * n * k * batch
    gflops = {name: flops / (t / cores) * 1e-9 for name, t in times.items()}
    tol = tolerance(ty, k)
    columns = cells(gflops, errors, tol, ("ours", "cached", "floor", "xsmm"))
    print(
        f"{f'{m}x{n}x{k}':>10} {ty:>4} {batch:>7} {columns} {max(errors.values()):>8.1e}",
        flush=True,
    )
    return all(e <= tol for e in errors.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=11, help="timed rounds (median is shown)")
    ap.add_argument("--mb", type=float, default=60.0, help="A+B+C size in MiB (sets the batch)")
    ap.add_argument("--sizes", default="16,32,48,64", help="M=N=K values, comma separated")
    ap.add_argument("--odd", default="23x37x19", help="extra MxNxK case ('' for none)")
    ap.add_argument("--types", default="f32,f64")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as gemm_batched.py: idle threads sleep
    os.environ.setdefault("KMP_BLOCKTIME", "0")
    from tinytc_py.runtime import device
    from tinytc_py.runtime.opencl import core_info_for

    cpu = core_info_for(device.default_device()).cpu
    if cpu is None:
        print("the default OpenCL device is not a CPU", file=sys.stderr)
        return 1
    arch = os.environ.get("CL_CONFIG_CPU_TARGET_ARCH", "native")
    print(f"CPU: {cpu_description()}; code for {cpu.isa} (CL_CONFIG_CPU_TARGET_ARCH={arch})")
    print(
        f"load average {os.getloadavg()[0]:.2f}; median of {args.repeat} interleaved rounds, "
        f"CPU time per launch; GFLOP/s of the GEMM per {os.cpu_count()} busy cores\n"
    )
    print(
        f"{'MxNxK':>10} {'type':>4} {'batch':>7} {'ours':>7} {'cached':>7} {'floor':>7} {'xsmm':>7} {'err':>8}"
    )
    xsmm = gemm_anchors.xsmm_library()
    shapes = [(x, x, x) for x in map(int, args.sizes.split(","))] if args.sizes else []
    if args.odd:
        shapes.append(tuple(map(int, args.odd.split("x"))))  # type: ignore[arg-type]
    ok = True
    for ty in args.types.split(","):
        s = cpu.lanes(np.dtype(TYPES[ty]).itemsize)
        for m, n, k in shapes:
            ok &= row(args, m, n, k, ty, xsmm, s)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
