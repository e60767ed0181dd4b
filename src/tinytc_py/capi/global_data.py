"""C API of the global-data extension (docs/extensions.md): `tinytc_prog_add_global`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import CompilationError, Status
from ..ir.enums import OptFlag
from ..ir.extensions import disabled_error
from ..ir.global_data import add_global, make_global
from ..ir.region import Prog
from ..ir.types import MemrefType
from ..numpy_types import DTYPES
from .errors import invalid
from .handles import location, need, state, table, text
from .registry import export


@export
def tinytc_prog_add_global(
    prg: Any, name: Any, ty: Any, data_size: int, data: Any, loc: Any
) -> None:
    """`data` holds the elements in their C layout, column-major (bf16 as its 16 bits)."""
    prog: Prog = table.get("prog", prg)
    need(ty)
    where = location(loc)
    mt = table.get("type", ty)
    if not prog.ctx.optimization_flag(OptFlag.extensions):
        raise disabled_error(where, "'global'")
    if not isinstance(mt, MemrefType):
        raise CompilationError(where, Status.ext_invalid_global, "a global must have memref type")
    kind = mt.element.kind.text
    itemsize = np.dtype(DTYPES[kind]).itemsize
    if data_size % itemsize:
        invalid(f"data_size {data_size} is not a multiple of the element size {itemsize}")
    if data_size and data == state.ffi.NULL:
        invalid("NULL data")
    raw = bytes(state.ffi.buffer(data, data_size)) if data_size else b""
    values = np.frombuffer(raw, DTYPES[kind])
    if kind == "bf16":
        values = (values.astype(np.uint32) << 16).view(np.float32)
    elements = (
        [(z.real, z.imag) for z in values.tolist()] if mt.element.is_complex else values.tolist()
    )
    add_global(prog, make_global(text(name), mt, elements, where))
