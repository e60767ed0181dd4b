"""SPIR-V layer: grammar tables, module model, assembler, text dump and spirv-val wrapper.

It knows nothing about the tensor IR; the IR -> SPIR-V converter drives `Module` and friends.
"""

from .assembler import assemble, to_words
from .dump import dump
from .module import Block, Function, Module, emit, literal64
from .validate import SpirvToolMissing, SpirvValidationError, validate

__all__ = [
    "Block",
    "Function",
    "Module",
    "SpirvToolMissing",
    "SpirvValidationError",
    "assemble",
    "dump",
    "emit",
    "literal64",
    "to_words",
    "validate",
]
