"""What a program's first start pays for the kernel cache beyond its compile: the compiler
version in a checkout is the content digest the compiled modules' import hook already took
(no second walk of the sources); a new folder's statistics are marked empty behind, after the
compile (folder.make_folder, stats.FROM_EMPTY), and such a folder is not listed to keep it
under its bound until the bytes written pass the bound, while a folder made without them, or
whose statistics were lost (even before the first write or the late mark), still is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tinytc_py import compiled, kernel_cache
from tinytc_py.cli import cache as cli_cache
from tinytc_py.ir.context import CompilerContext
from tinytc_py.kernel_cache import stats, store, trust, version, writer
from tinytc_py.kernel_cache.codec import decode
from tinytc_py.kernel_cache.folder import make_folder
from tinytc_py.target.core_info import CoreInfo

from .test_spirv_cache import assert_same, fresh_compile, gemm

PAYLOAD = bytes(range(256)) * 16  # 4 KiB


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A package folder of two sources that the version lookup reads instead of this one,
    with no digest computed for it yet in this process."""
    folder = tmp_path / "pkg"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.py").write_text("A = 1\n")
    (folder / "sub" / "b.py").write_text("B = 2\n")
    monkeypatch.setattr(compiled, "PACKAGE", str(folder))
    monkeypatch.setattr(compiled, "_content_digests", {})
    version.compiler_version.cache_clear()
    yield folder
    version.compiler_version.cache_clear()


def test_checkout_version_is_the_content_digest_the_import_hook_took(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    digest = compiled.sources_digest(str(package), content=True)  # as the hook's decision does
    walked = []
    real = compiled.sources_digest
    monkeypatch.setattr(
        compiled, "sources_digest", lambda *a, **k: walked.append(a) or real(*a, **k)
    )
    assert version.compiler_version() == digest
    assert walked == []  # no second walk of the sources


def test_without_the_hooks_digest_the_checkout_version_follows_every_edit(
    package: Path,
) -> None:
    """TINYTC_PURE_PYTHON=1 or nothing compiled: the stat digest, which an edit changes."""
    before = version.compiler_version()
    assert before == compiled.sources_digest(str(package))
    (package / "sub" / "b.py").write_text("B = 3  # edited\n")
    version.compiler_version.cache_clear()
    assert version.compiler_version() not in (before, "")


AFTER_DIGEST = (
    "compiled modules in use",
    "sources changed since the build",
    "the manifest's files are not those of MODULES",
    "compiled files missing",
)
"""The import hook's decisions (compiled.status) reached only after it hashed the sources."""


@pytest.mark.parametrize("pure", ["0", "1"])
def test_a_process_keys_by_the_digest_of_its_own_kind(pure: str) -> None:
    """In this checkout, after the compiler's import: the content digest the import hook took
    when it got as far as comparing the sources with the build (a build exists for this Python
    and these modules, pure Python not asked), else the stat digest. The version is taken
    before anything else here hashes the sources."""
    code = (
        "import json\n"
        "from tinytc_py import compiled\n"
        "from tinytc_py.compiler import binary_of\n"
        "from tinytc_py.kernel_cache.version import compiler_version\n"
        "version = compiler_version()\n"
        "hooked = compiled._content_digests.get(compiled.PACKAGE)\n"
        "print(json.dumps([version, hooked, compiled.status()[1], compiled.sources_digest()]))\n"
    )
    env = {**os.environ, compiled.PURE_ENV: pure}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    version, hooked, why, stat_digest = json.loads(out)
    compared = pure == "0" and why.startswith(AFTER_DIGEST)
    assert (hooked is not None) == compared, why
    assert version == (hooked if compared else stat_digest), why


class Listings:
    """Counts the store's listings of the folder and its eviction scans."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entries = self.evict = 0
        for name in ("entries", "evict"):
            monkeypatch.setattr(store, name, self._counting(name, getattr(store, name)))

    def _counting(self, name: str, real):
        def call(*args, **kwargs):
            setattr(self, name, getattr(self, name) + 1)
            return real(*args, **kwargs)

        return call


def folder_bytes(cache: Path) -> int:
    return sum(f.stat().st_size for f in cache.glob("*" + store.SUFFIX))


def test_a_folder_this_process_made_is_not_listed_below_the_bound(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listings = Listings(monkeypatch)
    for i in range(store.RECORD_FROM + 8):
        store.put(f"entry-{i}", PAYLOAD)
    assert (listings.entries, listings.evict) == (0, 0)
    assert not (cache / store.SCAN_FILE).exists()
    totals = stats.totals()
    assert totals[stats.FROM_EMPTY] == 1
    assert totals["bytes_written"] == folder_bytes(cache)
    assert stats.FROM_EMPTY not in cli_cache.summary()["counters"]  # not a counter


def test_a_folder_this_process_made_is_kept_under_the_bound(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bound = 64 * 1024
    monkeypatch.setenv("TINYTC_CACHE_MAX_MB", str(bound / 1024 / 1024))
    listings = Listings(monkeypatch)
    for i in range(40):
        store.put(f"entry-{i}", PAYLOAD)
        assert folder_bytes(cache) <= bound
        if i < 15:  # 15 entries of 4 KiB and a header: under the bound, nothing listed
            assert listings.evict == 0
    assert listings.evict > 0 and stats.process()["evicted"] > 0
    assert store.get("entry-39") is not None and store.get("entry-0") is None


@pytest.mark.usefixtures("saves_at_once")
@pytest.mark.parametrize("how", ["made by another process", "statistics cleared", "damaged"])
def test_a_folder_not_known_empty_is_listed(
    cache: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """The bytes written since the statistics began do not bound the folder when it held
    files before: the next write lists it."""
    if how == "made by another process":
        cache.mkdir(parents=True, mode=0o700)
        (cache / f"other{store.SUFFIX}").write_bytes(PAYLOAD)
    else:
        store.put("first", PAYLOAD)
        if how == "statistics cleared":
            stats.reset_totals()
        else:
            (cache / stats.FILE).write_bytes(b"\x00not json")
    listings = Listings(monkeypatch)
    store.put("next", PAYLOAD)
    assert listings.entries == 1
    assert stats.FROM_EMPTY not in stats.totals()


def test_statistics_over_a_longer_damaged_file_are_cut_to_their_length(cache: Path) -> None:
    """An update writes over the old text and cuts the file only when the new text is
    shorter (counters only grow): a damaged file longer than the new totals must not leave a
    tail behind."""
    store.put("first", PAYLOAD)
    (cache / stats.FILE).write_bytes(b"{" + b" " * 4096 + b"damaged")
    stats.count("corrupt")
    totals = stats.totals()
    assert totals["corrupt"] == 1 and stats.EPOCH in totals
    before = (cache / stats.FILE).stat().st_size
    stats.count("corrupt")
    assert stats.totals()["corrupt"] == 2 and (cache / stats.FILE).stat().st_size >= before


def test_an_entry_written_while_the_cache_is_cleared_is_counted(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tinytc-cache clear` while another process writes: an entry that lands after the
    clear listed the folder stays, and its bytes must be in the totals that follow (a folder
    this process then makes statistics for would otherwise be bounded without it)."""
    store.put("before", PAYLOAD)
    clear = store.clear

    def clear_then_another_writes() -> int:
        removed = clear()
        store.put("late", PAYLOAD)
        return removed

    monkeypatch.setattr(store, "clear", clear_then_another_writes)
    assert cli_cache.main(["clear"]) == 0
    assert [p.name for p in cache.glob("*" + store.SUFFIX)] == ["late" + store.SUFFIX]
    assert stats.totals().get("bytes_written", 0) >= folder_bytes(cache) > 0


def test_statistics_lost_between_making_the_folder_and_the_first_write_are_not_from_empty(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lookup makes the folder before its compile and device build (locks.py), and its first
    statistics update comes after them. Others' entries written meanwhile, then the statistics
    lost: the new totals did not begin with an empty folder, so the next write lists it."""
    make_folder(trust.checked())
    others = (
        "from tinytc_py.kernel_cache import store\n"
        "for i in range(40):\n"
        "    store.put(f'other-{i}', bytes(4096))\n"
    )
    subprocess.run([sys.executable, "-c", others], env=dict(os.environ), check=True)
    (cache / stats.FILE).unlink()
    bound = int(0.1 * 1024 * 1024)
    monkeypatch.setenv("TINYTC_CACHE_MAX_MB", "0.1")
    listings = Listings(monkeypatch)
    store.put("a", bytes(4096))
    assert listings.entries == 1
    assert folder_bytes(cache) <= bound
    assert stats.FROM_EMPTY not in stats.totals()


behind = pytest.mark.skipif(
    not writer._behind, reason="writes go behind only in a process Python's executable started"
)


@behind
def test_a_first_start_marks_its_new_folder_behind_after_the_compile(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lookup takes no build lock (SPIR-V) and does not make `kernels/`: the compile runs
    with neither the folder nor its mark made, no lock and no writer thread started; the
    entry's write behind makes the folder and marks it before the entry lands, so the folder
    counts as begun empty."""
    starts: list[int] = []
    real_start = writer._start
    monkeypatch.setattr(writer, "_start", lambda: starts.append(1) or real_start())
    during: list[tuple] = []

    def compile_():
        locked = [p.name for p in cache.parent.glob("*" + store.LOCK_SUFFIX)]
        during.append((cache.exists(), len(locked), tuple(starts)))
        return fresh_compile(gemm(16))

    ctx = CompilerContext()
    binary = kernel_cache.text_binary(gemm(16), CoreInfo.default(), ctx, compile_)
    assert during == [(False, 0, ())]
    assert starts == [1]  # the entry's write started the writer, which made and marked kernels/
    writer.wait()
    totals = stats.totals()
    assert totals[stats.FROM_EMPTY] == 1 and totals["compiles"] == 1
    assert totals["bytes_written"] == folder_bytes(cache) > 0
    [entry] = cache.glob("*" + store.SUFFIX)
    assert_same(decode(store.get(entry.name[: -len(store.SUFFIX)])), binary)


@behind
@pytest.mark.usefixtures("saves_at_once")
def test_a_first_start_whose_compile_fails_marks_the_folder_its_count_makes(cache: Path) -> None:
    """The first compile fails: no entry is written, and the count of the miss makes
    kernels/ itself (stats._add_to_totals), then waits for the mark that making the folder
    queued before it makes the statistics file, so the folder counts as begun empty."""

    class Failed(Exception):
        pass

    def compile_():
        raise Failed

    with pytest.raises(Failed):
        kernel_cache.text_binary(gemm(16), CoreInfo.default(), CompilerContext(), compile_)
    writer.wait()
    totals = json.loads((cache / stats.FILE).read_text())
    assert (totals[stats.FROM_EMPTY], totals["spirv_misses"]) == (1, 1)
    assert not list(cache.glob("*" + store.SUFFIX))


@behind
def test_a_late_mark_is_left_out_of_a_folder_that_holds_an_entry(cache: Path) -> None:
    """Another process's entry written into the folder this process made, its statistics lost
    before the queued mark runs: the folder did not begin empty for any statistics made now,
    so no mark is written and the next write lists the folder."""
    make_folder(trust.checked())
    (cache / ("other" + store.SUFFIX)).write_bytes(PAYLOAD)  # its statistics lost
    writer.wait()
    assert not (cache / stats.FILE).exists()
    store.put("next", PAYLOAD)
    assert stats.FROM_EMPTY not in stats.totals()
    assert stats.totals()["bytes_written"] < folder_bytes(cache)  # why it must be listed


@behind
def test_a_synchronous_write_into_a_folder_just_made_keeps_the_mark(cache: Path) -> None:
    """A write in the calling thread (a device binary's, native_build) into the folder this
    process just made waits for the folder's mark before the entry lands (the mark counts no
    entry), so the folder counts as begun empty."""
    make_folder(trust.checked())
    assert not (cache / stats.FILE).exists()  # queued, not written
    store.put("native-x", PAYLOAD)
    totals = stats.totals()
    assert totals[stats.FROM_EMPTY] == 1 and totals["bytes_written"] == folder_bytes(cache)
