"""Cache keys: SHA-256 over everything that decides what a compile or a device build produces.

A SPIR-V key covers the program (its source text, or the printed program when it was built in
memory), the core info, the optimisation level, every compiler-context flag and the compiler's
version (version.py). A native key covers the SPIR-V bytes, the build options and the device
(name, driver version, platform).

The in-process memo (memo.py) keys by the same parts without hashing them: `settings` is the
context's part as a tuple, and `info_digest` the core info's part, computed once per core
info object and reused while the object still equals a copy taken then (so a core info
changed in place, through `set_spirv_feature` or any of its fields, gets a new digest).
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import hashlib
import json
import weakref
from typing import Any

from .. import self_checks
from ..ir.context import CompilerContext
from ..ir.enums import OptFlag
from ..target.core_info import CoreInfo
from .version import compiler_version

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


_KEY_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
"""The text a key digests, made once: `json.dumps` with these options builds an encoder per
call."""


def _digest(parts: list[Any]) -> str:
    return hashlib.sha256(_KEY_JSON.encode(parts).encode()).hexdigest()


FLAGS = tuple(OptFlag)
"""The order of the flags in `settings`."""


def settings(ctx: CompilerContext) -> tuple[int, ...]:
    """The context's part of a key: the optimisation level, then each flag's state."""
    return (ctx.opt_level, *map(ctx.optimization_flag, FLAGS))


_info_digests: dict[int, tuple[weakref.ref, dict[str, Any], str]] = {}
"""id(core info) -> (a reference to it, a copy of its attributes, its digest), while it lives."""


def info_digest(info: CoreInfo) -> str:
    """The core info's part of a key: a digest of all its fields, reused while `info`'s
    attributes equal the copy taken when it was computed (one dictionary comparison)."""
    known = _info_digests.get(id(info))
    if known is not None and known[0]() is info and known[1] == info.__dict__:
        return known[2]
    digest = _digest([canonical(info)])[:32]
    ident = id(info)
    ref = weakref.ref(info, lambda _ref: _info_digests.pop(ident, None))
    _info_digests[ident] = (ref, attributes_copy(info), digest)
    return digest


def attributes_copy(info: CoreInfo) -> dict[str, Any]:
    """A copy of `info`'s attributes whose containers (the feature set, the work-group size
    tables) are copies too, so that changing them in `info` makes the two differ; their
    elements are immutable."""
    return {
        name: copy.copy(value) if isinstance(value, list | dict | set) else value
        for name, value in info.__dict__.items()
    }


def spirv_key(
    program_text: str,
    core_info: CoreInfo,
    ctx: CompilerContext,
    parsing: tuple | None = None,
) -> str:
    """Key of the SPIR-V binary of `program_text` (source or printed program) under `ctx`.
    `parsing`: how a source is read (compiler.compile_text), when it matters. Whether the
    self-checks ran is part of it: a process that asks for them never reads a binary that a
    process without them stored unchecked."""
    parts = [compiler_version(), program_text, info_digest(core_info), settings(ctx)]
    parts.append(("self-checks", self_checks.requested()))
    if parsing is not None:
        parts.append(parsing)
    return "spirv-" + _digest(parts)


def native_key(spirv: bytes, options: str, device: dict[str, str]) -> str:
    """Key of the device binary built from `spirv` with `options` on `device` (identity
    fields: name, driver version, platform)."""
    return "native-" + _digest([hashlib.sha256(spirv).hexdigest(), options, device])
