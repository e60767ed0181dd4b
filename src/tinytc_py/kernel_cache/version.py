"""The compiler's version in the kernel cache's keys: a changed compiler never reads entries an
older one wrote, also in a development checkout, where the version number stays the same.

An installed package carries the digest of its sources' content (`VERSION_FILE`, written when
the wheel is built: setup.py loads this module by its path, so it imports nothing of the
package), and reading that one file is the whole cost. A checkout has no such file: there the
version is a digest of the name, size and modification time of each source file, which costs
one stat call per file (0.5-1 ms, once per process) and follows every edit.
"""

from __future__ import annotations

import functools
import hashlib
import os

VERSION_FILE = "_compiler_version"
"""The recorded digest, next to the package's modules."""

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@functools.cache
def compiler_version() -> str:
    """The installed package's recorded digest, else (a checkout) its sources' stat digest."""
    try:
        with open(os.path.join(PACKAGE, VERSION_FILE), encoding="ascii") as f:
            recorded = f.read().strip()
    except OSError:
        recorded = ""
    return recorded or sources_digest(PACKAGE)


def sources_digest(package: str, content: bool = False) -> str:
    """Digest of the .py files under `package` (without __pycache__): of their relative path,
    size and modification time, or of their path and `content` (what a wheel records: its
    files' times are those of the build)."""
    parts: list[str] = []

    def walk(folder: str, rel: str) -> None:
        with os.scandir(folder) as it:
            found = sorted(it, key=lambda e: e.name)
        for e in found:
            if e.name.endswith(".py"):
                if content:
                    with open(e.path, "rb") as f:
                        parts.append(f"{rel}{e.name}:{hashlib.sha256(f.read()).hexdigest()};")
                else:
                    st = e.stat()
                    parts.append(f"{rel}{e.name}:{st.st_size}:{st.st_mtime_ns};")
            elif e.name != "__pycache__" and e.is_dir():
                walk(e.path, f"{rel}{e.name}/")

    walk(package, "")
    return hashlib.sha256("".join(parts).encode()).hexdigest()[:16]
