"""Batched small GEMM, C_i = A_i B_i: our kernel against numpy.matmul, torch.bmm, MKL and
libxsmm, for the native ISA and for AVX2 code, with a measured FMA peak.

    .venv/bin/python benchmarks/gemm_batched.py [--repeat N] [--mb MB] [--sizes 16,32,48,64]
                                                [--odd 23x37x19] [--isa native,core-avx2]
                                                [--no-tune] [--no-torch] [--upstream-build DIR]

For every ISA of --isa the script runs itself once more with CL_CONFIG_CPU_TARGET_ARCH set to it
("native" leaves the runtime's own choice: the host's ISA; `core-avx2` makes the Intel CPU
runtime generate AVX2 code also on an AVX-512 host, and our core info follows: see
target/cpu_core.py; the other columns get AVX2 code through their own switches,
gemm_anchors.AVX2_ENV). For every (M, N, K) and dtype (f32, f64) it
- compiles a batched gemm kernel (one work-group per batch entry: `%gid = group_id.x`, subviews,
  `gemm.n.n`) for the default OpenCL device with the cost model's blocking ("ours"), and again
  with the autotuner ("tuned"; it times candidates once and stores the choice in the tuning
  cache, so a second run of the script times nothing), and checks one small launch of each
  against NumPy; the kernel gets alpha = 1 and beta = 0, so every column computes C = A B;
- sets the batch by the working set: A, B and C of all entries take --mb MiB (default 60), so
  every shape streams from memory, as a large batched GEMM does (a batch picked by timing a
  probe launch depended on how busy the machine was during the probe);
- runs every column on the same memory: one set of column-major stacks A (M, K, batch),
  B (K, N, batch), C (M, N, batch) in NumPy arrays whose data start on a 2 MiB boundary
  (`aligned_stack`; the OpenCL runtime's own buffers were 2 MiB aligned, and the boundary gives
  every column the same chance of transparent huge pages). Our kernels ("ours", "tuned",
  "upstr") take these host arrays in place: Intel's CPU runtime has fine-grained system SVM, so
  the launch wrapper passes their addresses (runtime/opencl.py; `Case.launch` fails if it would
  stage a copy instead). MKL's cblas_?gemm_batch_strided and libxsmm (gemm_anchors.py) read the
  stacks as our kernels do; numpy.matmul and torch.bmm compute the transposed product
  C_i^T = B_i^T A_i^T on the same bytes, which as (batch, N, K), (batch, K, M) and (batch, N, M)
  views are row-major stacks, their preferred layout. (On different memory, NumPy's arrays
  against the runtime's buffers, the same kernel differed by 10-25 % at small sizes:
  docs/_benchmarks.rst.) torch, MKL and libxsmm are not dependencies of the project: `make
  bench-gemm` installs them (torch's CPU build, PyPI's mkl, Debian's libxsmm-dev) and runs this
  script; a column whose library is missing is nan;
- with an upstream build (--upstream-build or TINYTC_UPSTREAM_BUILD: tinytc v0.4.0 built with
  CMake, see compile_capi.py), compiles the same kernel text with upstream's library through
  its C API (c/compile_capi.c) for tgl with f64 (upstream has no CPU target; first_result.py
  says why tgl) and times that SPIR-V built on the same device, launched with the work-group
  size its kernel declares on the same device arrays ("upstr"; nan without a build).
Each figure is the median of --repeat rounds (default 7) that run each column once, in a new
random order, every timed run right after an untimed one of the same function (so the JIT,
first touch and the previous function's threads are excluded; timing.interleaved_medians says
why). GFLOP/s counts 2*M*N*K flops per batch entry for every column. "best other" is the best
of numpy, bmm, MKL, libxsmm and upstream, "ours/best" our cost-model kernel against it. "blocks" names
the register blocks (model/tuned, row blocks x columns, k unrolling; analysis/gemm_model.py).
Every column's result on the timed arrays (and our kernels' small launch) is compared with
NumPy as an error relative to the result's largest magnitude (`relative_error`); a column whose
error passes `tolerance` (ten roundings per term of the K-term dot products) shows FAILED
instead of its figure, is left out of "best other", and the script exits with status 1. "err"
is the largest of the columns' errors.

Peak: the measured FMA peak of the ISA the code is generated for (gemm_anchors.fma_peak: a loop
of FMAs on 10 independent accumulators on all logical CPUs, compiled for the native ISA or for
AVX2), printed with the CPU model, family/model and the ISA.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

import gemm_anchors
from compile_capi import build_upstream, clean_env
from programs import upstream_build
from timing import cpu_description, interleaved_medians

TYPES = {"f32": np.float32, "f64": np.float64}
TARGET_ARCH_ENV = "CL_CONFIG_CPU_TARGET_ARCH"


def kernel_text(m: int, n: int, k: int, ty: str, sizes: str = "") -> str:
    """The kernel; `sizes` = "S,W0,W1" sets subgroup_size and work_group_size explicitly."""
    attrs = ""
    if sizes:
        s, w0, w1 = sizes.split(",")
        attrs = f" attributes {{subgroup_size={s}, work_group_size=[{w0},{w1}]}}"
    return f"""\
func @gemm(%alpha: {ty}, %A: memref<{ty}x{m}x{k}x?>, %B: memref<{ty}x{k}x{n}x?>, %beta: {ty},
           %C: memref<{ty}x{m}x{n}x?>){attrs} {{
    %gid = group_id.x : index
    %a = subview %A[0:{m},0:{k},%gid] : memref<{ty}x{m}x{k}>
    %b = subview %B[0:{k},0:{n},%gid] : memref<{ty}x{k}x{n}>
    %c = subview %C[0:{m},0:{n},%gid] : memref<{ty}x{m}x{n}>
    gemm.n.n %alpha, %a, %b, %beta, %c
}}
"""


def fortran_stack(x: np.ndarray) -> np.ndarray:
    """(batch, r, c) -> column-major (r, c, batch): the memref<r x c x ?> layout."""
    return np.asfortranarray(x.transpose(1, 2, 0))


ALIGN = 2 << 20  # the start of every benchmark array (the runtime's buffers had this alignment)


def aligned_stack(x: np.ndarray) -> np.ndarray:
    """fortran_stack(x) in memory that starts on an ALIGN boundary."""
    rows, cols, batch = x.shape[1], x.shape[2], x.shape[0]
    raw = np.empty(x.nbytes + ALIGN, dtype=np.uint8)
    skip = -raw.ctypes.data % ALIGN
    flat = raw[skip : skip + x.nbytes].view(x.dtype)
    out = flat.reshape((rows, cols, batch), order="F")
    out[...] = x.transpose(1, 2, 0)
    return out


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """The largest error of `got` relative to the largest magnitude in `want` (at least 1)."""
    return float(np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want)))))


def tolerance(ty: str, k: int) -> float:
    """The largest `relative_error` a correct column shows: ten roundings per term of its
    K-term dot products (an order of magnitude above the errors of correct columns)."""
    return 10 * k * float(np.finfo(TYPES[ty]).eps)


def timed_errors(
    fns: dict[str, Callable[[], None]], c: np.ndarray, want: np.ndarray
) -> dict[str, float]:
    """Each column's `relative_error` on the arrays it is timed on: `fns[name]()` once with C
    (the column-major stack `c`) zeroed before, against `want` (batch, M, N)."""
    errors = {}
    for name, fn in fns.items():
        c[...] = 0
        fn()
        errors[name] = relative_error(c.transpose(2, 0, 1), want)
    return errors


def cells(
    figures: dict[str, float], errors: dict[str, float], tol: float, names: tuple[str, ...]
) -> str:
    """The figures of columns `names` (nan when not run), FAILED for a column whose error
    passes `tol`."""
    return " ".join(
        f"{'FAILED':>7}" if errors.get(x, 0.0) > tol else f"{figures.get(x, float('nan')):>7.1f}"
        for x in names
    )


class Case:
    """The kernel of one row, ours or (`spirv`) upstream's binary of the same text; `text`
    replaces the kernel (gemm_limits.py: the same launch with other work), `core_info` the
    device's (gemm_ab.py: pinned blockings)."""

    def __init__(
        self,
        m: int,
        n: int,
        k: int,
        ty: str,
        sizes: str = "",
        tune: bool = False,
        spirv: bytes | None = None,
        text: str | None = None,
        core_info=None,
    ):
        from tinytc_py.runtime import opencl as rt

        self.m, self.n, self.k, self.ty = m, n, k, ty
        self.dtype = TYPES[ty]
        text = text or kernel_text(m, n, k, ty, sizes)
        if spirv is None:
            self.prog = rt.program(text, core_info=core_info, autotune=tune)
            self.kernel = self.prog.kernel("gemm")
        else:  # upstream's SPIR-V with our metadata (the calling convention is the same)
            from tinytc_py.compiler import binary_of
            from tinytc_py.runtime import device

            dev, ctx = device.default_device(), device.default_context()
            ours = binary_of(text, rt.core_info_for(dev))
            binary = dataclasses.replace(ours, data=spirv, cache=False)
            self.prog = rt.Program(binary, ctx, dev)
            self.kernel = self.prog.kernel("gemm")
            wgs = rt.cl.Kernel(self.prog.cl_program, "gemm").get_work_group_info(
                rt.cl.kernel_work_group_info.COMPILE_WORK_GROUP_SIZE, dev
            )
            self.kernel.info = dataclasses.replace(
                self.kernel.info, work_group_size=(wgs[0], wgs[1])
            )
        self.queue = rt.cl.CommandQueue(self.prog.context)
        self.alpha, self.beta = 1.0, 0.0

    def data(self, batch: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rng = np.random.default_rng(0)
        shapes = ((batch, self.m, self.k), (batch, self.k, self.n), (batch, self.m, self.n))
        return tuple(rng.standard_normal(s).astype(self.dtype) for s in shapes)  # type: ignore[return-value]

    def launch(self, arrays: tuple, batch: int) -> Callable[[], None]:
        """One launch of the kernel on A, B, C stacked column-major: pyopencl arrays, or host
        arrays that the kernel uses in place (never a staged copy: an error instead)."""
        from tinytc_py.runtime.launch import elem_strides, in_place
        from tinytc_py.runtime.opencl import cl

        da, db, dc = arrays
        al, be = self.dtype(self.alpha), self.dtype(self.beta)
        params = [p for p in self.kernel.info.params if p.kind == "memref"]
        svm = self.prog.device.svm_capabilities & cl.device_svm_capabilities.FINE_GRAIN_SYSTEM
        for p, x in zip(params, arrays, strict=True):
            if isinstance(x, np.ndarray) and not (
                svm and in_place(x, elem_strides(x), p.alignment)
            ):
                raise ValueError(f"%{p.name} would be copied, not used in place")

        def run() -> None:
            self.kernel(al, da, db, be, dc, num_groups=(batch, 1, 1), queue=self.queue)

        return run

    def to_device(self, a, b, c) -> tuple:
        import pyopencl.array as cla

        return tuple(cla.to_device(self.queue, fortran_stack(x)) for x in (a, b, c))

    def check(self) -> float:
        """The relative error of one small launch on pyopencl arrays (`relative_error`)."""
        a, b, c = self.data(37)
        arrays = self.to_device(a, b, c)
        self.launch(arrays, 37)()
        got = arrays[2].get().transpose(2, 0, 1)
        return relative_error(got, self.alpha * np.matmul(a, b) + self.beta * c)

    def batch(self, mb: float) -> int:
        """The batch whose A, B and C take `mb` MiB."""
        per_entry = (self.m * self.k + self.k * self.n + self.m * self.n) * self.dtype().itemsize
        return max(1, int(mb * 2**20 // per_entry))


UPSTREAM_TARGET = "tgl+f64"


class Upstream:
    """Upstream's compiler through c/compile_capi.c linked against its library."""

    def __init__(self, build: Path) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="gemm_batched_upstream_"))
        self.exe = build_upstream(build, self.work / "compile_upstream")

    def spirv(self, text: str) -> bytes:
        src = self.work / "gemm.ir"
        src.write_text(text, encoding="utf-8")
        env = clean_env(SPIRV_OUT_DIR=str(self.work))
        cmd = [str(self.exe), "1", UPSTREAM_TARGET, str(src)]
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        return (self.work / "gemm.ir.spv").read_bytes()


def block_names(m: int, n: int, k: int, ty: str, dev: object, tune: bool, sizes: str = "") -> str:
    """model/tuned register blocks of the case (the tuned one from the tuning cache; with
    --no-tune the "tuned" column runs the model's blocks, shown as model/-); `sizes` as for
    `kernel_text` (its subgroup size replaces the compiler's)."""
    from tinytc_py.analysis.gemm_model import batched_problem, cpu_blocking, subgroup_size
    from tinytc_py.runtime.autotune import autotune
    from tinytc_py.runtime.opencl import core_info_for, program
    from tinytc_py.target.gemm_blocking import GemmKey
    from tinytc_py.text.dialect import parse

    info = core_info_for(dev)
    if info.cpu is None:
        return "-"
    size = np.dtype(TYPES[ty]).itemsize
    sgs = int(sizes.split(",")[0]) if sizes else subgroup_size([m], size, info.cpu)
    key = GemmKey(m, n, k, (ty, ty, ty), (False, False))
    model = cpu_blocking(batched_problem(key, size, size, sgs, info.cpu), info.cpu)
    if not tune:
        return f"{model.text()}/-"
    tuned = autotune(parse(kernel_text(m, n, k, ty, sizes)), dev, info, program).gemm_blockings
    return f"{model.text()}/{tuned[key].text() if key in tuned else '-'}"


def run_isa(args: argparse.Namespace) -> bool:
    """The table of one ISA (CL_CONFIG_CPU_TARGET_ARCH and the other columns' switches are
    already set for this process); False when a column failed its check."""
    from tinytc_py.runtime import device
    from tinytc_py.runtime.opencl import core_info_for

    torch = None
    if not args.no_torch:
        try:
            import torch  # type: ignore[no-redef]

            torch.set_num_threads(os.cpu_count() or 1)
        except ImportError:
            print("torch not installed: its column is nan", file=sys.stderr)
            torch = None
    libs = {"mkl": gemm_anchors.mkl_library(), "xsmm": gemm_anchors.xsmm_library()}
    upstream = Upstream(args.upstream_build) if args.upstream_build else None

    dev = device.default_device()
    cpu = core_info_for(dev).cpu
    arch = os.environ.get(TARGET_ARCH_ENV, "native")
    peak, peak_isa = gemm_anchors.fma_peak("native" if arch == "native" else "avx2")
    print(f"== {TARGET_ARCH_ENV}={arch}: code for {cpu.isa if cpu else '?'} ==")
    print(f"CPU: {cpu_description()}; load average {os.getloadavg()[0]:.2f}")
    print(f"device: {dev.name.strip()} ({dev.max_compute_units} compute units)")
    print(
        f"peak: measured FMA loop ({peak_isa}, 10 accumulators, {os.cpu_count()} threads) "
        f"{peak['f32']:.1f} GFLOP/s f32, {peak['f64']:.1f} f64"
    )
    if torch is not None:
        print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    if upstream is not None:
        print(f"upstream: {args.upstream_build}, its SPIR-V for {UPSTREAM_TARGET}")
    print(
        f"median of {args.repeat} interleaved rounds (each timed run after an untimed one), "
        f"{args.mb:.0f} MiB of A, B, C per launch; GFLOP/s = 2*M*N*K*batch / time\n"
    )

    shapes = [(s, s, s) for s in map(int, args.sizes.split(","))] if args.sizes else []
    if args.odd:
        m, n, k = map(int, args.odd.split("x"))
        shapes.append((m, n, k))
    head = (
        f"{'MxNxK':>10} {'type':>4} {'batch':>7} {'ours':>7} {'%peak':>6} {'tuned':>7} "
        f"{'%peak':>6} {'numpy':>7} {'bmm':>7} {'mkl':>7} {'xsmm':>7} {'upstr':>7} {'ours/best':>9} "
        f"{'blocks model/tuned':>19} {'err':>8}"
    )
    print(head)
    print("-" * len(head))
    ok = True
    for ty in args.types.split(","):
        for m, n, k in shapes:
            ok &= row(args, m, n, k, ty, peak[ty], torch, libs, dev, upstream)
    return ok


def row(
    args, m: int, n: int, k: int, ty: str, peak: float, torch, libs: dict, dev, upstream
) -> bool:
    """Times and prints one row; False when a column's result failed its check."""
    case = Case(m, n, k, ty, args.sizes_attr)
    tuned_case = Case(m, n, k, ty, args.sizes_attr, tune=not args.no_tune)
    tuned_case.queue = case.queue  # one queue: the kernels run in order on the same host arrays
    small = {"ours": case.check(), "tuned": tuned_case.check()}  # a launch on pyopencl arrays
    up_case = None
    if upstream is not None:
        up_case = Case(m, n, k, ty, spirv=upstream.spirv(kernel_text(m, n, k, ty)))
        up_case.queue = case.queue
        small["upstr"] = up_case.check()
    batch = case.batch(args.mb)
    a, b, c = case.data(batch)
    fa, fb, fc = (aligned_stack(x) for x in (a, b, c))  # every column's memory
    arrays = (fa, fb, fc)
    # C^T = B^T A^T on the same bytes, as row-major (batch, rows, cols) stacks
    at, bt, ct = (x.transpose(2, 1, 0) for x in arrays)
    fns = {
        "ours": case.launch(arrays, batch),
        "tuned": tuned_case.launch(arrays, batch),
        "numpy": lambda: np.matmul(bt, at, out=ct),
    }
    if up_case is not None:
        fns["upstr"] = up_case.launch(arrays, batch)
    if torch is not None:
        ta, tb, to = (torch.from_numpy(x) for x in (at, bt, ct))
        fns["bmm"] = lambda: torch.bmm(tb, ta, out=to)
    if libs["mkl"] is not None:
        fns["mkl"] = gemm_anchors.mkl_gemm(libs["mkl"], m, n, k, fa, fb, fc)
    if libs["xsmm"] is not None:
        fns["xsmm"] = gemm_anchors.xsmm_gemm(libs["xsmm"], m, n, k, fa, fb, fc)
    errors = timed_errors(fns, fc, np.matmul(a, b))  # every column on the timed arrays
    errors = {name: max(e, small.get(name, 0.0)) for name, e in errors.items()}
    tol = tolerance(ty, k)
    flops = 2.0 * m * n * k * batch
    gflops = {name: flops / t * 1e-9 for name, t in interleaved_medians(fns, args.repeat).items()}
    nan = float("nan")
    ours, tuned = gflops["ours"], gflops["tuned"]
    names = ("numpy", "bmm", "mkl", "xsmm", "upstr")
    passed = [gflops[x] for x in names if x in gflops and errors[x] <= tol]
    best = max(passed, default=nan)
    print(
        f"{f'{m}x{n}x{k}':>10} {ty:>4} {batch:>7} {cells(gflops, errors, tol, ('ours',))} "
        f"{100 * ours / peak:>5.1f}% {cells(gflops, errors, tol, ('tuned',))} "
        f"{100 * tuned / peak:>5.1f}% {cells(gflops, errors, tol, names)} {ours / best:>9.2f} "
        f"{block_names(m, n, k, ty, dev, not args.no_tune, args.sizes_attr):>19} {max(errors.values()):>8.1e}",
        flush=True,
    )
    return all(e <= tol for e in errors.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="timed rounds (median is shown)")
    ap.add_argument("--mb", type=float, default=60.0, help="A+B+C size in MiB (sets the batch)")
    ap.add_argument("--sizes", default="16,32,48,64", help="M=N=K values, comma separated")
    ap.add_argument("--odd", default="23x37x19", help="extra MxNxK case ('' for none)")
    ap.add_argument("--types", default="f32,f64")
    ap.add_argument(
        "--isa",
        default="native,core-avx2",
        help="CL_CONFIG_CPU_TARGET_ARCH values to measure, comma separated (native = unset)",
    )
    ap.add_argument("--no-tune", action="store_true", help="tuned column = the cost model")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument(
        "--upstream-build",
        type=Path,
        default=upstream_build(),
        help="upstream's CMake build folder (default TINYTC_UPSTREAM_BUILD): an upstream column",
    )
    ap.add_argument(
        "--sizes-attr",
        default="",
        metavar="S,W0,W1",
        help="force subgroup_size=S, work_group_size=[W0,W1] (default: the compiler's choice)",
    )
    argv = sys.argv[1:] if argv is None else argv
    args = ap.parse_args(argv)
    # The OpenMP runtimes of MKL, libxsmm and torch keep their threads spinning for a while
    # after a call (libgomp's and libiomp5's default): in interleaved rounds the column timed
    # next would share the cores with them. Idle threads sleep instead, for every column alike
    # (before the runtimes are loaded: they read these once).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("KMP_BLOCKTIME", "0")
    isas = args.isa.split(",")
    if len(isas) == 1:
        if isas[0] != "native":  # before the runtimes' first use
            os.environ[TARGET_ARCH_ENV] = isas[0]
            os.environ.update(gemm_anchors.AVX2_ENV)
        return 0 if run_isa(args) else 1
    status = 0
    for isa in isas:
        skip = {TARGET_ARCH_ENV, *gemm_anchors.AVX2_ENV}
        env = {k: v for k, v in os.environ.items() if k not in skip}
        cmd = [sys.executable, __file__, *argv, "--isa", isa]
        status |= subprocess.run(cmd, env=env, check=False).returncode
        print()
    return status


if __name__ == "__main__":
    sys.exit(main())
