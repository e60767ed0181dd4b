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
import os

VERSION_FILE = "_compiler_version"
"""The recorded digest, next to the package's modules."""


@functools.cache
def compiler_version() -> str:
    """The installed package's recorded digest, else (a checkout) its sources' stat digest."""
    # imported here: setup.py loads this module by its path, for VERSION_FILE
    from ..compiled import PACKAGE, sources_digest

    try:
        with open(os.path.join(PACKAGE, VERSION_FILE), encoding="ascii") as f:
            recorded = f.read().strip()
    except OSError:
        recorded = ""
    return recorded or sources_digest(PACKAGE)
