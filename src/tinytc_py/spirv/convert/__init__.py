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
analysis/coopmatrix_layout.py); `Converter` combines them. Each handler is marked with the
instruction class it converts (`@converts`, base.py) and found along the instruction's MRO.
"""

from __future__ import annotations

from ...binary import KernelInfo
from ...errors import UNKNOWN_LOCATION, CompilationError, Status, TinytcError
from ...ir.region import Prog
from ...target.core_info import CoreInfo
from ..module import Module
from .base import ConverterBase, GroupDV, MemrefDV, not_implemented
from .control import ControlFlowConversion
from .coopmatrix_dpas import CoopmatrixDpasConversion
from .extensions import ExtensionConversion
from .metadata import kernel_sizes
from .scalar import float_to_bf16_bits


class Converter(CoopmatrixDpasConversion, ExtensionConversion, ControlFlowConversion):
    """Converts the functions of one program into one module (each mixin marks its handlers
    with `@converts`; see ConverterBase). A mixin derives from the mixins whose methods it
    calls (spmd and atomics from scalar, atomics from memory, extensions from spmd, the
    coopmatrix ones from atomics and spmd), so these three bases bring in all of them."""


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
