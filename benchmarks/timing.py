"""Timing shared by the benchmark scripts (run as `python benchmarks/NAME.py`, so this folder
is on the import path)."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

from tinytc_py.gemm_tuning import time_candidates


def median_time(fn: Callable[[], object], repeat: int) -> float:
    """Median seconds of `repeat` calls after one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def interleaved_medians(fns: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median seconds of each function over `rounds` rounds that call every function once, in
    a new random order each round; every timed call follows an untimed call of the same
    function. Why interleaved: a disturbance of a few seconds (another process, the clock)
    then slows one call of each function rather than all calls of the one timed while it
    lasted, and the median drops it. Why the untimed call first: the threads of the previous
    function may still spin for work (OpenBLAS, OpenMP, TBB) and take cores from the next one
    (timed right after torch.bmm, our kernel ran at 0.83x the same kernel timed after ours);
    a pause instead lets the clocks of an idle machine drop (after 0.2 s of sleep,
    memory-bound rows such as 16^3 f32 ran at 0.6x for every column)."""

    def timed(fn: Callable[[], object]) -> Callable[[], float]:
        def run() -> float:
            t0 = time.perf_counter()
            fn()
            return time.perf_counter() - t0

        return run

    return time_candidates({name: timed(fn) for name, fn in fns.items()}, rounds)


def cpu_timed(fn: Callable[[], object]) -> Callable[[], float]:
    """`fn` made into a call that returns the process's CPU seconds it took (all threads): on
    a shared machine, time another process took from the cores is not charged to the kernel."""

    def run() -> float:
        t0 = time.process_time()
        fn()
        return time.process_time() - t0

    return run


def cpu_description() -> str:
    """The host CPU for a benchmark's header: model name, family/model, widest vector ISA and
    logical CPU count, from /proc/cpuinfo (an "AMD EPYC" model name alone does not say which
    generation, nor whether it has AVX-512)."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return "unknown CPU"
    flags = set(fields.get("flags", "").split())
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    family = f"family {fields.get('cpu family', '?')} model {fields.get('model', '?')}"
    return f"{fields.get('model name', 'unknown CPU')} ({family}, {isa}, {os.cpu_count()} logical CPUs)"
