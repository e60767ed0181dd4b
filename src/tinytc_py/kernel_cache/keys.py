"""Cache keys: SHA-256 over everything that decides what a compile or a device build produces.

A SPIR-V key covers the program (its source text, or the printed program when it was built in
memory), the core info, the optimisation level, every compiler-context flag and the compiler's
version. The version is a digest of the name, size and modification time of each of the
package's source files, so a changed compiler never reads entries an older
one wrote (also in a development checkout, where the version number stays the same); stat
calls keep this cheap at start-up, where hashing the sources would cost more than a cache hit. A native key covers the SPIR-V bytes, the build
options and the device (name, driver version, platform).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import os
from typing import Any

from ..ir.context import CompilerContext
from ..ir.enums import OptFlag
from ..target.core_info import CoreInfo


@functools.cache
def compiler_version() -> str:
    digest = hashlib.sha256()
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for root, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                st = os.stat(os.path.join(root, name))
                rel = os.path.relpath(os.path.join(root, name), package)
                digest.update(f"{rel}:{st.st_size}:{st.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]


_SCALARS = (str, int, float, type(None))


def canonical(value: Any) -> Any:
    """`value` as JSON data that does not depend on the process: set order follows string
    hashing (randomised per process), so sets and dicts are sorted. The tests go from the
    most frequent kind of value (the numbers and strings of a core info) to the rarest, which
    makes a key four times cheaper than asking `dataclasses.is_dataclass` first."""
    if isinstance(value, enum.Enum):  # before the scalars: an IntEnum is an int
        return value.value
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if isinstance(value, dict):
        return sorted([canonical(k), canonical(v)] for k, v in value.items())
    if isinstance(value, set | frozenset):
        return sorted(canonical(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


def _digest(parts: list[Any]) -> str:
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def spirv_key(program_text: str, core_info: CoreInfo, ctx: CompilerContext) -> str:
    """Key of the SPIR-V binary of `program_text` (source or printed program) under `ctx`."""
    flags = {f.name: ctx.optimization_flag(f) for f in OptFlag}
    return "spirv-" + _digest(
        [compiler_version(), program_text, canonical(core_info), ctx.opt_level, flags]
    )


def native_key(spirv: bytes, options: str, device: dict[str, str]) -> str:
    """Key of the device binary built from `spirv` with `options` on `device` (identity
    fields: name, driver version, platform)."""
    return "native-" + _digest([hashlib.sha256(spirv).hexdigest(), options, device])
