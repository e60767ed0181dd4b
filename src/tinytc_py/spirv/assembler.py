"""Module -> SPIR-V binary: header plus the module's sections concatenated in spec order.

The default version is the module's (1.4 unless chosen otherwise): the Intel CPU OpenCL runtime
advertises SPIR-V 1.0-1.4, and 1.4 is the first version with OpPtrNotEqual, which the converter
uses for `associated`. Upstream tinytc writes 1.6 (docs/design.md §B6.1), which that runtime also
accepts; `Module(version=(1, 6))` reproduces it.

The binary is little-endian regardless of the host, since that is what every consumer here
(spirv-val, the OpenCL runtime) is tested with.
"""

from __future__ import annotations

import sys
from array import array

from .module import Module, emit
from .tables import MAGIC_NUMBER, Op

#: Generator word of the header. 0 is what upstream tinytc writes (it has no registered
#: generator id); dump.py shows it as "Tiny Tensor Compiler".
GENERATOR = 0


def to_words(module: Module, generator: int = GENERATOR) -> array:
    """The complete module as 32-bit words, header included."""
    major, minor = module.version
    words = array("I", (MAGIC_NUMBER, major << 16 | minor << 8, generator, module.bound, 0))
    for capability in module.capabilities:
        emit(words, Op.Capability, capability)
    for extension in module.extensions:
        emit(words, Op.Extension, extension)
    words.extend(module.ext_inst_imports)
    emit(words, Op.MemoryModel, module.addressing_model, module.memory_model)
    words.extend(module.entry_points)
    words.extend(module.execution_modes)
    words.extend(module.debug)
    words.extend(module.annotations)
    words.extend(module.globals)
    for function in module.functions:
        words.extend(function.code)
        for block in function.blocks:
            words.fromlist(block.code)  # a list of words (Block), one C loop
        words.append(1 << 16 | Op.FunctionEnd)
    return words


def assemble(module: Module, generator: int = GENERATOR) -> bytes:
    """The SPIR-V binary of `module`."""
    words = to_words(module, generator)
    if sys.byteorder == "big":
        words.byteswap()
    return words.tobytes()


def words_from_binary(binary: bytes) -> array:
    """The words of a SPIR-V binary of either endianness (the magic number tells which)."""
    if len(binary) % 4 or len(binary) < 20:
        raise ValueError("not a SPIR-V binary: truncated or length not a multiple of 4")
    words = array("I", bytes(binary))
    if words[0] != MAGIC_NUMBER:
        words.byteswap()
        if words[0] != MAGIC_NUMBER:
            raise ValueError("not a SPIR-V binary: bad magic number")
    return words
