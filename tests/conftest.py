"""Session set-up for every test: the kernel cache goes to a fresh temporary folder, so tests
never read or fill the user's cache (child processes inherit the variable)."""

from __future__ import annotations

import os
import shutil
import tempfile

_folder = tempfile.mkdtemp(prefix="tinytc-cache-tests-")
os.environ["TINYTC_CACHE_DIR"] = _folder


def pytest_unconfigure(config) -> None:
    shutil.rmtree(_folder, ignore_errors=True)
