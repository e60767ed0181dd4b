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

SPV_KHR_cooperative_matrix is equally unknown to that spirv-val; it is not rewritten because
this compiler never emits it (backend.md §6.2), so such a module fails with spirv-val's message.
"""

from __future__ import annotations

import shutil
import subprocess
from array import array

from .assembler import words_from_binary
from .module import iter_instructions, string_words
from .tables import HAS_RESULT_TYPE, OP_NAMES, Capability, Op

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
    """Raise SpirvValidationError unless spirv-val accepts `binary`."""
    words = words_from_binary(binary)
    checked, rewritten = _without_bf16_conversions(words)
    executable = shutil.which(spirv_val)
    if executable is None:
        raise SpirvToolMissing(
            f"{spirv_val} not found on PATH; install SPIRV-Tools (Debian package spirv-tools)"
        )
    proc = subprocess.run(
        [executable, "--target-env", env or target_env(words), "-"],
        input=checked.tobytes(),
        capture_output=True,
        timeout=120,
    )
    if proc.returncode != 0:
        output = (proc.stderr + proc.stdout).decode(errors="replace").strip()
        note = (
            "\n(validated a copy with OpConvertFToBF16INTEL/OpConvertBF16ToFINTEL shown as"
            " OpConvertFToU/OpConvertUToF, see tinytc_py.spirv.validate)"
            if rewritten
            else ""
        )
        raise SpirvValidationError(f"spirv-val rejected the module:\n{output}{note}")


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
