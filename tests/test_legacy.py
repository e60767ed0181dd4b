"""The legacy front end through the Python API and the command-line tools: dialect selection
(`dialect=`, the compiler-context flag, --legacy, auto-detection that keeps current-language
programs as they are), located errors in legacy input, and tinytc-upgrade (names, comments,
header, notes). The per-construct parse tests are in tests/lit/legacy/, execution in
tests/exec/test_exec_legacy.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tinytc_py.cli import opt as opt_cli
from tinytc_py.cli import tinytc as tinytc_cli
from tinytc_py.cli import upgrade as upgrade_cli
from tinytc_py.errors import CompilationError, Status
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.enums import OptFlag
from tinytc_py.text.dialect import LEGACY_HINT, looks_legacy, parse
from tinytc_py.text.printer import print_prog
from tinytc_py.text.upgrade import upgrade

ROOT = Path(__file__).resolve().parents[1]

LEGACY = """; scale a batch
func @scale(%A: group<memref<f32x8>>, %s: f32) {
    %0 = group_id ; the batch entry
    %1 = load %A[%0] : group<memref<f32x8>>
    foreach %i = 0, 8 {
        %v = load %1[%i] : memref<f32x8>
        %w = arith.mul %v, %s : f32
        store %w, %1[%i] : memref<f32x8>
    }
}
"""

CURRENT_BARRIER = """func @b() {
    barrier
}
"""


def error_of(text: str, **kwargs) -> CompilationError:
    with pytest.raises(CompilationError) as info:
        parse(text, CompilerContext(), "k.ir", **kwargs)
    return info.value


def test_dialect_legacy_and_auto_agree():
    legacy = print_prog(parse(LEGACY, dialect="legacy"))
    assert print_prog(parse(LEGACY)) == legacy
    assert "%A: group<memref<f32x8>x?>" in legacy
    assert "%0 = group_id.x : index" in legacy
    assert "%w = mul %v, %s : f32" in legacy


def test_dialect_current_rejects_legacy_text_at_its_location():
    err = error_of(LEGACY, dialect="current")
    assert err.status == Status.parse_error
    assert "k.ir:2.36: expected 'x' and the group size" in str(err)


def test_unknown_dialect():
    with pytest.raises(ValueError, match="unknown dialect 'v3'"):
        parse(LEGACY, dialect="v3")


def test_auto_detection_keeps_current_programs():
    """A current-language `barrier` has no fences; the legacy reading would add both, so the
    program must come from the current parser. Every example parses to what the current parser
    gives."""
    assert "barrier\n" in print_prog(parse(CURRENT_BARRIER))
    assert "barrier.global.local" in print_prog(parse(CURRENT_BARRIER, dialect="legacy"))
    for path in sorted((ROOT / "examples" / "ir").glob("*.ir")):
        text = path.read_text()
        assert print_prog(parse(text)) == print_prog(parse(text, dialect="current")), path


def test_flag_legacy_language_selects_the_legacy_reading():
    ctx = CompilerContext()
    ctx.set_optimization_flag(OptFlag.legacy_language, 1)
    assert "barrier.global.local" in print_prog(parse(CURRENT_BARRIER, ctx))


def test_hint_when_legacy_looking_text_fails():
    text = LEGACY.replace("%w = arith.mul %v, %s", "%w = arith.mul %v, %t")
    assert looks_legacy(text) and not looks_legacy(CURRENT_BARRIER)
    err = error_of(text)
    message = str(err)
    assert "k.ir:2.36: expected 'x' and the group size" in message
    assert message.endswith(f"hint: {LEGACY_HINT}")
    legacy = str(error_of(text, dialect="legacy"))
    assert "k.ir:7.28-29: undefined identifier %t" in legacy
    assert "hint" not in legacy


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "gemm.n.n 1.0, %A, %A, 0.0, %A : f32, memref<f32x4x4>, memref<f32x4x8>, f32, "
            "memref<f32x4x4>",
            "k.ir:2.59-73: type annotation memref<f32x4x8> does not match the operand's "
            "type memref<f32x4x4>",
        ),
        (
            "%x = load %A[0, 1] : memref<f32x6x4>",
            "k.ir:2.26-40: type annotation memref<f32x6x4> does not match the operand's "
            "type memref<f32x4x4>",
        ),
        (
            "%n = size %A[0] : memref<f32x6x4>",
            "k.ir:2.23-37: type annotation memref<f32x6x4> does not match the operand's "
            "type memref<f32x4x4>",
        ),
        (
            "%x = arith.add %s, 1.5 : i32",
            "k.ir:2.24-26: Type of constant does not match type or returned value (floating constant does not match",
        ),
        ("%x = arith.foo %s, %s : i32", "k.ir:2.10-18: expected one of the modifiers"),
        ("%x = cmp.lt %s : i32", "k.ir:2.20: expected ','"),
        ("axpby.n.t.t 1.0, %A, 0.0, %A", "k.ir:2.5-15: unexpected modifiers '.n.t.t'"),
        ("gemm.t.atomic 1.0, %A, %A, 1.0, %A", "k.ir:2.5-17: expected 2 transposes"),
        (
            "%x = cast %s : i32 -> memref<f32>",
            "k.ir:2.10-37: Expected number type (cast result must be a number type",
        ),
        (
            "for %i = 0, 4 : f32 {\n}",
            "k.ir:2.21-23: the loop type must be an integer type, not f32",
        ),
        (
            "%v = alloca -> memref<f32x?>",
            "k.ir:2.10-32: Invalid shape (alloca needs a static shape",
        ),
        (
            "%v = subview %A[1:?,:,:] : memref<f32x4x4>",
            "k.ir:2.10-27: more slices than modes",
        ),
        (
            "%v = subview %A[1:0,:] : memref<f32x4x4>",
            "k.ir:2.23: Static offset and size must be non-negative or dynamic (?) (slice size must be positive",
        ),
        (
            "%v = expand %A[0 -> 3x?] : memref<f32x4x4>",
            "k.ir:2.10-46: Invalid shape (expand shape does not divide mode size 4",
        ),
        ("yield 1, 2 : i32", "k.ir:2.5-20: expected one type per yielded value"),
    ],
)
def test_located_errors_in_legacy_input(line, expected):
    text = f"func @k(%A: memref<f32x4x4>, %s: i32) {{\n    {line}\n}}\n"
    assert expected in str(error_of(text, dialect="legacy"))


def test_upgrade_keeps_names_comments_and_notes_signature_changes():
    result = upgrade(LEGACY, "scale.ir")
    text = result.text
    assert text.startswith("; upgraded from scale.ir (legacy tensor language) by tinytc-upgrade\n")
    assert "; note: 2.17: a legacy group without size is read as a group of dynamic size" in text
    assert "; scale a batch\nfunc @scale(%A: group<memref<f32x8>x?>, %s: f32) {" in text
    assert "    %0 = group_id.x : index ; the batch entry\n" in text
    assert "        store %w, %1[%i]\n" in text
    assert [(loc.begin.line, loc.begin.column) for loc, _ in result.notes] == [(2, 17)]
    # the upgrade is current-language text that reads back to the same program
    assert print_prog(parse(text, dialect="current")) == print_prog(parse(LEGACY))


@pytest.mark.parametrize("separator", ["\r", "\x0c", "\u2028"], ids=["cr", "ff", "ls"])
def test_upgrade_numbers_comment_lines_as_the_lexer_does(separator):
    """Only "\n" starts a line (str.splitlines also splits at these): a comment holding one
    stays whole and the comments after it stay with their instructions."""
    legacy = LEGACY.replace("; scale a batch", f"; scale {separator} a batch")
    text = upgrade(legacy, "scale.ir").text
    assert f"; scale {separator} a batch\nfunc @scale(" in text
    assert "    %0 = group_id.x : index ; the batch entry\n" in text


def test_upgrade_of_crlf_text_keeps_its_comments_without_the_carriage_return():
    text = upgrade(LEGACY.replace("\n", "\r\n"), "scale.ir").text
    assert "; scale a batch\nfunc @scale(" in text
    assert "    %0 = group_id.x : index ; the batch entry\n" in text
    assert "\r" not in text


def test_upgrade_of_a_sized_group_has_no_note():
    text = (ROOT / "tests" / "exec" / "yateto" / "fused_gemms.ir").read_text()
    result = upgrade(text, "f.ir")
    assert result.notes == []
    assert "; note" not in result.text


def test_upgrade_cli(tmp_path, capsys):
    src = tmp_path / "scale.ir"
    src.write_text(LEGACY)
    out = tmp_path / "scale.up.ir"
    assert upgrade_cli.main([str(src), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"{src}:2.17-36: note: a legacy group without size" in err
    assert out.read_text() == upgrade(LEGACY, str(src)).text
    bad = tmp_path / "bad.ir"
    bad.write_text("func @k() {\n    %0 = group_id.y\n}\n")
    assert upgrade_cli.main([str(bad)]) == 1
    assert f"{bad}:3.1: expected ':'" in capsys.readouterr().err


def test_tinytc_and_opt_read_legacy_text(tmp_path, capsys):
    src = tmp_path / "scale.ir"
    src.write_text(LEGACY)
    spv = tmp_path / "scale.spv"
    assert tinytc_cli.main(["--legacy", str(src), "-o", str(spv)]) == 0
    assert spv.read_bytes()[:4] == bytes.fromhex("03022307")
    assert opt_cli.main([str(src)]) == 0  # auto-detected
    assert "foreach (%i)=(" in capsys.readouterr().out
    barrier = tmp_path / "b.ir"
    barrier.write_text(CURRENT_BARRIER)
    assert opt_cli.main(["--legacy", str(barrier)]) == 0
    assert "barrier.global.local" in capsys.readouterr().out
