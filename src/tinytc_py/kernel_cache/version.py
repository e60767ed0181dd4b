"""The compiler's version in the kernel cache's keys: a changed compiler never reads entries an
older one wrote, also in a development checkout, where the version number stays the same.

An installed package carries the digest of its sources' content (`VERSION_FILE`, written when
the wheel is built: setup.py loads this module by its path, so it imports nothing of the
package), and reading that one file is the whole cost. A checkout has no such file. There the
import hook of the compiled modules (compiled.py) has already hashed every source's content
in this process, at the first import of a compiled module, to decide whether they match the
sources; that digest, the same function the wheel records, is the version at no further cost.
Without it (`TINYTC_PURE_PYTHON=1`, or nothing compiled) the version is a digest of the name,
size and modification time of each source file, which costs one stat call per file (0.5-1 ms,
once per process) and follows every edit. Both are taken once per process; the two kinds
never equal each other, so a pure-Python process and a compiled one in a checkout keep
separate entries, each correct.
"""

from __future__ import annotations

import functools
import os

VERSION_FILE = "_compiler_version"
"""The recorded digest, next to the package's modules."""


@functools.cache
def compiler_version() -> str:
    """The installed package's recorded digest, else (a checkout) the content digest of its
    sources the import hook computed in this process, else their stat digest."""
    # imported here: setup.py loads this module by its path, for VERSION_FILE
    from ..compiled import PACKAGE, content_digest_computed, sources_digest

    try:
        with open(os.path.join(PACKAGE, VERSION_FILE), encoding="ascii") as f:
            recorded = f.read().strip()
    except OSError:
        recorded = ""
    return recorded or content_digest_computed(PACKAGE) or sources_digest(PACKAGE)
