"""Module model and assembler: hand-built kernels validate, dumps agree with SPIRV-Tools,
types/constants are uniqued, and constants are encoded exactly as spirv-as encodes them."""

from __future__ import annotations

import math
import re

import pytest

from tinytc_py.spirv import Module, assemble, dump, emit, literal64, validate
from tinytc_py.spirv.assembler import words_from_binary
from tinytc_py.spirv.module import iter_instructions, opcodes_in, string_words
from tinytc_py.spirv.tables import BuiltIn, Capability, Decoration, Op, StorageClass


@pytest.mark.parametrize("minor", range(7))
def test_add_kernel_is_valid_for_every_version(add_kernel, minor):
    binary = assemble(add_kernel(version=(1, minor)))
    assert words_from_binary(binary)[1] == 0x10000 | minor << 8
    validate(binary)


def test_control_flow_kernel_is_valid(control_flow_kernel):
    validate(assemble(control_flow_kernel()))


def test_header(add_kernel):
    mod = add_kernel()
    words = words_from_binary(assemble(mod))
    assert list(words[:5]) == [0x07230203, 0x00010400, 0, mod.bound, 0]
    assert len(words) * 4 == len(assemble(mod))


def _same_token(ours: str, theirs: str) -> bool:
    """Equal text, or the same number spelled as hexfloat by us and decimal by spirv-dis."""
    if ours == theirs:
        return True
    try:
        value = float.fromhex(ours)
        other = float(theirs)
    except ValueError:
        return False
    return math.isclose(value, other, rel_tol=1e-8) or (math.isnan(value) and math.isnan(other))


def _assert_dump_matches_spirv_dis(binary: bytes, tool) -> None:
    ours = [line for line in dump(binary).splitlines() if not line.startswith(";")]
    dis = tool("spirv-dis", "--raw-id", "--no-header", "--no-color", "-", data=binary)
    theirs = dis.stdout.decode().splitlines()
    assert len(ours) == len(theirs)
    for mine, reference in zip(ours, theirs, strict=True):
        a, b = mine.split(), reference.split()
        assert len(a) == len(b) and all(map(_same_token, a, b)), f"\n{mine}\n{reference}"


@pytest.mark.parametrize("kernel", ["add_kernel", "control_flow_kernel"])
def test_dump_matches_spirv_dis(request, kernel, tool):
    binary = assemble(request.getfixturevalue(kernel)())
    tool("spirv-dis", "-", data=binary)  # friendly-name disassembly parses too
    _assert_dump_matches_spirv_dis(binary, tool)


def test_dump_reassembles_to_the_same_binary(control_flow_kernel, tool):
    """Our text is valid spirv-as input and denotes exactly the binary it was made from."""
    binary = assemble(control_flow_kernel())
    text = dump(binary).encode()
    out = tool(
        "spirv-as", "--preserve-numeric-ids", "--target-env", "spv1.4", "-o", "-", "-", data=text
    )
    ours, theirs = words_from_binary(binary), words_from_binary(out.stdout)
    assert theirs[3] == ours[3] and theirs[5:] == ours[5:]


def test_types_and_constants_are_uniqued():
    mod = Module()
    i32, f32 = mod.type_int(32), mod.type_float(32)
    assert mod.type_int(32) == i32 and mod.type_int(64) != i32 and mod.type_float(32) == f32
    assert mod.type_vector(f32, 4) == mod.type_vector(f32, 4) != mod.type_vector(f32, 2)
    assert mod.type_function(i32, [f32, f32]) == mod.type_function(i32, (f32, f32))
    assert mod.type_function(i32, [f32]) != mod.type_function(i32, [f32, f32])
    assert mod.type_array(f32, 8) == mod.type_array(f32, 8) != mod.type_array(f32, 9)
    assert mod.constant(i32, -1) == mod.constant(i32, 0xFFFF_FFFF)
    assert mod.constant(f32, 1) == mod.constant(f32, 1.0) != mod.constant(i32, 1)
    assert mod.constant(f32, 0.0) != mod.constant(f32, -0.0)
    assert (
        mod.constant_bool(True) == mod.constant(mod.type_bool(), True) != mod.constant_bool(False)
    )
    v2 = mod.type_vector(f32, 2)
    pair = [mod.constant(f32, 1.0), mod.constant(f32, 2.0)]
    assert mod.constant_composite(v2, pair) == mod.constant_composite(v2, tuple(pair))
    assert mod.constant_null(v2) == mod.constant_null(v2) != mod.constant_null(f32)
    assert mod.ext_inst_import("OpenCL.std") == mod.ext_inst_import("OpenCL.std")
    assert mod.unique(Op.TypeInt, 32, 0) == i32

    plain = mod.type_pointer(StorageClass.CrossWorkgroup, f32)
    aligned = mod.type_pointer(StorageClass.CrossWorkgroup, f32, alignment=16)
    assert plain == mod.type_pointer(StorageClass.CrossWorkgroup, f32) != aligned
    assert aligned == mod.type_pointer(StorageClass.CrossWorkgroup, f32, alignment=16)
    ptr = mod.type_pointer(StorageClass.Input, mod.type_vector(mod.type_int(64), 3))
    assert mod.builtin(BuiltIn.WorkgroupId, ptr) == mod.builtin(BuiltIn.WorkgroupId, ptr)

    decorations = [
        tuple(mod.annotations[off + 1 : off + n])
        for _, off, n in iter_instructions(mod.annotations)
    ]
    assert decorations.count((aligned, Decoration.Alignment, 16)) == 1
    assert len(decorations) == 3  # the alignment plus BuiltIn and Constant, each once
    assert len(mod.ext_inst_imports) == len(string_words("OpenCL.std")) + 2


# (type, value) pairs and how spirv-as spells the same constant
CONSTANTS = [
    ("f16", 1.5, "1.5"),
    ("f16", -2.5, "-2.5"),
    ("f16", 65504.0, "65504"),
    ("f16", 2.0**-24, "0x1p-24"),
    ("f16", 1e6, "0x1p+16"),  # overflows to +inf like a C conversion
    ("f32", 0.1, "0.1"),
    ("f32", -3.0e38, "-3e38"),
    ("f32", 2.0**-149, "0x1p-149"),
    ("f64", 1e100, "1e100"),
    ("f64", -0.1, "-0.1"),
    ("f64", 5e-324, "0x1p-1074"),
    ("i8", 255, "255"),
    ("i8", -1, "255"),
    ("i16", -2, "65534"),
    ("i32", -7, "4294967289"),
    ("i64", -1, "18446744073709551615"),
    ("i64", (1 << 40) + 5, str((1 << 40) + 5)),
    ("s16", -2, "-2"),  # signed type: sign-extended into the word
]


def test_constants_are_encoded_like_spirv_as(tool):
    mod = Module()
    mod.add_capability(Capability.Kernel)
    types = {
        "f16": mod.type_float(16),
        "f32": mod.type_float(32),
        "f64": mod.type_float(64),
        "i8": mod.type_int(8),
        "i16": mod.type_int(16),
        "i32": mod.type_int(32),
        "i64": mod.type_int(64),
        "s16": mod.type_int(16, 1),
    }
    ids = [mod.constant(types[ty], value) for ty, value, _ in CONSTANTS]
    lines = ["OpCapability Kernel", "OpMemoryModel Physical64 OpenCL"]
    for name, tid in types.items():
        width = int(name[1:])
        lines.append(
            f"%{tid} = OpTypeFloat {width}"
            if name[0] == "f"
            else f"%{tid} = OpTypeInt {width} {int(name[0] == 's')}"
        )
    constants: dict[int, str] = {}  # uniquing merges equal bit patterns (i8 255 and -1)
    for cid, (ty, _, text) in zip(ids, CONSTANTS, strict=True):
        constants.setdefault(cid, f"%{cid} = OpConstant %{types[ty]} {text}")
    assert len(constants) == len(CONSTANTS) - 1
    lines += constants.values()
    reference = tool(
        "spirv-as",
        "--preserve-numeric-ids",
        "-o",
        "-",
        "-",
        data="\n".join(lines).encode(),
    ).stdout
    ours, theirs = words_from_binary(assemble(mod)), words_from_binary(reference)
    assert ours[5:] == theirs[5:]


def test_constant_range_and_type_checks():
    mod = Module()
    with pytest.raises(ValueError, match="does not fit"):
        mod.constant(mod.type_int(8), 256)
    with pytest.raises(ValueError, match="does not fit"):
        mod.constant(mod.type_int(8), -129)
    with pytest.raises(ValueError, match="not a scalar"):
        mod.constant(mod.type_vector(mod.type_float(32), 4), 1.0)
    with pytest.raises(ValueError, match="OpenCL allows"):
        mod.type_vector(mod.type_float(32), 5)


def test_emit_encodes_strings_and_rejects_bad_operands():
    code = emit_into(Op.Name, 7, "abc")
    assert list(code) == [3 << 16 | Op.Name, 7, int.from_bytes(b"abc\0", "little")]
    code = emit_into(Op.Name, 7, "abcd")
    assert list(code) == [4 << 16 | Op.Name, 7, int.from_bytes(b"abcd", "little"), 0]
    assert literal64(-2) == (0xFFFF_FFFE, 0xFFFF_FFFF)
    for bad in (-1, 1 << 32, 1.5, None):
        with pytest.raises(ValueError, match="OpIAdd: operand"):
            emit_into(Op.IAdd, 1, 2, bad)
    with pytest.raises(ValueError, match="NUL"):
        emit_into(Op.Name, 1, "a\0b")


def emit_into(opcode: int, *operands):
    from array import array

    code = array("I", [99])
    emit(code, opcode, *operands)
    assert code[0] == 99  # never disturbs what is already there, even on error
    return code[1:]


def test_block_checks_result_shape():
    mod = Module()
    fn = mod.add_function(mod.type_void(), mod.type_function(mod.type_void()))
    blk = fn.add_block()
    with pytest.raises(ValueError, match="OpStore has no result type"):
        blk.op(Op.Store, 1, 2)
    with pytest.raises(ValueError, match="OpIAdd defines a result"):
        blk.emit(Op.IAdd, 1, 2, 3, 4)
    before = len(blk.code)
    with pytest.raises(ValueError, match="operand"):
        blk.op(Op.IAdd, 1, 2, object())
    assert len(blk.code) == before
    assert list(blk.opcodes) == [Op.Label]


def test_block_checks_result_shape_of_recorded_opcodes():
    """op() and emit() share the opcode record; a recorded opcode is still checked."""
    mod = Module()
    fn = mod.add_function(mod.type_void(), mod.type_function(mod.type_void()))
    blk = fn.add_block()
    i32 = mod.type_int(32)
    blk.emit(Op.Store, 1, 2)
    x = blk.op(Op.IAdd, i32, 1, 2)
    before = len(blk.code)
    with pytest.raises(ValueError, match="^OpStore has no result type; use emit\\(\\)$"):
        blk.op(Op.Store, 1, 2)
    with pytest.raises(ValueError, match="^OpIAdd defines a result; use op\\(\\)$"):
        blk.emit(Op.IAdd, i32, x + 1, 1, 2)
    assert len(blk.code) == before
    assert list(blk.opcodes) == [Op.Label, Op.Store, Op.IAdd]


def test_block_records_its_opcodes_in_order_of_first_use():
    mod = Module()
    fn = mod.add_function(mod.type_void(), mod.type_function(mod.type_void()))
    blk = fn.add_block()
    i32 = mod.type_int(32)
    x = blk.op(Op.IAdd, i32, mod.constant(i32, 1), mod.constant(i32, 2))
    blk.op(Op.IMul, i32, x, x)
    blk.op(Op.IAdd, i32, x, x)
    blk.emit(Op.Return)
    assert list(blk.opcodes) == [Op.Label, Op.IAdd, Op.IMul, Op.Return]
    assert list(blk.opcodes) == list(opcodes_in(blk.code))


def test_emitter_writes_what_op_writes():
    mod = Module()
    fn = mod.add_function(mod.type_void(), mod.type_function(mod.type_void()))
    by_op, by_emitter = fn.add_block(), fn.add_block()
    f32 = mod.type_float(32)
    ocl = mod.ext_inst_import("OpenCL.std")
    x, y = mod.constant(f32, 1.0), mod.constant(f32, 2.0)
    fma = by_emitter.emitter(Op.ExtInst, f32, ocl, 26)
    assert list(by_emitter.opcodes) == [Op.Label]  # recorded when emitted, not when made
    first = by_op.op(Op.ExtInst, f32, ocl, 26, x, y, x)
    by_op.op(Op.ExtInst, f32, ocl, 26, x, y, first)
    second = fma(x, y, x)
    assert fma(x, y, second) == second + 1
    assert list(by_emitter.opcodes) == [Op.Label, Op.ExtInst]
    head = 8 << 16 | Op.ExtInst

    def words(a: int) -> list[int]:
        return [head, f32, a, ocl, 26, x, y, x, head, f32, a + 1, ocl, 26, x, y, a]

    assert list(by_op.code[2:]) == words(first)
    assert list(by_emitter.code[2:]) == words(second)


def test_emitter_fixed_arity_methods_write_and_check_what_the_call_does():
    """op2/op3 (the mul_add loop's direct calls) write the words the generic call writes, and
    refuse what it refuses before writing anything."""
    mod = Module()
    fn = mod.add_function(mod.type_void(), mod.type_function(mod.type_void()))
    by_call, by_method = fn.add_block(), fn.add_block()
    f32, i32 = mod.type_float(32), mod.type_int(32)
    ocl = mod.ext_inst_import("OpenCL.std")
    x, y = mod.constant(f32, 1.0), mod.constant(f32, 2.0)
    lane = mod.constant(i32, 3)
    emitters = []
    for blk in (by_call, by_method):
        emitters.append(
            (blk.emitter(Op.ExtInst, f32, ocl, 26), blk.emitter(Op.GroupBroadcast, f32, 3))
        )
    (fma_call, bc_call), (fma_m, bc_m) = emitters
    a = fma_call(x, y, x)
    b = bc_call(a, lane)
    c = fma_m.op3(x, y, x)
    d = bc_m.op2(c, lane)
    assert (c, d) == (b + 1, b + 2)

    def words(first: int) -> list[int]:
        fma_head, bc_head = 8 << 16 | Op.ExtInst, 6 << 16 | Op.GroupBroadcast
        return [fma_head, f32, first, ocl, 26, x, y, x, bc_head, f32, first + 1, 3, first, lane]

    assert by_call.code[2:] == words(a)
    assert by_method.code[2:] == words(c)
    assert list(by_method.opcodes) == [Op.Label, Op.ExtInst, Op.GroupBroadcast]
    before = list(by_method.code)
    with pytest.raises(ValueError, match="OpExtInst: operand -1 is neither a 32-bit word"):
        fma_m.op3(x, y, -1)
    with pytest.raises(ValueError, match="OpGroupBroadcast: operand 4294967296 is neither"):
        bc_m.op2(1 << 32, lane)
    assert by_method.code == before
    assert mod.bound == d + 1


def test_fixed_arity_ops_write_and_check_what_op_does():
    mod = Module()
    fn = mod.add_function(mod.type_void(), mod.type_function(mod.type_void()))
    by_op, fixed = fn.add_block(), fn.add_block()
    i32 = mod.type_int(32)
    x, y = mod.constant(i32, 3), mod.constant(i32, 4)
    a = by_op.op(Op.IAdd, i32, x, y)
    by_op.op(Op.Not, i32, a)
    b = fixed.op2(Op.IAdd, i32, x, y)
    assert fixed.op1(Op.Not, i32, b) == b + 1
    assert by_op.code[2:] == [5 << 16 | Op.IAdd, i32, a, x, y, 4 << 16 | Op.Not, i32, a + 1, a]
    assert fixed.code[2:] == [5 << 16 | Op.IAdd, i32, b, x, y, 4 << 16 | Op.Not, i32, b + 1, b]
    assert list(fixed.opcodes) == [Op.Label, Op.IAdd, Op.Not]
    before = list(fixed.code)
    with pytest.raises(ValueError, match="^OpStore has no result type; use emit\\(\\)$"):
        fixed.op2(Op.Store, i32, x, y)
    with pytest.raises(ValueError, match="OpIAdd: operand -1 is neither a 32-bit word"):
        fixed.op2(Op.IAdd, i32, x, -1)
    with pytest.raises(ValueError, match="OpNot: operand 4294967296 is neither"):
        fixed.op1(Op.Not, i32, 1 << 32)
    assert fixed.code == before
    assert list(fixed.opcodes) == [Op.Label, Op.IAdd, Op.Not]


def test_block_encodes_string_operands():
    """A string operand (OpAsmINTEL's text) takes the encoder's slow path in a block too; the
    words are the same as `emit` writes into a section."""
    mod = Module()
    fn = mod.add_function(mod.type_void(), mod.type_function(mod.type_void()))
    blk = fn.add_block()
    blk.emit(Op.Name, 7, "abcd")
    rid = blk.op(Op.IAdd, 9, 7, "ab")
    assert blk.code[2:] == [
        *emit_into(Op.Name, 7, "abcd"),
        *emit_into(Op.IAdd, 9, rid, 7, "ab"),
    ]
    assert blk.code[2:] == [
        4 << 16 | Op.Name,
        7,
        int.from_bytes(b"abcd", "little"),
        0,
        5 << 16 | Op.IAdd,
        9,
        rid,
        7,
        int.from_bytes(b"ab\0\0", "little"),
    ]


def test_emitter_checks_like_op():
    mod = Module()
    fn = mod.add_function(mod.type_void(), mod.type_function(mod.type_void()))
    blk = fn.add_block()
    with pytest.raises(ValueError) as by_op:
        blk.op(Op.Store, 1)
    with pytest.raises(ValueError) as by_emitter:
        blk.emitter(Op.Store, 1)
    assert str(by_emitter.value) == str(by_op.value) == "OpStore has no result type; use emit()"
    add = blk.emitter(Op.IAdd, mod.type_int(32))
    before = len(blk.code)
    with pytest.raises(ValueError, match="operand"):
        add(1, -1)
    assert len(blk.code) == before
    assert list(blk.opcodes) == [Op.Label]


_WORD_ERROR = "is neither a 32-bit word nor a string (split 64-bit literals with literal64())"


def _block_emitters(i32: int, x: int):
    """Each block emitter as a function of (result type, operand) that emits one instruction
    with that result type (None: one without a result) and that operand among its words."""
    return {
        "op": lambda rt, v: ("OpIAdd", lambda blk: blk.op(Op.IAdd, rt, x, v)),
        "op1": lambda rt, v: ("OpNot", lambda blk: blk.op1(Op.Not, rt, v)),
        "op2": lambda rt, v: ("OpIAdd", lambda blk: blk.op2(Op.IAdd, rt, x, v)),
        "emitter": lambda rt, v: ("OpIAdd", lambda blk: blk.emitter(Op.IAdd, rt, x)(v)),
        "ext_inst": lambda rt, v: ("OpExtInst", lambda blk: blk.ext_inst(rt, x, 26, v, x, x)),
        "emit": lambda rt, v: ("OpStore", lambda blk: blk.emit(Op.Store, x, v)),
    }


@pytest.mark.parametrize("emitter", ["op", "op1", "op2", "emitter", "ext_inst", "emit"])
@pytest.mark.parametrize("bad", [1.5, None, -1, 1 << 32, b"ab", object()], ids=repr)
def test_every_block_emitter_refuses_a_non_word_operand(emitter, bad):
    """Every emitter refuses an operand that is neither a word nor a string with op()'s
    message, before the block, its opcode record or the module's id bound change."""
    mod = Module()
    fn = mod.add_function(mod.type_void(), mod.type_function(mod.type_void()))
    blk = fn.add_block()
    i32 = mod.type_int(32)
    x = mod.constant(i32, 3)
    name, emit_one = _block_emitters(i32, x)[emitter](i32, bad)
    code, opcodes, bound = list(blk.code), list(blk.opcodes), mod.bound
    with pytest.raises(ValueError) as error:
        emit_one(blk)
    assert str(error.value) == f"{name}: operand {bad!r} {_WORD_ERROR}"
    assert (blk.code, list(blk.opcodes), mod.bound) == (code, opcodes, bound)


@pytest.mark.parametrize("emitter", ["op", "op1", "op2", "emitter", "ext_inst"])
@pytest.mark.parametrize("bad", [2.0, None, -5, 1 << 40, "ab"], ids=repr)
def test_every_block_emitter_refuses_a_non_word_result_type(emitter, bad):
    mod = Module()
    fn = mod.add_function(mod.type_void(), mod.type_function(mod.type_void()))
    blk = fn.add_block()
    i32 = mod.type_int(32)
    x = mod.constant(i32, 3)
    name, emit_one = _block_emitters(i32, x)[emitter](bad, x)
    code, bound = list(blk.code), mod.bound
    with pytest.raises(ValueError) as error:
        emit_one(blk)
    if isinstance(bad, str):
        assert str(error.value) == f"{name}: operand {bad!r} is a string, not an id"
    else:
        assert str(error.value) == f"{name}: operand {bad!r} {_WORD_ERROR}"
    assert (blk.code, list(blk.opcodes), mod.bound) == (code, [Op.Label], bound)


@pytest.mark.parametrize("bad", [2.0, None, -5, 1 << 40, "ab"], ids=repr)
def test_op_refuses_a_non_word_result_id(bad):
    mod = Module()
    fn = mod.add_function(mod.type_void(), mod.type_function(mod.type_void()))
    blk = fn.add_block()
    i32 = mod.type_int(32)
    x = mod.constant(i32, 3)
    code, bound = list(blk.code), mod.bound
    for operand in (x, "ab"):  # the all-word and the string path check it alike
        with pytest.raises(ValueError, match=f"^OpIAdd: operand {re.escape(repr(bad))} "):
            blk.op(Op.IAdd, i32, x, operand, result_id=bad)
    assert (blk.code, list(blk.opcodes), mod.bound) == (code, [Op.Label], bound)
    rid = mod.new_id()
    assert blk.op(Op.IAdd, i32, x, "ab", result_id=rid) == rid
    assert blk.code[2:] == [5 << 16 | Op.IAdd, i32, rid, x, int.from_bytes(b"ab\0\0", "little")]


def test_every_block_emitter_encodes_a_string_operand():
    """A string operand is encoded by every emitter as op() encodes it (the fixed-arity and
    the emitter's fast paths hand it to op()), and the module assembles and disassembles."""
    mod = Module()
    fn = mod.add_function(mod.type_void(), mod.type_function(mod.type_void()))
    i32 = mod.type_int(32)
    x = mod.constant(i32, 3)
    ab = int.from_bytes(b"ab\0\0", "little")
    for emitter, make in _block_emitters(i32, x).items():
        blk = fn.add_block()
        bound = mod.bound
        _name, emit_one = make(i32, "ab")
        rid = emit_one(blk)
        reference = fn.add_block()
        if emitter == "emit":
            reference.emit(Op.Store, x, ab)
        elif emitter == "op1":
            reference.op(Op.Not, i32, ab, result_id=bound)
        elif emitter == "ext_inst":
            reference.op(Op.ExtInst, i32, x, 26, ab, x, x, result_id=bound)
        else:
            reference.op(Op.IAdd, i32, x, ab, result_id=bound)
        assert rid == (None if emitter == "emit" else bound)
        assert blk.code[2:] == reference.code[2:], emitter
        assert list(blk.opcodes) == list(reference.opcodes)
    # a string among an emitter's fixed operands is encoded once, into every instruction
    blk = fn.add_block()
    add = blk.emitter(Op.IAdd, i32, "ab")
    first = add(x)
    assert add("ab") == first + 1
    assert blk.code[2:] == [
        5 << 16 | Op.IAdd,
        i32,
        first,
        ab,
        x,
        5 << 16 | Op.IAdd,
        i32,
        first + 1,
        ab,
        ab,
    ]


def test_capex_refuses_a_truncated_globals_section():
    """An instruction whose word count runs past the end of the globals is refused with the
    message iter_instructions gives, not read past the end."""
    from tinytc_py.spirv.capex import capex

    for truncated in ([3 << 16 | Op.TypeInt, 1], [4 << 16 | Op.TypeVector, 1, 2], [0]):
        mod = Module()
        mod.type_int(16)
        start = len(mod.globals)
        mod.globals.extend(truncated)
        count = truncated[0] >> 16
        with pytest.raises(
            ValueError, match=f"^malformed instruction at word {start}: word count {count}$"
        ):
            capex(mod)


def test_sections_come_out_in_spec_order(add_kernel):
    mod = add_kernel()
    mod.add_extension("SPV_INTEL_subgroups")
    mod.add_capability(Capability.SubgroupBufferBlockIOINTEL)
    mod.add_capability(Capability.Kernel)  # already there: stays in its first position
    text = dump(assemble(mod))
    order = [
        "OpCapability Addresses",
        "OpCapability Kernel",
        "OpCapability Int64",
        "OpCapability SubgroupBufferBlockIOINTEL",
        'OpExtension "SPV_INTEL_subgroups"',
        "OpMemoryModel",
        "OpEntryPoint",
        "OpExecutionMode",
        "OpName",
        "OpDecorate",
        "OpTypeVoid",
        "OpFunction ",
        "OpFunctionEnd",
    ]
    positions = [text.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert len(re.findall("OpCapability Kernel", text)) == 1
