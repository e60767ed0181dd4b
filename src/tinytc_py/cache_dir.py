"""Where tinytc-py keeps what it may reuse across processes: the kernel cache (SPIR-V and
device binaries) and the autotuner's per-device choices live in sub-folders of one root, so a
user moves or clears them together.

The root is `TINYTC_CACHE_DIR` when set, else the platform's user cache folder
(`platformdirs.user_cache_dir("tinytc-py")`, e.g. `~/.cache/tinytc-py` on Linux).
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_DIR = "TINYTC_CACHE_DIR"


def cache_root() -> Path:
    """The cache root folder (not created here: callers create what they write)."""
    folder = os.environ.get(ENV_DIR)
    if folder:
        return Path(folder).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("tinytc-py", appauthor=False))


def cache_subdir(name: str) -> Path:
    """A named part of the cache (e.g. "kernels", "tuning")."""
    return cache_root() / name
