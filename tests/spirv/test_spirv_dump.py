"""Text dump details: column layout, number spelling, enum operands, ext-inst names."""

from __future__ import annotations

import re

import pytest

from tinytc_py.spirv import Module, assemble, dump
from tinytc_py.spirv.dump import hexfloat
from tinytc_py.spirv.tables import (
    Capability,
    Decoration,
    FunctionParameterAttribute,
    LinkageType,
    Op,
)


@pytest.mark.parametrize(
    ("bits", "width", "text"),
    [
        (0x3C00, 16, "0x1p+0"),
        (0x3E00, 16, "0x1.8p+0"),
        (0xC100, 16, "-0x1.4p+1"),
        (0x0001, 16, "0x1p-24"),
        (0x7C00, 16, "0x1p+16"),
        (0x7E00, 16, "0x1.8p+16"),
        (0x00000000, 32, "0x0p+0"),
        (0x80000000, 32, "-0x0p+0"),
        (0x3F800000, 32, "0x1p+0"),
        (0x00000001, 32, "0x1p-149"),
        (0x7FC00000, 32, "0x1.8p+128"),
        (0xFF800000, 32, "-0x1p+128"),
        (0x3FB999999999999A, 64, "0x1.999999999999ap-4"),
        (0x7FF0000000000000, 64, "0x1p+1024"),
    ],
)
def test_hexfloat(bits, width, text):
    assert hexfloat(bits, width) == text


def test_layout_and_header(add_kernel):
    mod = add_kernel()
    text = dump(assemble(mod))
    lines = text.splitlines()
    assert lines[:5] == [
        "; SPIR-V",
        "; Version 1.4",
        "; Generator: Tiny Tensor Compiler",
        f"; Bound: {mod.bound}",
        "; Schema: 0",
    ]
    assert text.endswith("OpFunctionEnd\n")
    for line in lines[5:]:
        if "=" in line:
            assert line.index(" = ") + 3 == 15, line
        else:
            assert line.startswith(" " * 15 + "Op"), line
    assert dump(mod) == text  # a Module dumps like its binary


def test_wide_ids_stay_aligned():
    mod = Module()
    for _ in range(12345):
        mod.new_id()
    mod.type_void()
    assert "      %12346 = OpTypeVoid" in dump(mod).splitlines()


def test_operand_spelling(control_flow_kernel):
    text = dump(control_flow_kernel())
    for pattern in (
        r'%(\d+) = OpExtInstImport "OpenCL.std"\n(?s:.*)OpExtInst %\d+ %\1 fma %\d+ %\d+ %\d+\n',
        r"OpLoopMerge %\d+ %\d+ PartialCount 4\n",
        r"OpLoad %\d+ %\d+ Volatile\|Aligned 4\n",
        r"OpSelectionMerge %\d+ None\n",
        r'OpName %\d+ "n \\"count\\"\\\\"\n',
        r"OpExecutionMode %\d+ SubgroupSize 16\n",
        r"OpFunction %\d+ DontInline %\d+\n",
        r"OpConstant %\d+ -0x1.8p\+0\n",
        r"OpConstant %\d+ 18446744073709551609\n",
        r"OpSwitch %\d+ %\d+ 5 %\d+ 1099511627776 %\d+\n",
    ):
        assert re.search(pattern, text), pattern


def test_decoration_parameters_and_unknown_opcodes():
    mod = Module()
    mod.add_capability(Capability.Linkage)
    void = mod.type_void()
    mod.decorate(void, Decoration.LinkageAttributes, "ext_fn", LinkageType.Import)
    mod.decorate(void, Decoration.FuncParamAttr, FunctionParameterAttribute.NoAlias)
    mod.globals.extend([2 << 16 | 65000, 7])
    text = dump(mod)
    assert f'OpDecorate %{void} LinkageAttributes "ext_fn" Import' in text
    assert f"OpDecorate %{void} FuncParamAttr NoAlias" in text
    assert "OpUnknown65000 7" in text


def test_rejects_malformed_binaries(add_kernel):
    binary = assemble(add_kernel())
    with pytest.raises(ValueError, match="magic"):
        dump(b"\0" * 20)
    with pytest.raises(ValueError, match="multiple of 4"):
        dump(binary[:-1])
    with pytest.raises(ValueError, match="word count 0"):
        dump(binary + b"\0\0\0\0")
    assert dump(binary) == dump(bytes(reversed_words(binary)))


def reversed_words(binary: bytes) -> bytes:
    """The same module in big-endian byte order."""
    return b"".join(binary[i : i + 4][::-1] for i in range(0, len(binary), 4))


def test_block_op_ids_follow_allocation_order():
    mod = Module()
    i32 = mod.type_int(32)
    fn = mod.add_function(mod.type_void(), mod.type_function(mod.type_void()))
    blk = fn.add_block()
    first = blk.op(Op.IAdd, i32, mod.constant(i32, 1), mod.constant(i32, 2))
    assert f"%{first} = OpIAdd %{i32}" in dump(mod)
