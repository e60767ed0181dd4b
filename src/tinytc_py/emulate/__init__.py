"""tinytc-emulate: run SPIR-V compiled for Intel GPUs (PVC, BMG) on the CPU OpenCL runtime.

`emulate_spirv(bytes)` rewrites the GPU-only instructions (inline vISA: LSC 2D block messages,
dpas) into portable SPIR-V with the semantics of the public specifications, keeping the
kernels' interface; `emulate(binary)` does the same to a compiled `Binary`. See
docs/emulate.rst.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..binary import Binary
from .rewrite import DEVICES, LOCAL_MEMORY, emulate_spirv
from .visa import UnsupportedConstruct

__all__ = ["DEVICES", "UnsupportedConstruct", "emulate", "emulate_spirv"]


def emulate(binary: Binary, device: str = "pvc", on: Any = None) -> Binary:
    """`binary` (compiled for `device`, PVC or BMG) with its GPU-only instructions emulated;
    same kernels and metadata. `on` is the `tinytc_py.Device` it will run on, if known: its
    local memory size (CL_DEVICE_LOCAL_MEM_SIZE) bounds the register files kept there."""
    return dataclasses.replace(binary, data=emulate_spirv(binary.data, device, local_memory(on)))


def local_memory(on: Any) -> int:
    """The local memory of the device `on` (an OpenCL `tinytc_py.Device`), else the CPU
    device's."""
    if on is not None and on.runtime == "opencl":
        return int(on.handle.local_mem_size)
    return LOCAL_MEMORY
