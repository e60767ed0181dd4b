"""tinytc-emulate: run SPIR-V compiled for Intel GPUs (PVC, BMG) on the CPU OpenCL runtime.

`emulate_spirv(bytes)` rewrites the GPU-only instructions (inline vISA: LSC 2D block messages,
dpas) into portable SPIR-V with the semantics of the public specifications, keeping the
kernels' interface; `emulate(binary)` does the same to a compiled `Binary`. See
docs/emulate.rst.
"""

from __future__ import annotations

import dataclasses

from ..binary import Binary
from .rewrite import DEVICES, emulate_spirv
from .visa import UnsupportedConstruct

__all__ = ["DEVICES", "UnsupportedConstruct", "emulate", "emulate_spirv"]


def emulate(binary: Binary, device: str = "pvc") -> Binary:
    """`binary` (compiled for `device`, PVC or BMG) with its GPU-only instructions emulated;
    same kernels and metadata."""
    return dataclasses.replace(binary, data=emulate_spirv(binary.data, device))
