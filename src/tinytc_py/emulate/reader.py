"""Read a SPIR-V binary back into the project's `Module` model, so code can be added to it.

The model (spirv/module.py) is a writer: sections of finished words plus the tables that unique
types and constants. Reading fills the sections in place and seeds those tables with the
binary's own types and constants, so an id asked for later (`module.type_int(32)`) is the one
the binary already declares rather than a duplicate that SPIR-V forbids. Function bodies stay
words: the emulator only swaps call instructions inside them.
"""

from __future__ import annotations

from array import array

from ..spirv.assembler import words_from_binary
from ..spirv.module import Function, Module, iter_instructions
from ..spirv.tables import HAS_RESULT, HAS_RESULT_TYPE, Decoration, Op

_DEBUG = frozenset(
    {Op.String, Op.SourceExtension, Op.Source, Op.SourceContinued, Op.Name, Op.MemberName}
    | {Op.ModuleProcessed}
)
_ANNOTATIONS = frozenset(
    {Op.Decorate, Op.MemberDecorate, Op.DecorationGroup, Op.GroupDecorate}
    | {Op.GroupMemberDecorate, Op.DecorateId, Op.DecorateString, Op.MemberDecorateString}
)
_SCALAR_TYPES = frozenset({Op.TypeInt, Op.TypeFloat, Op.TypeBool})
_NOT_UNIQUE = frozenset({Op.Variable, Op.Undef, Op.TypeStruct, Op.TypeOpaque})


def literal_string(words, start: int) -> str:
    """The NUL-terminated UTF-8 literal string starting at word `start`."""
    data = bytearray()
    for word in words[start:]:
        chunk = int(word).to_bytes(4, "little")
        if 0 in chunk:
            data += chunk[: chunk.index(0)]
            break
        data += chunk
    return data.decode()


def read_module(binary: bytes) -> Module:
    """The module of `binary`; each function is one `Function` whose words run from OpFunction
    to just before OpFunctionEnd (the assembler appends that)."""
    words = words_from_binary(binary)
    mod = Module(version=((words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF))
    mod.ids.next = words[3]
    alignments: dict[int, int] = {}
    function: Function | None = None
    for op, off, n in iter_instructions(words, 5):
        inst = words[off : off + n]
        if function is not None:
            if op == Op.FunctionEnd:
                function = None
            else:
                function.code.extend(inst)
        elif op == Op.Function:
            function = Function(mod, inst[1], inst[4], inst[3], id=inst[2])
            mod.functions.append(function)
        elif op == Op.Capability:
            mod.capabilities[inst[1]] = None
        elif op == Op.Extension:
            mod.extensions[literal_string(inst, 1)] = None
        elif op == Op.ExtInstImport:
            mod.ext_inst_imports.extend(inst)
            mod._unique[(Op.ExtInstImport, literal_string(inst, 2))] = inst[1]
        elif op == Op.MemoryModel:
            mod.addressing_model, mod.memory_model = inst[1], inst[2]
        elif op == Op.EntryPoint:
            mod.entry_points.extend(inst)
        elif op in (Op.ExecutionMode, Op.ExecutionModeId):
            mod.execution_modes.extend(inst)
        elif op in _DEBUG:
            mod.debug.extend(inst)
        elif op in _ANNOTATIONS:
            mod.annotations.extend(inst)
            if op == Op.Decorate and inst[2] == Decoration.Alignment:
                alignments[inst[1]] = inst[3]
        else:
            mod.globals.extend(inst)
            _seed(mod, op, inst, alignments)
    return mod


def _seed(mod: Module, op: int, inst: array, alignments: dict[int, int]) -> None:
    """Enter a global type or constant into the module's uniquing tables."""
    if op not in HAS_RESULT or op in _NOT_UNIQUE:
        return
    if op in HAS_RESULT_TYPE:
        result, key = inst[2], (op, inst[1], *inst[3:])
    else:
        result, key = inst[1], (op, *inst[2:])
    if op == Op.TypePointer:
        key = (op, inst[2], inst[3], alignments.get(result, 0))
    mod._unique.setdefault(key, result)
    if op in _SCALAR_TYPES:
        mod._scalar_types.setdefault(result, key)
