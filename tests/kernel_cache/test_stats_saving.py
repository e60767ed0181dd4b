"""The statistics are counted in the process and added to the folder's totals once (stats.py):
a miss updates no file, a read of the totals in the process sees its counts, a process reserves
the bytes of its entries in the totals ahead, in chunks (store.py), with its counts along, and
keeps the bound then, so processes killed with SIGKILL keep it too, and a fork saves first so
that a child's counts and the parent's are each counted once. Saving at a Python program's exit:
test_write_behind.test_a_process_that_exits_right_after_a_miss_leaves_the_entry; at a C host's:
tests/capi/test_capi_kernel_cache.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tinytc_py.compiler import binary_of
from tinytc_py.kernel_cache import stats, store, trust, writer
from tinytc_py.target.core_info import CoreInfo

from .test_spirv_cache import gemm

deferred = pytest.mark.skipif(
    not stats._deferred, reason="counts wait for the exit only where Python's exit runs"
)


def file_counts(cache: Path) -> dict[str, int]:
    """The totals as the statistics file holds them now (no save first, unlike stats.totals)."""
    try:
        return json.loads((cache / stats.FILE).read_text())
    except FileNotFoundError:
        return {}


@deferred
def test_a_miss_updates_no_file_and_a_read_of_the_totals_saves(cache: Path) -> None:
    binary_of(gemm(16), CoreInfo.default())
    writer.wait()  # the entry is written ...
    assert len(list(cache.glob("*" + store.SUFFIX))) == 1
    assert "spirv_misses" not in file_counts(cache)  # ... its counts are not
    totals = stats.totals()
    assert (totals["spirv_misses"], totals["compiles"]) == (1, 1)
    assert file_counts(cache)["spirv_misses"] == 1
    assert stats.totals()["spirv_misses"] == 1  # saved once


@deferred
def test_misses_before_and_after_the_folder_was_made_are_saved_in_one_update(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first miss finds no folder, the second finds the one the first write made: one
    folder, one update of its statistics."""
    updates = []
    real = stats._add_to_totals
    monkeypatch.setattr(stats, "_add_to_totals", lambda d, w: updates.append(d) or real(d, w))
    binary_of(gemm(16), CoreInfo.default())
    writer.wait()
    binary_of(gemm(17), CoreInfo.default())
    stats.save_all()
    assert [u["spirv_misses"] for u in updates if "spirv_misses" in u] == [2]
    assert [u[store.RESERVED] for u in updates if store.RESERVED in u] == [
        store.max_bytes() * store.CLAIM_FIRST  # the first write's claim, before any count
    ]


@deferred
def test_a_process_that_saves_at_exit_claims_in_chunks_and_keeps_the_bound(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bound 1 MiB: the process reserves the bytes of its writes ahead in claims that grow to
    CLAIM_MOST of the bound (32 KiB), each carrying its unsaved counts and checking the bound,
    so the folder never exceeds the bound, and the statistics file is updated once per claim
    (and per scan), not per write."""
    bound = 1024 * 1024
    monkeypatch.setenv("TINYTC_CACHE_MAX_MB", "1")
    updates = []
    real = stats._add_to_totals

    def counted(delta: dict[str, int], where):
        updates.append(delta)
        return real(delta, where)

    monkeypatch.setattr(stats, "_add_to_totals", counted)
    payload = bytes(range(256)) * 16  # 4 KiB
    for i in range(400):
        store.put(f"entry-{i:03}", payload)
        assert store_bytes(cache) <= bound
    claims = [u[store.RESERVED] for u in updates if store.RESERVED in u]
    entry = store_bytes(cache) // len(list(cache.glob("*" + store.SUFFIX)))
    most = int(bound * store.CLAIM_MOST)
    assert claims[:4] == [entry, entry, 2 * entry, 4 * entry]  # the first: one entry's bytes
    assert set(claims[4:]) == {most}
    assert sum(claims) >= 400 * entry > sum(claims) - most
    assert len(updates) == len(claims) + sum(store.SCANS in u for u in updates)
    assert updates[-1].get("spirv_misses", 0) == 0  # carries counts: put's `counts` here none
    stats.save_all()
    assert stats.totals()["evicted"] > 0
    assert store.get("entry-399") is not None and store.get("entry-000") is None


def store_bytes(cache: Path) -> int:
    return sum(f.stat().st_size for f in cache.glob("*" + store.SUFFIX))


@deferred
def test_a_fork_saves_first_and_a_child_counts_once(cache: Path) -> None:
    """The parent's unsaved counts are saved before the fork, the child starts without them
    and adds its own at once (it leaves through os._exit, without exit handlers)."""
    store.put("parent", b"x" * 100, {"compiles": 1})
    assert "compiles" not in file_counts(cache)
    pid = os.fork()
    if pid == 0:
        store.put("child", b"y" * 100, {"compiles": 1})
        os._exit(0 if file_counts(cache).get("compiles") == 2 else 1)
    assert os.waitpid(pid, 0)[1] == 0
    stats.save_all()
    totals = stats.totals()
    assert totals["compiles"] == 2
    assert totals["bytes_written"] == store_bytes(cache)


@deferred
def test_a_write_whose_bytes_a_reset_dropped_saves_later_counts(cache: Path) -> None:
    """reset_totals drops the unsaved bytes_written of a write and the reservation it was
    written from (a new epoch); the next save (of other counts) reserves the write's bytes
    again in the new totals and checks the bound with them, instead of failing on the missing
    counts."""
    store.put("entry", b"x" * 100)
    stats.reset_totals()
    stats.count("corrupt")
    totals = stats.totals()
    assert totals["corrupt"] == 1
    assert "bytes_written" not in totals
    assert totals[store.RESERVED] == store_bytes(cache)
    assert store.get("entry") == b"x" * 100


@deferred
def test_counts_after_the_exit_save_are_saved_at_once(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the exit's save no other save comes: a later count (a C++ static destructor's, a
    library loaded again) goes to the file at once."""
    monkeypatch.setattr(stats, "_deferred", True)  # restored after the test
    stats.count("corrupt")
    assert "corrupt" not in file_counts(cache)
    stats.save_at_exit_end()
    assert file_counts(cache)["corrupt"] == 1
    stats.count("corrupt")
    assert file_counts(cache)["corrupt"] == 2


KILLED = """
import sys
from tinytc_py.kernel_cache import store
name, count, size = sys.argv[1:]
for i in range(int(count)):
    store.put(f"{name}-{i}", bytes(int(size)))
    print(i, flush=True)
sys.stdin.read()  # killed while waiting here, with its reservation and counts unsaved
"""


def run_killed(name: str, count: int, size: int, env: dict[str, str]) -> subprocess.Popen:
    """A process that writes `count` entries of `size` bytes and is then killed (SIGKILL) as a
    job's time limit or the OOM killer does: its exit saves nothing."""
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED, name, str(count), str(size)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for i in range(count):
        assert proc.stdout.readline() == f"{i}\n"
    return proc


def kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=60) == -signal.SIGKILL


def killed_env(cache: Path, bound: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TINYTC_CACHE")}
    return env | {"TINYTC_CACHE_DIR": str(cache.parent), "TINYTC_CACHE_MAX_MB": str(bound / 2**20)}


@pytest.mark.timeout(300, method="thread")
def test_processes_killed_one_after_another_keep_the_bound(cache: Path) -> None:
    """20 processes each write 4 entries of about 1 kB into a 64 KiB bound and are killed
    with SIGKILL (their exits save nothing): every byte was reserved in the statistics before
    it was written, so the folder never exceeds the bound, and the bound's scans evicted.
    (Counted after the writes, as before, the bytes of each killed process's last writes were
    lost, the count stayed under the bound and the folder grew to 20 x 4 entries, 77 kB.)"""
    bound = 64 * 1024
    env = killed_env(cache, bound)
    for i in range(20):
        kill(run_killed(f"p{i}", 4, 900, env))
        assert store_bytes(cache) <= bound
    assert stats.totals()["evicted"] > 0
    assert len(list(cache.glob("*" + store.SUFFIX))) < 20 * 4


@pytest.mark.timeout(300, method="thread")
def test_processes_killed_while_others_write_keep_the_bound_and_its_slack(cache: Path) -> None:
    """Four processes write 1 kB entries at once into a 256 KiB bound and are killed one after
    another at different points: the folder stays under the bound plus the documented slack
    (a process that another's scan passed while it wrote may add, before its next claim, less
    than CLAIM_MOST of the bound and one entry: 3 x (8 KiB + 1 kB) here), and the scans
    evicted. The folder is measured while every writer is stopped (SIGSTOP), so that the sum
    of its files' sizes is the size it had at one moment."""
    bound = 256 * 1024
    env = killed_env(cache, bound)
    slack = 3 * (bound * store.CLAIM_MOST + 1000 + store._HEADER)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", KILLED, f"w{w}", "100000", "1000"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(4)
    ]
    try:
        written = 0
        for w, proc in enumerate(procs):  # w0 killed after 300 writes, w1 after 600, ...
            assert proc.stdout is not None
            while int(proc.stdout.readline()) < 300 * (w + 1):
                pass
            for other in procs[w:]:  # the folder as it is: nobody writes or evicts meanwhile
                other.send_signal(signal.SIGSTOP)
            assert store_bytes(cache) <= bound + slack
            kill(proc)
            for other in procs[w + 1 :]:
                other.send_signal(signal.SIGCONT)
            written += 300 * (w + 1)
        assert store_bytes(cache) <= bound + slack
        assert len(list(cache.glob("*" + store.SUFFIX))) < written  # the scans evicted
        assert stats.totals()[store.SCANS] > 0
    finally:  # none left behind when an assertion failed
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@deferred
@pytest.mark.parametrize("then", ["claim", "save"])
def test_writes_another_process_scan_may_have_missed_are_reserved_again(
    cache: Path, monkeypatch: pytest.MonkeyPatch, then: str
) -> None:
    """Writes from a reservation claimed before another process's scan began (the scan counts
    them as written, its listing may miss them): the next claim, or the next save (as at
    exit), finds the statistics' scan count changed and reserves them again."""
    monkeypatch.setenv("TINYTC_CACHE_MAX_MB", "1")
    monkeypatch.setattr(store, "CLAIM_FIRST", 1 / 64)  # 16 KiB: three entries of 4 KiB
    chunk = 16 * 1024
    payload = bytes(range(256)) * 16
    store.put("a", payload)
    where = trust.checked()
    assert where is not None
    stats.update(where, {store.SCANS: 1})  # another process's scan begins
    store.put("b", payload)
    store.put("c", payload)
    entry = store_bytes(cache) // 3
    if then == "claim":
        store.put("d", payload)  # 16384 - 3 entries left: a claim of 16 KiB more
        assert stats.totals()[store.RESERVED] == 2 * chunk + 3 * entry
    else:
        stats.save_all()
        assert stats.totals()[store.RESERVED] == chunk + 3 * entry
