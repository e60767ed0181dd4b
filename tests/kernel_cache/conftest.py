"""Fixtures of the kernel cache tests: `cache` points the cache at an empty folder of the test
and starts from an empty memo and zero counters."""

from __future__ import annotations

from pathlib import Path

import pytest

from tinytc_py import kernel_cache
from tinytc_py.kernel_cache import stats, writer


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The entry folder (tmp_path/kernels, created on the first write)."""
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TINYTC_CACHE", raising=False)
    monkeypatch.delenv("TINYTC_CACHE_MAX_MB", raising=False)
    kernel_cache.clear_memo()
    stats.reset_process()
    yield tmp_path / "kernels"
    writer.wait()  # before the folder goes: writes behind belong to the test
    kernel_cache.clear_memo()
