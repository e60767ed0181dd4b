"""GEMM autotuner, compiler side: which blockings to try, the kernels that try them, the tuning
cache and the choice. How long a kernel takes is asked of a `KernelTimer`, which the runtime
supplies (runtime/autotune.py times on an OpenCL device), so data still only flows down: the
compiler never launches anything itself.

Why tune at all: a CPU whose behaviour the cost model (analysis/gemm_model.py) misjudges still
gets its best block. Opt-in, because timing costs compile time (each candidate is one JIT
build): compiler-context flag `OptFlag.autotune` (C: tinytc_optflag_autotune,
`tinytc --autotune`, Python `program(..., autotune=True)`). For every gemm with static sizes
`tune` looks up the per-device tuning cache (`cache_subdir("tuning")`, one JSON file per device
name, driver version, ISA and `TUNER_VERSION`, keyed by `table_key`: the gemm's sizes, types and
transposes and the subgroup size its function compiles at, `chosen_subgroup_size`, since a
blocking's row blocks are subgroups: on FMA units narrower than the vectors the same gemm gets
another size depending on the function's other gemms); on a miss it compiles a batched kernel
of that gemm at that subgroup size with the cost model's choice and the model's next best
blockings (`CANDIDATES` in all), has them timed (`time_candidates`) and stores the choice
(`choose`: never one that timed slower than the model's). A gemm whose key comes at several
subgroup sizes in one program keeps the model's blockings (the core info has one blocking per
key). The result is
a copy of the core info whose `gemm_blockings` hold the choices; the lowering uses them instead
of the model. Later compiles hit the cache and time nothing (statistics `tuning_hits` /
`tuning_misses`, one per gemm shape looked up). Only SIMD CPU cores (core info `cpu`) have a
blocking to tune; elsewhere this is a no-op.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import random
import re
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

import numpy as np

from .analysis.gemm_model import batched_problem, cpu_blocking, cpu_candidates, gemm_key
from .binary import Binary
from .cache_dir import atomic_write, cache_subdir
from .compiler import compile_to_spirv
from .ir.region import Prog
from .kernel_cache import stats
from .numpy_types import DTYPES
from .passes.work_group_size import chosen_subgroup_size
from .target.core_info import CoreInfo
from .target.gemm_blocking import GemmBlocking, GemmKey

CANDIDATES = 6
KERNEL = "tune"  # the name of the tuning kernel
ROUNDS = 7  # timed launches per candidate, interleaved (each after an untimed one)
MARGIN = 0.03  # a candidate replaces the model's choice only when its median is this much faster
# In the tuning file's name: choices of an older tuner are timed again (3: keys with the
# subgroup size; version 2 timed at the full vector's subgroup, whatever the compile's was)
TUNER_VERSION = 3


@dataclasses.dataclass(frozen=True)
class BatchedKernel:
    """A compiled kernel to time: one work-group per batch entry; its parameters are the
    `scalars` and then one column-major array of `shape` x batch elements of `dtype` per
    entry of `params`."""

    binary: Binary
    name: str
    params: tuple[tuple[tuple[int, ...], np.dtype], ...]
    scalars: tuple[np.generic, ...] = ()


class KernelTimer(Protocol):
    """What the tuner needs of a device: a name for its tuning file, and timings."""

    def device_name(self) -> str:
        """Device name and driver version (choices are kept per device and driver)."""
        ...

    def launcher(self, kernel: BatchedKernel) -> Callable[[], float]:
        """A function that launches `kernel` once on the device and returns the seconds per
        batch entry. Every launch of every kernel with the same parameters runs on the same
        data, enough of it to stream from memory as a large batch does."""
        ...


def tuning_file(timer: KernelTimer, info: CoreInfo) -> Path:
    """The tuning cache of a device: its name, driver version and the ISA code is made for."""
    isa = info.cpu.isa if info.cpu else "gpu"
    name = f"{timer.device_name()}-{isa}-tuner{TUNER_VERSION}"
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


def static_gemms(prog: Prog, info: CoreInfo) -> dict[GemmKey, set[int]]:
    """The gemms of `prog` whose sizes are known at compile time, each with the subgroup sizes
    of the functions it is in (what the compile gives them, `chosen_subgroup_size`)."""
    found: dict[GemmKey, set[int]] = {}
    for f in prog.funcs:
        keys = {gemm_key(i) for i in f.body.walk() if i.name == "gemm"}
        keys = {k for k in keys if min(k.M, k.N, k.K) >= 0}
        if keys:
            sgs = chosen_subgroup_size(f, info)
            for key in keys:
                found.setdefault(key, set()).add(sgs)
    return found


def table_key(key: GemmKey, subgroup_size: int) -> str:
    """The tuning table's key of a gemm timed at a subgroup size."""
    return f"{key.text()}:sg{subgroup_size}"


def tune(prog: Prog, info: CoreInfo, timer: KernelTimer) -> CoreInfo:
    """`info` with tuned blockings for the gemms of `prog` (from the cache or timed now)."""
    gemms = static_gemms(prog, info) if info.cpu is not None else {}
    tunable = sorted(
        ((key, sgs) for key, (sgs, *others) in gemms.items() if not others),
        key=lambda e: table_key(*e),
    )
    if not tunable:
        return info
    path = tuning_file(timer, info)
    table = _load(path)
    chosen = dict(info.gemm_blockings)
    for key, sgs in tunable:
        text = table.get(table_key(key, sgs))
        if text is None:
            text = tuned_blocking(key, sgs, info, timer).text()
            table = {**_load(path), table_key(key, sgs): text}
            _store(path, table)
            stats.count("tuning_misses")
        else:
            stats.count("tuning_hits")
        chosen[key] = GemmBlocking.from_text(text)
    return dataclasses.replace(info, gemm_blockings=chosen)


def _shapes(key: GemmKey) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """The shapes of A, B and C as stored (transposed operands stored transposed)."""
    a = (key.K, key.M) if key.transposes[0] else (key.M, key.K)
    b = (key.N, key.K) if key.transposes[1] else (key.K, key.N)
    return a, b, (key.M, key.N)


def tuning_kernel(key: GemmKey, subgroup_size: int) -> str:
    """A batched kernel of the gemm at `subgroup_size`: one work-group per batch entry,
    C = alpha A B + beta C.
    alpha and beta are parameters, as in a typical batched GEMM kernel, not constants: the
    runtime's JIT makes different code for constants, in which other blockings win (AVX-512 f32
    64^3: 4x2k4 233 GFLOP/s with constants, 294 with parameters; 4x3k4 264 and 231)."""
    t = "".join(".t" if x else ".n" for x in key.transposes)
    shapes = dict(zip("ABC", _shapes(key), strict=True))
    types = dict(zip("ABC", key.types, strict=True))

    def arg(name: str) -> str:
        return f"%{name}: memref<{types[name]}x{shapes[name][0]}x{shapes[name][1]}x?>"

    def view(name: str) -> str:
        ty, (rows, cols) = types[name], shapes[name]
        return (
            f"    %{name.lower()} = subview %{name}[0:{rows},0:{cols},%gid] "
            f": memref<{ty}x{rows}x{cols}>\n"
        )

    return (
        f"func @{KERNEL}(%alpha: {types['C']}, %beta: {types['C']}, "
        f"{arg('A')}, {arg('B')}, {arg('C')}) attributes {{subgroup_size={subgroup_size}}} {{\n"
        "    %gid = group_id.x : index\n"
        + view("A")
        + view("B")
        + view("C")
        + f"    gemm{t} %alpha, %a, %b, %beta, %c\n"
        + "}\n"
    )


def tuned_blocking(
    key: GemmKey, subgroup_size: int, info: CoreInfo, timer: KernelTimer
) -> GemmBlocking:
    """Times the cost model's choice and its next best candidates for `key` in a function of
    `subgroup_size` (the compile's, `chosen_subgroup_size`); see `choose`."""
    from .text.dialect import parse

    assert info.cpu is not None
    dtypes = tuple(np.dtype(DTYPES[t]) for t in key.types)
    c_size = dtypes[2].itemsize
    problem = batched_problem(key, dtypes[0].itemsize, c_size, subgroup_size, info.cpu)
    model = cpu_blocking(problem, info.cpu)
    others = [b for b in cpu_candidates(problem, info.cpu, CANDIDATES) if b != model]
    params = tuple(zip(_shapes(key), dtypes, strict=True))
    launches = {}
    for blocking in [model, *others][:CANDIDATES]:
        tuned = dataclasses.replace(info, gemm_blockings={**info.gemm_blockings, key: blocking})
        binary = compile_to_spirv(parse(tuning_kernel(key, subgroup_size)), tuned)
        kernel = BatchedKernel(binary, KERNEL, params, (dtypes[2].type(1.5), dtypes[2].type(0.5)))
        launches[blocking] = timer.launcher(kernel)
    return choose(time_candidates(launches), model)


K = TypeVar("K")


def time_candidates(launches: dict[K, Callable[[], float]], rounds: int = ROUNDS) -> dict[K, float]:
    """Median of what each launch returns (its seconds) over `rounds` rounds that launch every
    candidate once, in a new order each round, each timed launch right after an untimed one of
    the same candidate (JIT, first touch, and what the previous candidate left running or
    cached are not timed). Interleaved, a disturbance (another process, a clock change) hits
    all candidates alike instead of the ones timed while it lasted, and the median drops the
    launches it slowed. benchmarks/timing.py times its columns with it too."""
    order = random.Random(0)
    samples: dict[K, list[float]] = {k: [] for k in launches}
    for _ in range(rounds):
        for k in order.sample(list(launches), len(launches)):
            launches[k]()
            samples[k].append(launches[k]())
    return {k: statistics.median(t) for k, t in samples.items()}


def choose(medians: dict[GemmBlocking, float], model: GemmBlocking) -> GemmBlocking:
    """The fastest candidate if it beats the model's choice by more than MARGIN, else the
    model's choice: a tuned blocking is never slower than the model's as far as the timing
    can tell, and noise alone does not replace the model."""
    best = min(medians, key=medians.__getitem__)
    return best if medians[best] < (1 - MARGIN) * medians[model] else model
