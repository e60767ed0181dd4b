"""capex: capabilities and extensions a converted module needs (docs/design.md §B6.2).

Run after conversion: it reads the finished words of the module (types, execution modes and
function bodies), so whatever the converter emitted decides what is declared, and nothing can
be forgotten. Capabilities are added in discovery order (memory model first, then execution
modes, then types and instructions). `required_features` returns the core-info SPIR-V features
the module needs; `check_features` raises spirv_required_feature_unavailable for missing ones.
"""

from __future__ import annotations

from typing import Final

from ..errors import UNKNOWN_LOCATION, CompilationError, Status
from ..target.core_info import CoreInfo, SpirvFeature
from .module import Module, iter_instructions
from .tables import Capability, ExecutionMode, Op

_INT_CAPS = {8: Capability.Int8, 16: Capability.Int16}  # Int64: every module declares it
_FLOAT_CAPS = {16: Capability.Float16, 64: Capability.Float64}
_GROUP_OPS = (
    Op.GroupBroadcast,
    Op.GroupIAdd,
    Op.GroupFAdd,
    Op.GroupSMax,
    Op.GroupSMin,
    Op.GroupFMax,
    Op.GroupFMin,
)
_DECLARES: Final[dict[int, tuple[int, str]]] = {
    **{op: (Capability.Groups, "") for op in _GROUP_OPS},
    **{
        op: (Capability.BFloat16ConversionINTEL, "SPV_INTEL_bfloat16_conversion")
        for op in (Op.ConvertBF16ToFINTEL, Op.ConvertFToBF16INTEL)
    },
    **{
        op: (Capability.SubgroupBufferBlockIOINTEL, "SPV_INTEL_subgroups")
        for op in (Op.SubgroupBlockReadINTEL, Op.SubgroupBlockWriteINTEL)
    },
    # non-uniform shuffles (coopmatrix reduce); upstream omits these capabilities (§B10 item 1)
    Op.GroupNonUniformShuffle: (Capability.GroupNonUniformShuffle, ""),
    Op.GroupNonUniformShuffleXor: (Capability.GroupNonUniformShuffle, ""),
    Op.GroupNonUniformShuffleUp: (Capability.GroupNonUniformShuffleRelative, ""),
    Op.GroupNonUniformShuffleDown: (Capability.GroupNonUniformShuffleRelative, ""),
}
"""opcode -> (the capability, the extension or "") it needs: one dictionary lookup per opcode
the module uses (a few dozen, nearly all of them plain)."""

#: capability -> core-info feature it depends on
FEATURE_OF = {
    Capability.SubgroupDispatch: SpirvFeature.subgroup_dispatch,
    Capability.Float16: SpirvFeature.float16,
    Capability.Float64: SpirvFeature.float64,
    Capability.Groups: SpirvFeature.groups,
    Capability.SubgroupBufferBlockIOINTEL: SpirvFeature.subgroup_buffer_block_io,
    Capability.BFloat16ConversionINTEL: SpirvFeature.bfloat16_conversion,
    Capability.Int64Atomics: SpirvFeature.int64_atomics,
}


def capex(module: Module) -> None:
    """Declare every capability and extension that `module`'s code uses."""
    module.add_capability(Capability.Addresses)
    module.add_capability(Capability.Kernel)
    # 64-bit addressing: sizes, strides and offsets are i64 in almost every kernel; declared
    # always, as upstream does (its lit tests check it)
    module.add_capability(Capability.Int64)
    modes = module.execution_modes
    for opcode, offset, _count in iter_instructions(modes):
        if opcode == Op.ExecutionMode and modes[offset + 2] == ExecutionMode.SubgroupSize:
            module.add_capability(Capability.SubgroupDispatch)
    # the globals (a hundred or more instructions) by a plain loop over the instruction headers
    # rather than iter_instructions' generator; a word count of 0 or one running past the end
    # is refused as it refuses it, before any operand of that instruction is read
    g = module.globals
    offset, end = 0, len(g)
    while offset < end:
        first = g[offset]
        count = first >> 16
        if count == 0 or offset + count > end:
            raise ValueError(f"malformed instruction at word {offset}: word count {count}")
        opcode = first & 0xFFFF
        if opcode == Op.TypeInt or opcode == Op.TypeFloat:
            width = g[offset + 2]
            if opcode == Op.TypeInt and width in _INT_CAPS:
                module.add_capability(_INT_CAPS[width])
            elif opcode == Op.TypeFloat and width in _FLOAT_CAPS:
                module.add_capability(_FLOAT_CAPS[width])
        elif opcode == Op.TypeVector and g[offset + 3] > 4:
            module.add_capability(Capability.Vector16)
        elif opcode == Op.AsmTargetINTEL:  # the DPAS path's inline vISA (OpAsmINTEL needs it)
            module.add_capability(Capability.AsmINTEL)
            module.add_extension("SPV_INTEL_inline_assembly")
        offset += count
    used: dict[int, None] = {}  # in order of first use, which orders the declarations
    for function in module.functions:
        for block in function.blocks:
            used.update(block.opcodes)
    for opcode in used:
        declares = _DECLARES.get(opcode)
        if declares is not None:
            module.add_capability(declares[0])
            if declares[1]:
                module.add_extension(declares[1])


def required_features(module: Module) -> list[SpirvFeature]:
    return [FEATURE_OF[c] for c in module.capabilities if c in FEATURE_OF]


def check_features(module: Module, core_info: CoreInfo, loc=None) -> None:
    """Raise spirv_required_feature_unavailable for a feature the core info lacks."""
    for feature in required_features(module):
        if not core_info.have_spirv_feature(feature):
            raise CompilationError(
                loc or UNKNOWN_LOCATION,
                Status.spirv_required_feature_unavailable,
                f"required SPIR-V feature unavailable: {feature.name}",
            )
