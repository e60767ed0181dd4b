"""tinytc-py: the Tiny Tensor Compiler in Python (tensor language → SPIR-V for OpenCL/Level Zero).

Compile a program for the default device and call its kernels: one argument per parameter (by
position or by name), and the number of work-groups (``num_groups``) when the kernel reads
``group_id``. Host arrays (NumPy, torch CPU tensors, ...) are used in place or copied in and
back; the kernel's signature and types are in ``help(kernel)``:

>>> import numpy as np, tinytc_py
>>> prog = tinytc_py.compile('''
... func @axpy(%a: f32, %x: memref<f32x16x?>, %y: memref<f32x16x?>) {
...     %j = group_id.x : index
...     %xj = subview %x[0:16, %j] : memref<f32x16>
...     %yj = subview %y[0:16, %j] : memref<f32x16>
...     %one = constant 1.0 : f32
...     axpby.n %a, %xj, %one, %yj
... }''')
>>> x = np.arange(64, dtype=np.float32).reshape(16, 4, order="F")
>>> y = np.ones((16, 4), np.float32, order="F")
>>> axpy = prog.kernel("axpy")
>>> axpy
<Kernel @axpy(%a: f32, %x: memref<f32x16x?>, %y: memref<f32x16x?>) ...>
>>> axpy(2.0, x, y, num_groups=4)  # one work-group per column of x and y
>>> bool(np.array_equal(y, 2 * x + 1))
True

Everything but the error classes is imported on first use (module ``__getattr__``), so that
``import tinytc_py`` takes milliseconds and needs neither OpenCL nor the compiler.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import compiled as _compiled

# The mypyc-compiled compiler modules, when built and current (compiled.py); installed before
# the package imports any of them (errors.py imports location.py).
_compiled.install()

from .errors import (  # noqa: E402
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
