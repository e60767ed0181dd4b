"""The size bound of the kernel cache folder (store.py): a write far below the bound reads no
other entry's size, the estimate is re-synchronised by a full scan when its record or the
statistics are lost, and processes writing at once leave the folder under the bound with the
least recently used entries gone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tinytc_py.kernel_cache import stats, store

ENTRY = 4096  # payload bytes; a file adds the header


def folder_bytes(cache: Path) -> int:
    return sum(f.stat().st_size for f in cache.glob("*" + store.SUFFIX))


class Calls:
    """Counts os.scandir and os.stat calls (Path.stat and DirEntry.stat of a scandir go
    through them or through scandir)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.scandir = self.stat = 0
        real_scandir, real_stat = os.scandir, os.stat

        def scandir(*args, **kwargs):
            self.scandir += 1
            return real_scandir(*args, **kwargs)

        def stat(*args, **kwargs):
            self.stat += 1
            return real_stat(*args, **kwargs)

        monkeypatch.setattr(os, "scandir", scandir)
        monkeypatch.setattr(os, "stat", stat)


def test_write_far_below_the_bound_reads_no_entry_sizes(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(200):
        store.put(f"filled-{i}", os.urandom(ENTRY))
    calls = Calls(monkeypatch)
    store.put("new", os.urandom(ENTRY))
    assert calls.scandir == 0
    assert calls.stat <= 4  # the folder's own existence checks (mkdir), not the 200 entries
    assert store.get("new") is not None
    (cache / store.SCAN_FILE).unlink()  # without the record the write scans the folder once
    store.put("newer", os.urandom(ENTRY))
    assert calls.scandir == 1
    assert len(list(cache.glob("*" + store.SUFFIX))) == 202


@pytest.mark.parametrize("loss", ["record damaged", "record foreign", "statistics cleared"])
def test_lost_estimate_is_resynchronised_by_a_scan(
    cache: Path, monkeypatch: pytest.MonkeyPatch, loss: str
) -> None:
    """The record would say the folder is nearly empty (or is unusable); the next write scans,
    finds the bound crossed and evicts the least recently used entries."""
    bound = 64 * 1024
    for i in range(14):  # about 57 kB, under the bound
        store.put(f"old-{i}", os.urandom(ENTRY))
    scan = cache / store.SCAN_FILE
    if loss == "record damaged":
        scan.write_bytes(os.urandom(20))
    elif loss == "record foreign":
        scan.write_text(json.dumps({"written": 0, "bytes": 0}))
    else:
        stats.reset_totals()
    monkeypatch.setenv("TINYTC_CACHE_MAX_MB", str(bound / 1024 / 1024))
    for i in range(4):
        store.put(f"new-{i}", os.urandom(ENTRY))
    assert folder_bytes(cache) <= bound
    kept = {f.name.removesuffix(store.SUFFIX) for f in cache.glob("*" + store.SUFFIX)}
    assert {f"new-{i}" for i in range(4)} <= kept and "old-0" not in kept


WRITER = """
import os, sys
from tinytc_py.kernel_cache import store
for i in range(int(sys.argv[2])):
    store.put(f"{sys.argv[1]}-{i}", os.urandom(int(sys.argv[3])))
"""


@pytest.mark.timeout(120, method="thread")
def test_processes_writing_at_once_stay_under_the_bound(tmp_path: Path) -> None:
    """Four processes write 60 entries of 4 kB each into a 100 kB bound: every process's
    estimate counts the others' writes (the shared statistics total), so the folder ends under
    the bound and most entries were evicted, the earliest first, each counted once."""
    bound_mb, writers, count = 0.1, 4, 60
    env = {k: v for k, v in os.environ.items() if not k.startswith("TINYTC_CACHE")}
    env |= {"TINYTC_CACHE_DIR": str(tmp_path), "TINYTC_CACHE_MAX_MB": str(bound_mb)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, f"w{w}", str(count), str(ENTRY)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(writers)
    ]
    for proc in procs:
        _, err = proc.communicate()
        assert proc.returncode == 0, err
    cache = tmp_path / "kernels"
    assert folder_bytes(cache) <= bound_mb * 1024 * 1024
    kept = {f.name.removesuffix(store.SUFFIX) for f in cache.glob("*" + store.SUFFIX)}
    assert kept  # the entries written last (which ones depends on the processes' interleaving)
    assert not {f"w{w}-0" for w in range(writers)} & kept
    os.environ["TINYTC_CACHE_DIR"] = str(tmp_path)
    try:
        totals = stats.totals()
    finally:
        del os.environ["TINYTC_CACHE_DIR"]
    assert totals["evicted"] == writers * count - len(kept)
    assert not list(cache.glob(".tmp-*"))
