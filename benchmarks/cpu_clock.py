"""The clock the cores really run at and the FMA rate they reach, for the % of peak of the
benchmarks: /proc/cpuinfo's "cpu MHz" is the nominal (here: the hypervisor's TSC) frequency,
while the cores boost well above it (on the AMD EPYC here 4.1-4.4 GHz against 2.6 nominal;
our AVX2 kernels reached 124 % of a peak computed from the nominal clock).

Both probes are a few lines of C compiled with the system's `cc` into a temporary folder and
run on every core at once through ctypes (which releases the GIL):
- clock: a chain of dependent integer adds, one cycle each on every x86 core;
- FMA rate: 12 independent FMA chains of the ISA's vector width (more than FMA units x
  latency), so it shows whether `fma_units` of the core info is right.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ADDS = 8  # dependent adds per loop iteration
CHAINS = 12  # independent FMA chains

_SOURCE = r"""
#include <stdint.h>
#include <immintrin.h>
uint64_t add_chain(uint64_t n) {
    uint64_t x = 0;
    for (uint64_t i = 0; i < n; i++)
        __asm__ volatile("add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\t"
                         "add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0" : "+r"(x));
    return x;
}
#define FMA_PROBE(name, isa, vec, fma, set1, cons)                                          \
__attribute__((target(isa))) double name(uint64_t n) {                                       \
    vec b = set1(1.0000001), c = set1(1e-9);                                                    \
    vec a0 = set1(0), a1 = set1(1), a2 = set1(2), a3 = set1(3), a4 = set1(4), a5 = set1(5);    \
    vec a6 = set1(6), a7 = set1(7), a8 = set1(8), a9 = set1(9), a10 = set1(10), a11 = set1(11); \
    for (uint64_t i = 0; i < n; i++) {                                                         \
        a0 = fma(a0, b, c); a1 = fma(a1, b, c); a2 = fma(a2, b, c); a3 = fma(a3, b, c);        \
        a4 = fma(a4, b, c); a5 = fma(a5, b, c); a6 = fma(a6, b, c); a7 = fma(a7, b, c);        \
        a8 = fma(a8, b, c); a9 = fma(a9, b, c); a10 = fma(a10, b, c); a11 = fma(a11, b, c);    \
        __asm__ volatile("" : "+" cons(a0), "+" cons(a1), "+" cons(a2), "+" cons(a3),          \
                         "+" cons(a4), "+" cons(a5), "+" cons(a6), "+" cons(a7),              \
                         "+" cons(a8), "+" cons(a9), "+" cons(a10), "+" cons(a11));           \
    }                                                                                           \
    vec s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;                        \
    return ((double *)&s)[0];                                                                   \
}
FMA_PROBE(fma512, "avx512f", __m512d, _mm512_fmadd_pd, _mm512_set1_pd, "v")
FMA_PROBE(fma256, "avx2,fma", __m256d, _mm256_fmadd_pd, _mm256_set1_pd, "x")
"""


def _library() -> ctypes.CDLL:
    folder = Path(tempfile.mkdtemp(prefix="cpu_clock_"))
    (folder / "probe.c").write_text(_SOURCE, encoding="utf-8")
    lib = folder / "probe.so"
    cc = os.environ.get("CC", "cc")
    subprocess.run(
        [cc, "-O2", "-shared", "-fPIC", str(folder / "probe.c"), "-o", str(lib)], check=True
    )
    dll = ctypes.CDLL(str(lib))
    dll.add_chain.restype = ctypes.c_uint64
    dll.add_chain.argtypes = [ctypes.c_uint64]
    for fn in (dll.fma512, dll.fma256):
        fn.restype = ctypes.c_double
        fn.argtypes = [ctypes.c_uint64]
    return dll


def _on_all_cores(fn, n: int, cores: int) -> float:
    """Seconds of the slowest of `cores` threads each running fn(n) at the same time."""
    times: list[float] = []

    def work() -> None:
        t0 = time.perf_counter()
        fn(n)
        times.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=work) for _ in range(cores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return max(times)


def measure(vector_bytes: int, cores: int) -> tuple[float, float]:
    """(GHz of the add chain, f64 GFLOP/s of the FMA probe of `vector_bytes`) per core, all
    cores busy; the best of three runs of each."""
    dll = _library()
    n = 50_000_000
    ghz = max(ADDS * n / _on_all_cores(dll.add_chain, n, cores) * 1e-9 for _ in range(3))
    fma = dll.fma512 if vector_bytes == 64 else dll.fma256
    lanes = vector_bytes // 8
    rate = max(CHAINS * n * lanes * 2 / _on_all_cores(fma, n, cores) * 1e-9 for _ in range(3))
    return ghz, rate
