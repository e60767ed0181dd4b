"""The kernel cache across processes (gemm_child.py builds and runs GEMM programs on the OpenCL
device and prints its results and cache counters): a second process neither compiles nor runs
the device JIT, eight processes filling an empty folder at once all succeed and leave one valid
entry per key, sixteen processes missing the same keys at the same moment run the device
build once (SPIR-V, which takes no lock, as often as they miss it, leaving one whole entry),
and damaged entries of either level are rebuilt with correct results. Also the
`tinytc-cache` command on the folder such processes filled, and `tinytc-cache warm` (or its
Python function) before a job. Level Zero runs on our CPU driver (capi/ze_cpu) when there is no GPU driver."""

from __future__ import annotations

import ctypes.util
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("pyopencl")

from tinytc_py.kernel_cache import locks, store, trust  # noqa: E402

from . import gemm_child  # noqa: E402

pytestmark = pytest.mark.timeout(300, method="thread")

CHILD = Path(__file__).with_name("gemm_child.py")
KERNELS = {1: {"gemm_static"}, 2: {"gemm_static", "gemm_nn", "gemm_nt", "gemm_tn", "gemm_tt"}}


def child_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TINYTC_CACHE")}
    return {**env, "TINYTC_CACHE_DIR": str(root)}


def start(
    root: Path, count: int, runtime: str = "opencl", barrier: tuple[Path, int] | None = None
) -> subprocess.Popen:
    wait = [str(barrier[0]), str(barrier[1])] if barrier else []
    return subprocess.Popen(
        [sys.executable, str(CHILD), str(count), runtime, *wait],
        env=child_env(root),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen, count: int) -> dict[str, int]:
    """The child's cache counters, after checking it exited cleanly with correct results."""
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    result = json.loads(out.splitlines()[-1])
    assert set(result["errors"]) == KERNELS[count]
    for name, error in result["errors"].items():
        assert error < (1e-12 if name == "gemm_static" else 1e-4), name
    return result["stats"]


def run(root: Path, count: int, runtime: str = "opencl") -> dict[str, int]:
    return finish(start(root, count, runtime), count)


def level_zero_or_skip() -> None:
    """The child's Level Zero runtime needs the loader and a driver: a GPU one or our CPU
    driver from build/lib, which it selects by itself."""
    from tinytc_py.runtime import level_zero, ze_api

    try:
        ze_api.loader()
    except ze_api.ZeError as e:
        pytest.skip(str(e))
    gpu = ctypes.util.find_library(level_zero.GPU_DRIVER)
    if gpu is None and level_zero.cpu_driver_path() is None:
        pytest.skip("no Level Zero driver (make capi builds the CPU driver)")


def entries(root: Path) -> list[Path]:
    return sorted((root / "kernels").glob("*" + store.SUFFIX))


@pytest.mark.parametrize("runtime", ["opencl", "level_zero"])
def test_second_process_neither_compiles_nor_jits(tmp_path: Path, runtime: str) -> None:
    if runtime == "level_zero":
        level_zero_or_skip()
    first = run(tmp_path, 2, runtime)
    assert (first["compiles"], first["device_builds"]) == (2, 2)
    assert (first["spirv_misses"], first["native_misses"]) == (2, 2)
    second = run(tmp_path, 2, runtime)
    assert second == {"spirv_hits": 2, "native_hits": 2}  # no compiles, no device builds


def test_eight_processes_at_once_on_an_empty_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    procs = [start(tmp_path, 1) for _ in range(8)]
    for proc in procs:
        finish(proc, 1)
    names = [p.name for p in entries(tmp_path)]
    assert [n.split("-")[0] for n in names] == ["native", "spirv"]
    assert not list((tmp_path / "kernels").glob(".tmp-*"))
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))
    assert all(store.get(n.removesuffix(store.SUFFIX)) is not None for n in names)
    assert run(tmp_path, 1) == {"spirv_hits": 1, "native_hits": 1}


def test_sixteen_processes_at_once_build_once_and_compile_without_a_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All sixteen set up their device, then miss both levels of the same program at the same
    moment (gemm_child's barrier): those that miss the SPIR-V entry each compile it (no build
    lock: a compile costs a millisecond) and leave one whole entry, one runs the device JIT
    while the others wait for its entry (or find it), and every one computes the right result."""
    root, barrier = tmp_path / "cache", tmp_path / "barrier"
    barrier.mkdir()
    procs = [start(root, 1, barrier=(barrier, 16)) for _ in range(16)]
    counts: Counter[str] = Counter()
    for proc in procs:
        counts.update(finish(proc, 1))
    assert 1 <= counts["compiles"] == counts["spirv_misses"] <= 16
    assert counts["spirv_hits"] + counts["spirv_misses"] == 16
    assert (counts["device_builds"], counts["native_misses"]) == (1, 1)
    assert counts["native_hits"] + counts["waits"] == 15
    assert counts["lock_timeouts"] == 0
    [spirv] = (root / "kernels").glob("spirv-*" + store.SUFFIX)
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(root))
    assert store.get(spirv.name.removesuffix(store.SUFFIX)) is not None  # whole: checksum holds
    totals = json.loads(tinytc_cache(root, "stats", "--json"))
    assert (totals["compiles"], totals["device_builds"]) == (counts["compiles"], 1)
    assert totals["waits"] == counts["waits"]
    assert totals["hits"] == counts["spirv_hits"] + counts["native_hits"]
    assert not list(root.glob("*" + store.LOCK_SUFFIX))
    assert not list((root / "kernels").glob("*" + store.LOCK_SUFFIX))
    kernels = trust.Folder(root / trust.SUB, None, True)  # per-user: the locks beside it
    assert not list(locks.lock_path("", kernels).parent.glob(".tmp-*"))  # nor their claims


@pytest.mark.parametrize("runtime", ["opencl", "level_zero"])
def test_warm_then_a_job_neither_compiles_nor_builds(tmp_path: Path, runtime: str) -> None:
    if runtime == "level_zero":
        level_zero_or_skip()
    program = tmp_path / "gemm.ir"
    program.write_text(gemm_child.STATIC_F64)
    root = tmp_path / "cache"
    warmed = tinytc_cache(root, "warm", str(program), "-d", runtime)
    assert warmed == f"{program}: compiled, built\n"
    report = json.loads(tinytc_cache(root, "stats", "--json"))
    assert (report["compiles"], report["device_builds"], report["hits"]) == (1, 1, 0)
    assert report["entries"] == {"spirv": 1, "native": 1}
    assert run(root, 1, runtime) == {"spirv_hits": 1, "native_hits": 1}
    after = json.loads(tinytc_cache(root, "stats", "--json"))
    assert (after["compiles"], after["device_builds"], after["hits"]) == (1, 1, 2)
    again = tinytc_cache(root, "warm", str(program), "-d", runtime)
    assert again == f"{program}: SPIR-V cached, device binary cached\n"


def test_warm_in_python_then_a_job_neither_compiles_nor_builds(cache: Path) -> None:
    """kernel_cache.warm with the OpenCL runtime's program builder, in this process."""
    from tinytc_py.kernel_cache import warm
    from tinytc_py.runtime import opencl

    program = cache.parent / "gemm.ir"
    program.write_text(gemm_child.STATIC_F64)
    done = warm([program], opencl.program)
    assert (done["compiles"], done["device_builds"]) == (1, 1)
    assert "spirv_hits" not in done and "native_hits" not in done
    assert run(cache.parent, 1) == {"spirv_hits": 1, "native_hits": 1}


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_every_damaged_entry_is_rebuilt(tmp_path: Path, damage: str) -> None:
    run(tmp_path, 1)
    files = entries(tmp_path)
    whole = {f: f.read_bytes() for f in files}
    for f, raw in whole.items():
        f.write_bytes(raw[: len(raw) // 3] if damage == "truncated" else os.urandom(len(raw)))
    rebuilt = run(tmp_path, 1)
    assert rebuilt["corrupt"] == 2
    assert (rebuilt["compiles"], rebuilt["device_builds"]) == (1, 1)
    assert entries(tmp_path) == files
    assert run(tmp_path, 1) == {"spirv_hits": 1, "native_hits": 1}


@pytest.mark.parametrize("runtime", ["opencl", "level_zero"])
def test_device_binary_the_device_rejects_is_rebuilt(
    tmp_path: Path, runtime: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An intact entry (checksum right) whose bytes are no device binary, as after a driver
    update that kept its version string: the device refuses it, the runtime builds from SPIR-V
    and stores the new binary."""
    if runtime == "level_zero":
        level_zero_or_skip()
    run(tmp_path, 1, runtime)
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))
    (native,) = [e.name for e in store.entries() if e.name.startswith("native-")]
    store.put(native, b"not a device binary" * 8)
    rebuilt = run(tmp_path, 1, runtime)
    assert (rebuilt["native_rejected"], rebuilt["device_builds"]) == (1, 1)
    assert "compiles" not in rebuilt
    assert run(tmp_path, 1, runtime) == {"spirv_hits": 1, "native_hits": 1}


def tinytc_cache(root: Path, command: str, *args: str) -> str:
    """The output of `tinytc-cache COMMAND --dir ROOT ARGS` (without TINYTC_CACHE_DIR)."""
    env = {k: v for k, v in child_env(root).items() if k != "TINYTC_CACHE_DIR"}
    done = subprocess.run(
        [sys.executable, "-m", "tinytc_py.cli.cache", command, "--dir", str(root), *args],
        env=env,
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return done.stdout


def test_tinytc_cache_list_stats_clear(tmp_path: Path) -> None:
    run(tmp_path, 1)
    run(tmp_path, 1)
    listed = tinytc_cache(tmp_path, "list").splitlines()
    sizes = {p.name.split("-")[0]: p.stat().st_size for p in entries(tmp_path)}
    assert sorted(line.split()[0] for line in listed) == ["native", "spirv"]
    for line in listed:
        kind, key, size = line.split()[:3]
        assert int(size) == sizes[kind] and len(key) == 16
    report = dict(line.split(":", 1) for line in tinytc_cache(tmp_path, "stats").splitlines())
    assert report["entries"].strip() == "1 SPIR-V, 1 native"
    assert report["hits"].strip() == "1 SPIR-V, 1 native"
    assert report["misses"].strip() == "1 SPIR-V, 1 native"
    assert report["bytes"].strip().startswith(f"{sum(sizes.values())} ")
    assert tinytc_cache(tmp_path, "clear").startswith("removed 2 entries")
    assert not entries(tmp_path)
    assert tinytc_cache(tmp_path, "list") == ""
    assert run(tmp_path, 1)["compiles"] == 1
