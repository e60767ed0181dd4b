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
    text = _HEADER_JSON.encode(header).encode()
    return _LENGTH.pack(len(text)) + text + binary.data


def _fields(value: object) -> dict:
    """A dataclass's fields for json.dumps, which encodes the values (lists, tuples, numbers,
    strings, nested dataclasses) itself: the instance's own attribute dictionary, which holds
    exactly its fields (the launch metadata are dataclasses without slots, some frozen), in their
    order. Neither `dataclasses.asdict` (a deep copy of every value, a third of the time of a
    SPIR-V miss's bookkeeping) nor a dictionary built from the field names (a third of the
    encoding's time)."""
    if not _is_dataclass(type(value)):
        raise TypeError(f"cannot encode {type(value).__name__}")
    return vars(value)


_HEADER_JSON = json.JSONEncoder(separators=(",", ":"), default=_fields)
"""The header's encoder, made once (`json.dumps` with these options builds one per call)."""

_dataclass: dict[type, bool] = {}


def _is_dataclass(cls: type) -> bool:
    """Whether `cls` is a dataclass, asked once per class."""
    known = _dataclass.get(cls)
    if known is None:
        known = _dataclass[cls] = dataclasses.is_dataclass(cls)
    return known


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
