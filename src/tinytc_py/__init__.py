"""tinytc-py: the Tiny Tensor Compiler in Python (tensor language → SPIR-V for OpenCL/Level Zero).

    import numpy as np, tinytc_py
    prog = tinytc_py.compile(Path("axpy.ir"))          # for the default device
    prog.kernel("axpy")(2.0, x, y, num_groups=n // 16)  # NumPy arrays in, results back

Everything but the error classes is imported on first use (module ``__getattr__``), so that
``import tinytc_py`` takes milliseconds and needs neither OpenCL nor the compiler.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    CompilationError,
    Location,
    Note,
    OutOfBoundsError,
    Position,
    Status,
    TinytcError,
)

if TYPE_CHECKING:
    from .api import Device, Program, compile, devices, parse
    from .ir.builder import IRBuilder as Builder
    from .ir.context import CompilerContext
    from .ir.enums import OptFlag
    from .ir.types import DYNAMIC
    from .recipes.arrays import small_gemm_batched, tall_and_skinny
    from .runtime.launch import Group, Memref
    from .target.core_info import CoreInfo

# public name -> (module, name in that module)
_LAZY = {
    "compile": ("api", "compile"),
    "parse": ("api", "parse"),
    "devices": ("api", "devices"),
    "Device": ("api", "Device"),
    "Program": ("api", "Program"),
    "Builder": ("ir.builder", "IRBuilder"),
    "CompilerContext": ("ir.context", "CompilerContext"),
    "OptFlag": ("ir.enums", "OptFlag"),
    "DYNAMIC": ("ir.types", "DYNAMIC"),
    "CoreInfo": ("target.core_info", "CoreInfo"),
    "Group": ("runtime.launch", "Group"),
    "Memref": ("runtime.launch", "Memref"),
    "small_gemm_batched": ("recipes.arrays", "small_gemm_batched"),
    "tall_and_skinny": ("recipes.arrays", "tall_and_skinny"),
}


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'tinytc_py' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Builder",
    "CompilationError",
    "CompilerContext",
    "CoreInfo",
    "DYNAMIC",
    "Device",
    "Group",
    "Location",
    "Memref",
    "Note",
    "OptFlag",
    "OutOfBoundsError",
    "Position",
    "Program",
    "Status",
    "TinytcError",
    "compile",
    "devices",
    "parse",
    "small_gemm_batched",
    "tall_and_skinny",
]
