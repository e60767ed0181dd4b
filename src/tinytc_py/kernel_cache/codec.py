"""A compiled `Binary` as the bytes of a cache entry and back: a JSON header with the kernels'
launch metadata (what the runtimes need besides the SPIR-V), its length, then the SPIR-V."""

from __future__ import annotations

import dataclasses
import json
import struct

from ..binary import ArgInfo, Binary, KernelInfo, ParamInfo
from ..target.core_info import CoreFeature

_LENGTH = struct.Struct("<I")


def encode(binary: Binary) -> bytes:
    header = {
        "format": binary.format,
        "core_features": int(binary.core_features),
        "kernels": list(binary.kernels.values()),
    }
    text = json.dumps(header, separators=(",", ":"), default=_fields).encode()
    return _LENGTH.pack(len(text)) + text + binary.data


def _fields(value: object) -> dict:
    """A dataclass's fields for json.dumps, which encodes the values (lists, tuples, numbers,
    strings, nested dataclasses) itself: what `dataclasses.asdict` gives, without its deep
    copy of every value (a third of the time of a SPIR-V miss's bookkeeping)."""
    names = _field_names(type(value))
    if names is None:
        raise TypeError(f"cannot encode {type(value).__name__}")
    return {name: getattr(value, name) for name in names}


_names: dict[type, tuple[str, ...] | None] = {}


def _field_names(cls: type) -> tuple[str, ...] | None:
    """The field names of dataclass `cls` (None for another class), asked once per class:
    `dataclasses.fields` walks every attribute of the class at each call, which made it the
    largest part of an entry's encoding."""
    if cls not in _names:
        fields = dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else None
        _names[cls] = None if fields is None else tuple(f.name for f in fields)
    return _names[cls]


def _kernel(d: dict) -> KernelInfo:
    params = [
        ParamInfo(**{**p, "shape": tuple(p["shape"]), "stride": tuple(p["stride"])})
        for p in d["params"]
    ]
    return KernelInfo(
        d["name"],
        tuple(d["work_group_size"]),
        d["subgroup_size"],
        params,
        [ArgInfo(**a) for a in d["args"]],
        tuple(d["grid_axes"]),
        tuple(tuple(b) for b in d["grid_bounds"]),
        d.get("bounds_checks"),
    )


def decode(payload: bytes) -> Binary:
    """The binary of an entry's payload (entries are checksummed, so the payload is intact)."""
    (length,) = _LENGTH.unpack_from(payload)
    header = json.loads(payload[_LENGTH.size : _LENGTH.size + length])
    kernels = [_kernel(k) for k in header["kernels"]]
    return Binary(
        payload[_LENGTH.size + length :],
        {k.name: k for k in kernels},
        CoreFeature(header["core_features"]),
        header["format"],
    )
