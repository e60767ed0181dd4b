"""IR program -> SPIR-V module (docs/design.md §B1, §B2.2, §B6).

Each function becomes an OpenCL kernel entry point whose parameters follow the calling
convention of docs/design.md §B1 (a memref is a pointer plus its dynamic shape and stride entries as
i64; a group is a pointer to pointers plus per-member i64 arrays, size and offset). Memrefs and
groups are not SPIR-V values: they are *dope vectors* holding the ids of the base pointer and of
every shape/stride entry (constants or parameters), so subview/expand/fuse/size cost no code
beyond the address arithmetic.

Scalar types: bool, i8..i64 (index is i64; all ints have signedness 0), bf16 as i16 bits (every
operation converts to f32 and back), f16/f32/f64, and c32/c64 as 2-vectors (re, im).

Control flow is structured: `if` uses OpSelectionMerge and OpPhi for its results in the merge
block (so yielded values never need to dominate their uses after the if); `for` has a header
block with OpPhi for the loop variable and each loop-carried value, OpLoopMerge, a continue
block and a merge block.

Anything without a rule raises a located CompilationError with Status.not_implemented; no
instruction is ever emitted half-way into an invalid module. Capabilities are added afterwards
by ../capex.py from what the module contains.

The conversion is split into mixins by subject: scalar, memory (incl. local memory), atomics,
control, spmd (builtins, barrier, subgroup operations), extensions (the language extensions of
docs/extensions.md) and coopmatrix (+ coopmatrix_memory, and
coopmatrix_dpas for PVC/BMG, which falls back to the other two; the layout arithmetic is
analysis/coopmatrix_layout.py); `Converter` combines them. The mixins form a single chain of
bases (control <- memory <- scalar <- spmd <- extensions <- atomics <- coopmatrix_memory <-
coopmatrix <- coopmatrix_dpas), so that mypyc compiles them as native classes (no multiple
inheritance); a mixin's base is below every mixin whose methods it calls. Each module lists the
instruction classes its mixin converts (HANDLERS); `Converter.handler_names` combines the lists
(handler_table, base.py), and an instruction's handler is found along its class's MRO.
"""

from __future__ import annotations

from ...binary import KernelInfo
from ...errors import UNKNOWN_LOCATION, CompilationError, Status, TinytcError
from ...ir.region import Prog
from ...target.core_info import CoreInfo
from ..module import Module
from . import atomics, control, coopmatrix, coopmatrix_memory, extensions, memory, scalar, spmd
from .base import ConverterBase, GroupDV, Handlers, MemrefDV, handler_table, not_implemented
from .coopmatrix_dpas import CoopmatrixDpasConversion
from .metadata import kernel_sizes
from .scalar import float_to_bf16_bits

HANDLERS: Handlers = handler_table(
    control.HANDLERS,
    memory.HANDLERS,
    scalar.HANDLERS,
    spmd.HANDLERS,
    extensions.HANDLERS,
    atomics.HANDLERS,
    coopmatrix_memory.HANDLERS,
    coopmatrix.HANDLERS,
)
"""The handlers of all mixins, in the order of the chain of bases (base first)."""


class Converter(CoopmatrixDpasConversion):
    """Converts the functions of one program into one module (the last of the chain of mixins:
    it has them all as bases)."""

    def handler_names(self) -> Handlers:
        return HANDLERS


def convert_prog(prog: Prog, core_info: CoreInfo) -> tuple[Module, list[KernelInfo]]:
    """The module (without capabilities; see capex) and the kernels' metadata."""
    conv = Converter(core_info)
    try:
        module = conv.convert(prog)
    except TinytcError:
        raise
    except (ValueError, KeyError) as e:  # a module-layer refusal is a compiler bug
        raise CompilationError(
            getattr(prog, "loc", UNKNOWN_LOCATION), Status.internal_compiler_error, str(e)
        ) from e
    return module, conv.kernels


__all__ = [
    "Converter",
    "ConverterBase",
    "GroupDV",
    "MemrefDV",
    "convert_prog",
    "float_to_bf16_bits",
    "kernel_sizes",
    "not_implemented",
]
