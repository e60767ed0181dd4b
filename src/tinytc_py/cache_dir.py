"""Where tinytc-py keeps what it may reuse across processes: the kernel cache (SPIR-V and
device binaries) and the autotuner's per-device choices live in sub-folders of one root, so a
user moves or clears them together.

The root is `TINYTC_CACHE_DIR` when set, else the platform's user cache folder
(`platformdirs.user_cache_dir("tinytc-py")`, e.g. `~/.cache/tinytc-py` on Linux).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
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


PRIVATE_DIR_MODE = 0o700
"""The mode of a cache folder `atomic_write` creates (the kernel cache makes its own folder)."""

_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


def temporary_file(folder: Path) -> tuple[int, Path]:
    """A new file `.tmp-<random>` in `folder`, open for writing, private (mode 600), and its
    path; raises FileNotFoundError when the folder is missing (its maker chooses its mode)."""
    tmp = folder / f".tmp-{secrets.token_hex(8)}"
    return os.open(tmp, _FLAGS, 0o600), tmp


def make_private_folder(folder: Path) -> None:
    """`folder` and the missing folders above it, private to the user (mode 700)."""
    folder.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)


def atomic_write(
    path: Path,
    data: bytes,
    prepare: Callable[[int], None] | None = None,
    make_folder: Callable[[Path], None] = make_private_folder,
) -> None:
    """Writes `path` whole or not at all: a temporary file in the same folder, renamed over it
    (`os.replace` is atomic), so processes sharing the cache (MPI ranks) never read a partial
    file. `prepare(fd)` may set the new file's owner group and mode before it is renamed.
    A missing folder (also one removed since the caller made it) is created by
    `make_folder(folder)`; raises OSError (unwritable folder, full disk) and leaves no
    temporary file behind."""
    try:
        fd, tmp = temporary_file(path.parent)
    except FileNotFoundError:
        make_folder(path.parent)
        fd, tmp = temporary_file(path.parent)
    try:
        try:
            if prepare is not None:
                prepare(fd)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
