"""Fixtures of the kernel cache tests: `cache` points the cache at an empty folder of the test
and starts from an empty memo and zero counters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tinytc_py import kernel_cache
from tinytc_py.kernel_cache import stats


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The entry folder (tmp_path/kernels, created on the first write)."""
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TINYTC_CACHE", raising=False)
    monkeypatch.delenv("TINYTC_CACHE_MAX_MB", raising=False)
    kernel_cache.clear_memo()
    stats.reset_process()
    yield tmp_path / "kernels"
    stats.save_all()  # before the folder goes: writes behind and unsaved counts are the test's
    kernel_cache.clear_memo()


@pytest.fixture(autouse=True)
def counts_saved_by_the_test() -> Iterator[None]:
    """A test's counts go to its folder before the next test (this process saves them only at
    exit otherwise: stats.py)."""
    yield
    stats.save_all()


@pytest.fixture
def saves_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every count updates the statistics file at once, as in a process whose exit may not run
    (a forked child, a host that never finalises Python: stats.py)."""
    monkeypatch.setattr(stats, "_deferred", False)
