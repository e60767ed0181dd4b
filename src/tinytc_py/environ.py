"""Environment variables read on every compile, at the cost of a dictionary lookup.

The compiler reads some variables each time it is asked for a program (TINYTC_CACHE,
TINYTC_VALIDATE, TINYTC_RECORD_CORPUS), so that a Python host may switch them at any time
through `os.environ`. `os.environ` is a snapshot of the environment taken at start-up: a C
host's `setenv` after the interpreter started is not seen (set them before). For a
variable that is not set, `os.environ.get` raises and catches a KeyError in Python code, about
1-2 µs each: together a fifth of compiling a program again through the C API, which the kernel
cache answers from memory. `get` reads the mapping `os.environ` keeps its values in (CPython,
POSIX: a dict of bytes, changed together with `os.environ` by every assignment or deletion
through it, so both always agree) and decodes the value as `os.environ` does. Elsewhere it is
`os.environ.get`.
"""

from __future__ import annotations

import os
import sys

_data = getattr(os.environ, "_data", None)
_FAST = isinstance(_data, dict) and os.name == "posix"
_ENCODING = sys.getfilesystemencoding()


def get(name: str) -> str | None:
    """The value of variable `name`, or None when it is not set (what `os.environ.get` says)."""
    if not _FAST:
        return os.environ.get(name)
    raw = _data.get(name.encode(_ENCODING, "surrogateescape"))  # type: ignore[union-attr]
    return None if raw is None else raw.decode(_ENCODING, "surrogateescape")


OFF_WORDS = ("0", "off", "false", "no")
"""What a switch variable (TINYTC_CACHE, TINYTC_VALIDATE, TINYTC_PURE_PYTHON) says to be off,
compared stripped and in lower case."""


def says_off(value: str | None) -> bool:
    """Whether a switch variable's `value` turns its switch off (unset and empty do not)."""
    return value is not None and value.strip().lower() in OFF_WORDS


def says_on(value: str | None) -> bool:
    """Whether a switch variable's `value` turns its switch on (set, not empty, not off)."""
    return value is not None and value.strip() != "" and not says_off(value)
