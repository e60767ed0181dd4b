"""The anchors of the batched GEMM benchmark: a measured FMA peak, libxsmm and MKL.

- FMA peak: c/fma_peak.c, compiled for the native ISA and for AVX2 (-mavx2 -mfma), run on
  all logical CPUs; a CPU's clock under vector load and its FMA units are what the loop
  measures, so no nominal clock or unit count enters the peak.
- libxsmm: c/xsmm_batch.c against Debian's header-only libxsmm-dev (`apt-get install
  libxsmm-dev`; its libxsmm_source.h includes ../src/*.c, so the header is copied next to a
  `src` link to /usr/include/libxsmm), OpenMP over the batch; LIBXSMM_TARGET=hsw makes it
  generate AVX2 code.
- MKL: cblas_sgemm_batch_strided / cblas_dgemm_batch_strided of libmkl_rt.so.3 from PyPI's
  `mkl` (installed into the environment's lib folder); MKL_ENABLE_INSTRUCTIONS=AVX2 limits it to
  AVX2 code.
The C parts are built once into build/bench (again when their source is newer).
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from programs import ROOT

C_DIR = ROOT / "benchmarks" / "c"
OUT = ROOT / "build" / "bench"
XSMM_HEADER = Path("/usr/include/libxsmm_source.h")
XSMM_SOURCES = Path("/usr/include/libxsmm")

# environment of a run whose code must be AVX2 in every column
AVX2_ENV = {
    "LIBXSMM_TARGET": "hsw",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "ATEN_CPU_CAPABILITY": "avx2",
    "OPENBLAS_CORETYPE": "Haswell",
}


def _stale(target: Path, source: Path) -> bool:
    return not target.exists() or target.stat().st_mtime < source.stat().st_mtime


def fma_peak(isa: str) -> tuple[dict[str, float], str]:
    """Measured GFLOP/s of FMA code per dtype ("f32", "f64") for `isa` ("native" or "avx2"),
    and the vector ISA the loop was compiled to (avx512 or avx2)."""
    source = C_DIR / "fma_peak.c"
    exe = OUT / f"fma_peak_{isa}"
    if _stale(exe, source):
        OUT.mkdir(parents=True, exist_ok=True)
        arch = ["-march=native"] if isa == "native" else ["-mavx2", "-mfma"]
        cmd = ["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-fopenmp", *arch, str(source)]
        subprocess.run([*cmd, "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    fields = dict(line.split("\t") for line in out.splitlines())
    return {"f32": float(fields["f32"]), "f64": float(fields["f64"])}, fields["isa"]


def xsmm_library() -> ctypes.CDLL | None:
    """libxsmm's batched GEMM (None, with a note, when libxsmm-dev is not installed)."""
    if not XSMM_HEADER.exists():
        print("libxsmm-dev not installed: the libxsmm column is nan", file=sys.stderr)
        return None
    source = C_DIR / "xsmm_batch.c"
    lib = OUT / "libxsmm_batch.so"
    if _stale(lib, source):
        include = OUT / "xsmm" / "include"
        include.mkdir(parents=True, exist_ok=True)
        shutil.copy(XSMM_HEADER, include)
        link = OUT / "xsmm" / "src"
        if not link.is_symlink():
            link.symlink_to(XSMM_SOURCES)
        cmd = ["gcc", "-O2", "-shared", "-fPIC", "-fopenmp", "-D__BLAS=0", "-DNDEBUG"]
        cmd += [f"-I{include}", str(source), "-o", str(lib), "-lpthread", "-lrt", "-ldl", "-lm"]
        subprocess.run(cmd, check=True)
    return ctypes.CDLL(str(lib))


def mkl_library() -> ctypes.CDLL | None:
    """libmkl_rt from PyPI's mkl in this environment (None, with a note, without it)."""
    path = Path(sys.prefix) / "lib" / "libmkl_rt.so.3"
    if not path.exists():
        print("mkl not installed (pip install mkl): the MKL column is nan", file=sys.stderr)
        return None
    return ctypes.CDLL(str(path))


def _ptr(x: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(x.ctypes.data)


def xsmm_gemm(
    lib: ctypes.CDLL,
    m: int,
    n: int,
    k: int,
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    resident: int = 0,
) -> Callable[[], None]:
    """C_i = A_i B_i through libxsmm on column-major stacks (m, k, batch) etc.; with
    `resident` > 0, call i of the batch computes entry i % resident (cache-resident operands)."""
    f64 = int(a.dtype == np.float64)
    batch, keep = ctypes.c_long(a.shape[2]), ctypes.c_long(resident)

    def run() -> None:
        if lib.xsmm_gemm_batch(f64, m, n, k, batch, keep, _ptr(a), _ptr(b), _ptr(c)) != 0:
            raise RuntimeError(f"libxsmm has no kernel for {m}x{n}x{k}")

    return run


COL_MAJOR, NO_TRANS = 102, 111  # CBLAS_LAYOUT, CBLAS_TRANSPOSE


def mkl_gemm(
    lib: ctypes.CDLL, m: int, n: int, k: int, a: np.ndarray, b: np.ndarray, c: np.ndarray
) -> Callable[[], None]:
    """C_i = A_i B_i through MKL's cblas_?gemm_batch_strided (LP64 integers)."""
    scalar = ctypes.c_double if a.dtype == np.float64 else ctypes.c_float
    fn = lib.cblas_dgemm_batch_strided if a.dtype == np.float64 else lib.cblas_sgemm_batch_strided
    i, p = ctypes.c_int, ctypes.c_void_p
    fn.argtypes = [i, i, i, i, i, i, scalar, p, i, i, p, i, i, scalar, p, i, i, i]
    fn.restype = None
    args = (COL_MAJOR, NO_TRANS, NO_TRANS, m, n, k, 1.0, _ptr(a), m, m * k, _ptr(b), k, k * n)
    rest = (0.0, _ptr(c), m, m * n, a.shape[2])

    def run() -> None:
        fn(*args, *rest)

    return run
