"""The size bound of the kernel cache folder (store.py), in a folder another process made: a
write far below the bound reads no other entry's size, the estimate is re-synchronised by a full scan when its record or the
statistics are lost, and processes writing at once leave the folder under the bound with the
least recently used entries gone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tinytc_py.cli import cache as cli_cache
from tinytc_py.kernel_cache import folder as folder_module
from tinytc_py.kernel_cache import stats, store, trust

ENTRY = 4096  # payload bytes; a file adds the header


@pytest.fixture(autouse=True)
def made_by_another_process(cache: Path, saves_at_once: None) -> None:
    """The folder exists before the test's first write, as one another process made: a
    folder this process makes starts statistics that bound its size without a listing
    (test_first_start.py), which these tests of the scans and their record must not take.
    Every write updates the statistics at once (`saves_at_once`), so each write checks the
    bound; test_a_process_that_saves_at_exit_keeps_the_bound_when_it_saves checks the rest."""
    cache.mkdir(parents=True, mode=0o700)


def folder_bytes(cache: Path) -> int:
    return sum(f.stat().st_size for f in cache.glob("*" + store.SUFFIX))


PAYLOAD = bytes(range(256)) * (ENTRY // 256)


class Calls:
    """Counts os.scandir and os.stat calls (Path.stat and DirEntry.stat of a scandir go
    through them or through scandir) and the store's listings and eviction scans."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.scandir = self.stat = self.entries = self.evict = 0
        for module, name in [(os, "scandir"), (os, "stat"), (store, "entries"), (store, "evict")]:
            monkeypatch.setattr(module, name, self._counting(name, getattr(module, name)))

    def _counting(self, name: str, real):
        def call(*args, **kwargs):
            setattr(self, name, getattr(self, name) + 1)
            return real(*args, **kwargs)

        return call


def test_write_far_below_the_bound_reads_no_entry_sizes(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(200):
        store.put(f"filled-{i}", PAYLOAD)
    calls = Calls(monkeypatch)
    store.put("new", PAYLOAD)
    assert (calls.scandir, calls.entries, calls.evict) == (0, 0, 0)
    # the folders' own checks (trust.py: the root and kernels/, for the entry and for the
    # statistics; mkdir), not the 200 entries
    assert calls.stat <= 6
    assert store.get("new") is not None
    (cache / store.SCAN_FILE).unlink()  # without the record the write scans the folder once
    store.put("newer", PAYLOAD)
    assert (calls.scandir, calls.entries, calls.evict) == (1, 1, 1)
    assert len(list(cache.glob("*" + store.SUFFIX))) == 202


@pytest.mark.parametrize("loss", ["record damaged", "record foreign", "statistics cleared"])
def test_lost_estimate_is_resynchronised_by_a_scan(
    cache: Path, monkeypatch: pytest.MonkeyPatch, loss: str
) -> None:
    """The record would say the folder is nearly empty (or is unusable); the first write after
    the loss scans although the folder is under the bound, and the write that crosses the bound
    scans again and evicts the least recently used entries down to LOW_WATER."""
    bound = 64 * 1024
    for i in range(14):  # 14 files of ENTRY + header bytes, about 57 kB: under the bound
        store.put(f"old-{i}", PAYLOAD)
    t0 = time.time() - 100  # distinct last uses, whatever the file times' resolution
    for i in range(14):
        os.utime(cache / f"old-{i}{store.SUFFIX}", (t0 + i, t0 + i))
    scan = cache / store.SCAN_FILE
    if loss == "record damaged":
        scan.write_bytes(b"\x93not json\x00")
    elif loss == "record foreign":
        scan.write_text(json.dumps({"written": 0, "bytes": 0}))
    else:
        stats.reset_totals()
    monkeypatch.setenv("TINYTC_CACHE_MAX_MB", str(bound / 1024 / 1024))
    calls = Calls(monkeypatch)
    store.put("new-0", PAYLOAD)
    assert calls.evict == 1 and folder_bytes(cache) <= bound  # a scan that evicts nothing
    assert len(list(cache.glob("*" + store.SUFFIX))) == 15
    store.put("new-1", PAYLOAD)  # the record now counts every byte: this write crosses
    assert calls.evict == 2
    assert folder_bytes(cache) <= store.LOW_WATER * bound
    for i in range(2, 4):
        store.put(f"new-{i}", PAYLOAD)
    assert folder_bytes(cache) <= bound
    kept = {f.name.removesuffix(store.SUFFIX) for f in cache.glob("*" + store.SUFFIX)}
    assert {f"new-{i}" for i in range(4)} <= kept and "old-0" not in kept


def test_entry_the_statistics_cannot_count_is_removed(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry whose bytes no estimate would count must not stay: it is removed and writing
    is turned off with one warning."""

    def fail(*args: object) -> dict[str, int]:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(stats, "_add_to_totals", fail)
    with pytest.warns(RuntimeWarning, match="cannot write to .*kernels.*not cached") as caught:
        store.put("a", PAYLOAD)
        store.put("b", PAYLOAD)
    assert len(caught) == 1
    assert not list(cache.glob("*" + store.SUFFIX))
    assert store.get("a") is None and store.get("b") is None


def test_entry_that_cannot_be_removed_still_counts(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An eviction subtracts only entries that are gone: one that refuses removal stays in the
    size it returns, so the next one goes in its place."""
    for i in range(4):
        store.put(f"e-{i}", PAYLOAD)
    t0 = time.time() - 100
    for i in range(4):
        os.utime(cache / f"e-{i}{store.SUFFIX}", (t0 + i, t0 + i))
    real_unlink = Path.unlink

    def unlink(path: Path, *args, **kwargs) -> None:
        if path.name == "e-0" + store.SUFFIX:
            raise PermissionError(13, "Permission denied")
        real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(Path, "unlink", unlink)
    size = store.evict(int(folder_bytes(cache) * 0.7))
    assert size == folder_bytes(cache)
    names = sorted(f.name.removesuffix(store.SUFFIX) for f in cache.glob("*" + store.SUFFIX))
    assert names == ["e-0", "e-3"]
    assert store.remove("e-1") is False and store.remove("e-0") is None


REAL_SCANDIR = os.scandir


class BrokenListing:
    """os.scandir whose listing fails with EIO after its first entry."""

    def __init__(self, path) -> None:
        self.inner = REAL_SCANDIR(path)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.inner.close()

    def __iter__(self):
        yield next(iter(self.inner))
        raise OSError(5, "Input/output error")


def test_listing_that_fails_part_way_leaves_no_record(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scan that could list only part of the folder does not know its size: the write keeps
    its entry but records no scan, so the next write scans again."""
    monkeypatch.setattr(store, "RECORD_FROM", 0)  # a record even for a few entries
    for i in range(3):
        store.put(f"e-{i}", PAYLOAD)
    (cache / store.SCAN_FILE).unlink()
    monkeypatch.setattr(os, "scandir", BrokenListing)
    with pytest.raises(OSError, match="Input/output"):
        store.entries()
    store.put("new", PAYLOAD)
    assert store.get("new") == PAYLOAD
    assert not (cache / store.SCAN_FILE).exists()
    monkeypatch.setattr(os, "scandir", REAL_SCANDIR)
    store.put("newer", PAYLOAD)
    record = json.loads((cache / store.SCAN_FILE).read_bytes())
    assert record[2] == folder_bytes(cache)


def test_few_entries_are_listed_again_instead_of_recorded(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new folder's first writes list it (cheaper than writing a record); the first scan
    that finds RECORD_FROM entries leaves the record, and the next write lists nothing."""
    monkeypatch.setattr(store, "RECORD_FROM", 4)
    for i in range(3):
        store.put(f"e-{i}", PAYLOAD)
    assert not (cache / store.SCAN_FILE).exists()
    store.put("e-3", PAYLOAD)
    record = json.loads((cache / store.SCAN_FILE).read_bytes())
    assert record[2] == folder_bytes(cache)
    calls = Calls(monkeypatch)
    store.put("e-4", PAYLOAD)
    assert (calls.scandir, calls.entries, calls.evict) == (0, 0, 0)


def test_tinytc_cache_reports_a_listing_that_fails(
    cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store.put("e", PAYLOAD)
    monkeypatch.setattr(os, "scandir", BrokenListing)
    assert cli_cache.main(["stats"]) == 1
    assert capsys.readouterr().err == f"tinytc-cache: {cache}: Input/output error\n"


WRITER = """
import os, sys, time
from pathlib import Path
from tinytc_py.kernel_cache import store
name, count, size, ready, writers = sys.argv[1:]
Path(ready, name).touch()
while len(os.listdir(ready)) < int(writers):  # start together, so the writes overlap
    time.sleep(0.005)
for i in range(int(count)):
    store.put(f"{name}-{i}", os.urandom(int(size)))
"""


@pytest.mark.timeout(120, method="thread")
@pytest.mark.parametrize("folder", ["made beforehand", "not made yet"])
def test_processes_writing_at_once_stay_under_the_bound(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, folder: str
) -> None:
    """Four processes write 60 entries of 4 kB each into a 100 kB bound: every process's
    estimate counts the others' writes (the shared statistics total), so the folder ends under
    the bound and most entries were evicted, the earliest first, each counted once. Not made
    yet: the processes race to make the folder; the one that makes it marks its statistics as
    begun empty unless another's count made the file first (folder._make_private), and either
    way the bound holds. Made beforehand (without a mark): no process marks it."""
    if folder == "not made yet":
        cache.rmdir()
    bound_mb, writers, count = 0.1, 4, 60
    env = {k: v for k, v in os.environ.items() if not k.startswith("TINYTC_CACHE")}
    env |= {"TINYTC_CACHE_DIR": str(tmp_path), "TINYTC_CACHE_MAX_MB": str(bound_mb)}
    ready = tmp_path / "ready"
    ready.mkdir()
    args = [str(count), str(ENTRY), str(ready), str(writers)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, f"w{w}", *args],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(writers)
    ]
    for proc in procs:
        _, err = proc.communicate()
        assert proc.returncode == 0, err
    assert folder_bytes(cache) <= bound_mb * 1024 * 1024
    kept = {f.name.removesuffix(store.SUFFIX) for f in cache.glob("*" + store.SUFFIX)}
    assert kept  # the entries written last (which ones depends on the processes' interleaving)
    assert not {f"w{w}-0" for w in range(writers)} & kept
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))
    totals = stats.totals()
    assert totals["evicted"] == writers * count - len(kept)
    if folder == "made beforehand":
        assert stats.FROM_EMPTY not in totals
    # the statistics file is intact and holds every process's count: none was lost to the
    # begun-empty mark of the process that made the folder (folder._start_empty)
    data = json.loads((cache / stats.FILE).read_text())
    assert all(isinstance(v, int) for v in data.values())
    entry_bytes = {f.stat().st_size for f in cache.glob("*" + store.SUFFIX)}
    assert len(entry_bytes) == 1  # every entry the same size
    assert data["bytes_written"] == writers * count * entry_bytes.pop()
    assert not list(cache.glob(".tmp-*")) and not list(tmp_path.glob(".tmp-*"))


def test_begun_empty_mark_never_overwrites_another_process_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's count lands while the mark of a folder just made is being written
    (between the creation of the mark's file and its content): the count is kept whole, and
    the file, made by that count, carries no mark (the folder may hold its entry)."""
    folder = tmp_path / "new"
    folder.mkdir(mode=0o700)
    where = trust.Folder(folder, None, True)
    real = os.write

    def write_after_a_count(fd: int, data: bytes) -> int:
        monkeypatch.setattr(os, "write", real)
        stats._add_to_totals({"spirv_misses": 1, "bytes_written": 123456}, where)
        return real(fd, data)

    monkeypatch.setattr(os, "write", write_after_a_count)
    folder_module._mark_empty(where)
    data = json.loads((folder / stats.FILE).read_text())
    assert data["spirv_misses"] == 1 and data["bytes_written"] == 123456
    assert stats.FROM_EMPTY not in data
    assert not list(folder.glob(".tmp-*"))


def test_begun_empty_mark_of_a_new_folder(tmp_path: Path) -> None:
    """Without a count before it, the mark is the folder's statistics file."""
    folder = tmp_path / "new"
    folder.mkdir(mode=0o700)
    folder_module._mark_empty(trust.Folder(folder, None, True))
    data = json.loads((folder / stats.FILE).read_text())
    assert data[stats.FROM_EMPTY] == 1 and isinstance(data[stats.EPOCH], int)
    assert [f.name for f in folder.iterdir()] == [stats.FILE]
