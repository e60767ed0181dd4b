"""GEMM autotuner: times candidate register blockings on the actual device and keeps the
fastest, so a CPU whose behaviour the cost model misjudges still gets its best block.

Opt-in, because timing costs compile time (each candidate is one JIT build): compiler-context
flag `OptFlag.autotune` (C: tinytc_optflag_autotune, `tinytc --autotune`, Python
`program(..., autotune=True)`). For every gemm with static sizes the tuner looks up the
per-device tuning cache (`cache_subdir("tuning")`, one JSON file per device name, driver version
and ISA, keyed by `GemmKey.text()`: sizes, types, transposes); on a miss it builds a batched
kernel of that gemm with each of the cost model's best `CANDIDATES` blockings, times it, and
stores the fastest. The result is a copy of the core info whose `gemm_blockings` hold the
choices; the lowering uses them instead of the model. Later compiles hit the cache and time
nothing (statistics `tuning_hits` / `tuning_misses`, one per gemm shape looked up). Only SIMD CPU cores (core info `cpu`) have a blocking to tune; elsewhere this is a
no-op.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis.gemm_model import GemmProblem, cpu_candidates, gemm_key
from ..cache_dir import atomic_write, cache_subdir
from ..compiler import compile_to_spirv
from ..ir.region import Prog
from ..kernel_cache import stats
from ..numpy_types import DTYPES
from ..target.core_info import CoreInfo
from ..target.gemm_blocking import GemmBlocking, GemmKey
from .device import cl

CANDIDATES = 6
MIN_LAUNCH_S = 0.01  # one timed launch takes at least this long (the batch grows until it does)
REPEAT = 7


def tuning_file(dev: Any, info: CoreInfo) -> Path:
    """The tuning cache of a device: its name, driver version and the ISA code is made for."""
    isa = info.cpu.isa if info.cpu else "gpu"
    name = f"{dev.name.strip()}-{dev.driver_version.strip()}-{isa}"
    return cache_subdir("tuning") / (re.sub(r"[^A-Za-z0-9._-]+", "_", name) + ".json")


def _load(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _store(path: Path, table: dict[str, str]) -> None:
    """Atomic replace, as several processes may tune at once; an unwritable cache folder only
    means the choice is timed again next time."""
    data = json.dumps(table, indent=1, sort_keys=True).encode()
    with contextlib.suppress(OSError):
        atomic_write(path, data)


def static_gemm_keys(prog: Prog) -> list[GemmKey]:
    """Keys of the gemms of `prog` whose sizes are known at compile time."""
    keys = {gemm_key(i) for f in prog.funcs for i in f.body.walk() if i.name == "gemm"}
    return sorted((k for k in keys if min(k.M, k.N, k.K) >= 0), key=GemmKey.text)


def autotune(prog: Prog, dev: Any, info: CoreInfo) -> CoreInfo:
    """`info` with tuned blockings for the gemms of `prog` (from the cache or timed now)."""
    keys = static_gemm_keys(prog) if info.cpu is not None else []
    if not keys:
        return info
    path = tuning_file(dev, info)
    table = _load(path)
    chosen = dict(info.gemm_blockings)
    for key in keys:
        text = table.get(key.text())
        if text is None:
            text = fastest_blocking(key, dev, info).text()
            table = {**_load(path), key.text(): text}
            _store(path, table)
            stats.count("tuning_misses")
        else:
            stats.count("tuning_hits")
        chosen[key] = GemmBlocking.from_text(text)
    return dataclasses.replace(info, gemm_blockings=chosen)


def tuning_kernel(key: GemmKey) -> str:
    """A batched kernel of the gemm: one work-group per batch entry, C = 1.5 A B + 0.5 C."""
    ta, tb, tc = key.types
    a_shape = (key.K, key.M) if key.transposes[0] else (key.M, key.K)
    b_shape = (key.N, key.K) if key.transposes[1] else (key.K, key.N)
    t = "".join(".t" if x else ".n" for x in key.transposes)

    def arg(name: str, ty: str, shape: tuple[int, int]) -> str:
        return f"%{name}: memref<{ty}x{shape[0]}x{shape[1]}x?>"

    def view(name: str, ty: str, shape: tuple[int, int]) -> str:
        return (
            f"    %{name.lower()} = subview %{name}[0:{shape[0]},0:{shape[1]},%gid] "
            f": memref<{ty}x{shape[0]}x{shape[1]}>\n"
        )

    c_shape = (key.M, key.N)
    return (
        f"func @tune({arg('A', ta, a_shape)}, {arg('B', tb, b_shape)}, {arg('C', tc, c_shape)}) {{\n"
        "    %gid = group_id.x : index\n"
        + view("A", ta, a_shape)
        + view("B", tb, b_shape)
        + view("C", tc, c_shape)
        + f"    %alpha = constant 1.5 : {tc}\n"
        + f"    %beta = constant 0.5 : {tc}\n"
        + f"    gemm{t} %alpha, %a, %b, %beta, %c\n"
        + "}\n"
    )


def fastest_blocking(key: GemmKey, dev: Any, info: CoreInfo) -> GemmBlocking:
    """Times the cost model's best candidates for `key` on `dev`; the fastest wins."""
    from ..text.parser import parse
    from .opencl import program

    assert info.cpu is not None
    ta, tb, tc = (DTYPES[t] for t in key.types)
    sgs = info.cpu.lanes(max(np.dtype(tc).itemsize, 4))
    problem = GemmProblem(key.M, key.N, key.K, np.dtype(ta).itemsize, np.dtype(tc).itemsize, sgs)
    candidates = cpu_candidates(problem, info.cpu, CANDIDATES)
    context = cl.Context([dev])
    queue = cl.CommandQueue(context)
    times = {}
    for blocking in candidates:
        tuned = dataclasses.replace(info, gemm_blockings={**info.gemm_blockings, key: blocking})
        binary = compile_to_spirv(parse(tuning_kernel(key)), tuned)
        kernel = program(binary, dev, context).kernel("tune")
        times[blocking] = time_blocking(kernel, key, (ta, tb, tc), queue)
    return min(times, key=times.__getitem__)


def time_blocking(kernel: Any, key: GemmKey, dtypes: tuple, queue: Any) -> float:
    """Seconds per batch entry of the tuning kernel: the fastest of REPEAT launches (the least
    disturbed by other processes), the batch grown until a launch takes MIN_LAUNCH_S."""
    import pyopencl.array as cla

    a = (key.K, key.M) if key.transposes[0] else (key.M, key.K)
    b = (key.N, key.K) if key.transposes[1] else (key.K, key.N)
    batch = 64
    while True:
        rng = np.random.default_rng(0)
        bufs = [
            cla.to_device(queue, np.asfortranarray(rng.standard_normal((*s, batch)).astype(t)))
            for s, t in zip((a, b, (key.M, key.N)), dtypes, strict=True)
        ]

        def run(bufs: list = bufs, batch: int = batch) -> float:
            t0 = time.perf_counter()
            kernel(*bufs, num_groups=(batch, 1, 1), queue=queue)
            return time.perf_counter() - t0

        run()
        times = [run() for _ in range(REPEAT)]
        if min(times) >= MIN_LAUNCH_S or batch >= 1 << 16:
            return min(times) / batch
        batch *= 4
