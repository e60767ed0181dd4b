"""The pipeline's first check-ir skips verifying again what the parser verified, only for a
parse handed on unchanged (compiler.compile_text's programs): the parser marks what it verified
(the current language only), a program changed after the parse and compiled as a program is
verified again, and the extensions flag is checked even on the skipping path."""

from __future__ import annotations

import pytest

from tinytc_py.compiler import compile_text, compile_to_module, compile_to_spirv
from tinytc_py.errors import CompilationError, Status
from tinytc_py.ir.builder import IRBuilder
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.enums import OptFlag
from tinytc_py.passes.check_ir import CheckIr
from tinytc_py.passes.pipeline import default_pipeline
from tinytc_py.target.core_info import CoreInfo
from tinytc_py.text.dialect import parse

LOOP = """\
func @k(%x: memref<f32x?>) {
    %c0 = constant 0 : index
    %n = size %x[0] : index
    %z = constant 0.0 : f32
    %s = for %i = %c0, %n init(%acc = %z) -> (f32) {
        %v = load %x[%i] : f32
        %a = add %acc, %v : f32
        yield (%a)
    }
    store %s, %x[%c0]
}
"""

SELECT = """\
func @k(%c: bool, %x: f32, %y: memref<f32x1>) {
    %c0 = constant 0 : index
    %s = select %c, %x, %x : f32
    store %s, %y[%c0]
}
"""

# The legacy language (tinytc v0.3): read by the legacy parser, which adds instructions of its
# own making and so leaves its programs unmarked.
LEGACY = """\
func @k(%x: memref<f32x4>) {
    %c = arith.add 1, 2 : index
}
"""


def test_the_current_parser_marks_what_it_verified() -> None:
    assert parse(LOOP).verified_by_parser
    assert not parse(LEGACY, dialect="legacy").verified_by_parser
    assert not IRBuilder(CompilerContext()).prog.verified_by_parser


def test_the_verified_pipeline_skips_only_the_first_structure_check() -> None:
    info = CoreInfo.default()
    verified = default_pipeline(info, verified=True)
    assert isinstance(verified[0], CheckIr) and verified[0].structure is False
    checks = [p.structure for p in verified if isinstance(p, CheckIr)]
    assert checks == [False, True]  # the final check-ir verifies the lowered program
    first = default_pipeline(info)[0]
    assert isinstance(first, CheckIr) and first.structure is True


def test_parsed_path_gives_the_same_binary() -> None:
    info = CoreInfo.default()
    via_text = compile_text(LOOP, info, CompilerContext(), lambda: parse(LOOP), parsed=True)
    assert via_text.data == compile_to_spirv(parse(LOOP), info).data


def _without_yield(text: str):
    """A parse of `text` whose loop no longer yields (edited after the parse)."""
    prog = parse(text, CompilerContext(), "loop.ir")
    loop = next(inst for inst in prog.funcs[0].body.insts if inst.name == "for")
    yield_ = loop.regions[0].insts.pop()
    yield_.drop_uses()
    return prog


def test_compile_text_verifies_a_parse_unless_told_it_is_unchanged(monkeypatch) -> None:
    """`parsed` is the caller's word; without it, an edited parse gets the first check-ir's
    error (not the SPIR-V conversion's yield-count error at the loop). The self-checks are
    off: their final check-ir would find the missing yield as well."""
    monkeypatch.setenv("TINYTC_VALIDATE", "0")
    text = LOOP + "; edited after the parse\n"  # a text of its own: no kernel-cache hit
    with pytest.raises(CompilationError) as info:
        compile_text(text, CoreInfo.default(), CompilerContext(), lambda: _without_yield(text))
    assert info.value.status is Status.ir_must_have_yield
    assert str(info.value.loc) == "7.14-31"


def test_a_changed_parse_compiled_as_a_program_is_verified_again() -> None:
    with pytest.raises(CompilationError) as info:
        compile_to_spirv(_without_yield(LOOP), CoreInfo.default())
    assert info.value.status is Status.ir_must_have_yield
    assert str(info.value.loc) == "7.14-31"  # the body's last instruction, from "add" on


def test_the_skipping_path_checks_the_extensions_flag() -> None:
    ctx = CompilerContext()
    prog = parse(SELECT, ctx, "select.ir")
    ctx.set_optimization_flag(OptFlag.extensions, 0)  # as options set after a parse
    with pytest.raises(CompilationError) as info:
        compile_to_module(prog, CoreInfo.default(), parsed=True)
    assert info.value.status is Status.ext_disabled
    assert str(info.value.loc) == "3.10-32"
    assert "'select' is a tinytc-py language extension" in info.value.what


def test_the_parsed_mark_reaches_the_first_check_ir(monkeypatch) -> None:
    """The skip happens end to end: told (wrongly, here) that the edited parse is unchanged,
    compile_text's pipeline leaves it unverified (the self-checks' final check-ir off), and
    the loop's missing yield is found only by the SPIR-V conversion of the loop."""
    monkeypatch.setenv("TINYTC_VALIDATE", "0")
    text = LOOP + "; edited, and said to be unchanged\n"  # no kernel-cache hit
    with pytest.raises(CompilationError) as info:
        compile_text(
            text, CoreInfo.default(), CompilerContext(), lambda: _without_yield(text), parsed=True
        )
    assert info.value.status is Status.ir_yield_mismatch
    assert str(info.value.loc) == "5.10-50"
