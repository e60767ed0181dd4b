"""The statistics are counted in the process and added to the folder's totals once (stats.py):
a miss updates no file, a read of the totals in the process sees its counts, a process whose
bytes pass a share of the size bound saves (and keeps the bound) then, and a fork saves first so
that a child's counts and the parent's are each counted once. Saving at a Python program's exit:
test_write_behind.test_a_process_that_exits_right_after_a_miss_leaves_the_entry; at a C host's:
tests/capi/test_capi_kernel_cache.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tinytc_py.compiler import binary_of
from tinytc_py.kernel_cache import stats, store, writer
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
    assert [u["spirv_misses"] for u in updates] == [2]


@deferred
def test_a_process_that_saves_at_exit_keeps_the_bound_when_it_saves(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bound 1 MiB: a save (with its check of the bound) every 32 KiB written (SAVE_EVERY), so
    the folder exceeds the bound by less than that between two saves and not after one."""
    bound = 1024 * 1024
    monkeypatch.setenv("TINYTC_CACHE_MAX_MB", "1")
    saves = []
    real = stats._add_to_totals

    def counted(delta: dict[str, int], where):
        saves.append(delta)
        return real(delta, where)

    monkeypatch.setattr(stats, "_add_to_totals", counted)
    payload = bytes(range(256)) * 16  # 4 KiB
    for i in range(400):
        store.put(f"entry-{i:03}", payload)
        assert store_bytes(cache) <= bound + bound * store.SAVE_EVERY
    assert 400 // 9 <= len(saves) <= 400 // 7  # 4 KiB and a header each: 8 writes per save
    stats.save_all()
    assert store_bytes(cache) <= bound
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
    """reset_totals drops the unsaved bytes_written of a write; the next save (of other
    counts) still checks the bound without them instead of failing on the missing count."""
    store.put("entry", b"x" * 100)
    stats.reset_totals()
    stats.count("corrupt")
    totals = stats.totals()
    assert totals["corrupt"] == 1
    assert "bytes_written" not in totals
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
