"""Error reporting: the `name:line.col-col: <status headline> (<detail>)` line, the source excerpt with a tilde
range under the located columns, "defined here" notes for the values involved, multi-line
locations, the context's reporter callback, the C API status numbers, and tinytc-opt's exit
status and stderr."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tinytc_py.cli.opt import main as opt_main
from tinytc_py.errors import (
    CompilationError,
    Location,
    Position,
    Status,
    TinytcError,
    format_error,
    status_description,
)
from tinytc_py.ir.context import CompilerContext
from tinytc_py.passes.registry import get_pass
from tinytc_py.text.dialect import parse

MISMATCH = "func @k(%a: f32, %b: i32) {\n    %c = add %a, %b : f32\n}\n"


def fail(src: str, name: str = "e.ir", ctx: CompilerContext | None = None) -> CompilationError:
    with pytest.raises(CompilationError) as info:
        parse(src, ctx, name=name)
    return info.value


def caret_columns(line: str) -> tuple[int, int]:
    """1-based first column and exclusive end column of a `~~~` line."""
    first = len(line) - len(line.lstrip(" "))
    assert set(line[first:]) == {"~"}, line
    return first + 1, len(line) + 1


# ---- the message --------------------------------------------------------------------------------


def test_headline_excerpt_and_notes():
    err = fail(MISMATCH)
    assert err.status is Status.ir_number_mismatch
    assert str(err).splitlines() == [
        "e.ir:2.10-25: Number type mismatch (operand types differ (f32 vs i32))",
        "    %c = add %a, %b : f32",
        "         ~~~~~~~~~~~~~~~~",
        "e.ir:1.9-15: value defined here (%a)",
        "func @k(%a: f32, %b: i32) {",
        "        ~~~~~~~",
        "e.ir:1.18-24: value defined here (%b)",
        "func @k(%a: f32, %b: i32) {",
        "                 ~~~~~~~",
    ]


def test_located_columns_match_the_tildes():
    src = "func @k(%a: f32) {\n    %c = add %a, %undefined : f32\n}\n"
    err = fail(src)
    assert err.what == "undefined identifier %undefined"
    head, line, tildes = str(err).splitlines()
    assert head == "e.ir:2.18-27: undefined identifier %undefined"
    assert line == src.splitlines()[1]
    assert caret_columns(tildes) == (18, 28)
    assert line[17:27] == "%undefined"


def test_note_points_at_instruction_result_definition():
    src = (
        "func @k() {\n"
        "    %x = constant 1.0 : f32\n"
        "    %y = constant 2 : i32\n"
        "    %z = mul %x, %y : f32\n"
        "}\n"
    )
    lines = str(fail(src)).splitlines()
    assert lines[0] == "e.ir:4.10-25: Number type mismatch (operand types differ (f32 vs i32))"
    # as upstream: a result is located at its name, the instruction from its mnemonic on
    assert lines[3] == "e.ir:2.5-6: value defined here (%x)"
    assert lines[4] == "    %x = constant 1.0 : f32"
    assert caret_columns(lines[5]) == (5, 7)
    assert lines[6] == "e.ir:3.5-6: value defined here (%y)"
    assert caret_columns(lines[8]) == (5, 7)


def test_notes_for_region_parameters():
    src = (
        "func @k(%n: index) {\n"
        "    %c0 = constant 0 : index\n"
        "    for %i = %c0, %n {\n"
        "        %f = constant 1.0 : f32\n"
        "        %g = add %i, %f : f32\n"
        "    }\n"
        "}\n"
    )
    err = fail(src)
    lines = str(err).splitlines()
    assert lines[0].startswith("e.ir:5.14-29: Number type mismatch (")
    assert [str(v) for v in err.values] == ["%i", "%f"]
    assert lines[3] == "e.ir:3.9-10: value defined here (%i)"
    assert caret_columns(lines[5]) == (9, 11)


def test_multi_line_location():
    src = "func @k(%a: f32, %b: i32) {\n  %c = add %a,\n     %b : f32\n}\n"
    err = fail(src)
    assert (err.loc.begin.line, err.loc.begin.column) == (2, 8)
    assert (err.loc.end.line, err.loc.end.column) == (3, 14)
    head, line, tildes = str(err).splitlines()[:3]
    assert head == "e.ir:2.8-3.13: Number type mismatch (operand types differ (f32 vs i32))"
    assert line == "  %c = add %a,"
    # The excerpt shows the first line, marked from the start column to the end of that line.
    assert caret_columns(tildes) == (8, len(line) + 1)


def test_multi_line_location_formatting_directly():
    ctx = CompilerContext()
    sid = ctx.add_source("m.ir", "first line\nsecond line\nthird\n")
    loc = Location(Position(sid, 1, 7), Position(sid, 3, 3))
    assert str(loc) == "1.7-3.2"  # the last column is printed inclusively
    text = format_error(ctx, CompilationError(loc, Status.ir_invalid_shape, "spans lines"))
    assert text.splitlines() == [
        "m.ir:1.7-3.2: Invalid shape (spans lines)",
        "first line",
        "      ~~~~",
    ]


def test_single_column_and_empty_ranges_get_one_tilde():
    ctx = CompilerContext()
    sid = ctx.add_source("s.ir", "abc\n")
    for end in (2, 3):
        loc = Location(Position(sid, 1, 2), Position(sid, 1, end))
        lines = format_error(ctx, CompilationError(loc, Status.parse_error, "x")).splitlines()
        assert lines[2] == " ~"
    assert str(Location(Position(sid, 1, 2), Position(sid, 1, 3))) == "1.2"
    assert str(Location(Position(sid, 1, 2), Position(sid, 1, 4))) == "1.2-3"


def test_error_without_source_name():
    lines = str(fail(MISMATCH, name="")).splitlines()
    assert lines[0] == "2.10-25: Number type mismatch (operand types differ (f32 vs i32))"
    assert lines[3] == "1.9-15: value defined here (%a)"


def test_error_with_unknown_location_or_source():
    err = CompilationError(Location(), Status.ir_invalid_shape)
    assert str(err) == "<unknown>: Invalid shape"
    ctx = CompilerContext()
    loc = Location(Position(7, 1, 1), Position(7, 1, 4))
    assert format_error(ctx, CompilationError(loc, Status.parse_error, "lost")) == "1.1-3: lost"


def test_tabs_keep_columns_aligned():
    src = "func @k(%a: f32) {\n\t%c = add %a, %y : f32\n}\n"
    head, line, tildes = str(fail(src)).splitlines()
    assert head == "e.ir:2.15-16: undefined identifier %y"
    start, end = caret_columns(tildes)
    assert line[start - 1 : end - 1] == "%y"


@pytest.mark.parametrize(
    "separator", ["\r", "\x0c", "\x1c", "\x85", "\u2028"], ids=["cr", "ff", "fs", "nel", "ls"]
)
def test_only_newline_starts_a_quoted_line(separator):
    """The lexer starts a line only after "\n"; str.splitlines also splits at these, and the
    excerpt quoted the comment's tail instead of the located line."""
    src = f"func @k() {{ ; note {separator} here\n  %a = bogus\n}}\n"
    err = fail(src)
    head, line, tildes = str(err).split("\n")
    assert head == "e.ir:2.8: Unknown token ('bogus' is not an instruction)"
    assert line == "  %a = bogus"
    assert caret_columns(tildes)[0] == 8


def test_crlf_lines_are_quoted_without_their_carriage_return():
    src = "func @k(%a: f32) {\r\n    %c = add %a, %y : f32\r\n}\r\n"
    head, line, tildes = str(fail(src)).split("\n")
    assert head == "e.ir:2.18-19: undefined identifier %y"
    assert line == "    %c = add %a, %y : f32"
    start, end = caret_columns(tildes)
    assert line[start - 1 : end - 1] == "%y"


def test_errors_of_the_second_source_of_a_context():
    ctx = CompilerContext()
    parse("func @a() {\n}\n", ctx, name="one.ir")
    err = fail("\n\nfunc @b() {\n    %0 = constant 1.5 : i32\n}\n", name="two.ir", ctx=ctx)
    lines = str(err).splitlines()
    assert lines[0].startswith("two.ir:4.10-27: Type of constant does not match")
    assert err.status is Status.ir_constant_mismatch
    assert lines[1] == "    %0 = constant 1.5 : i32"


def test_preprocessor_and_lexer_errors_are_located():
    lines = str(fail("$n = !calc(4 0 /)\n")).splitlines()
    assert lines == [
        "e.ir:1.16: Division by zero detected (division by zero in !calc)",
        "$n = !calc(4 0 /)",
        " " * 15 + "~",
    ]
    lines = str(fail("func @k() {\n    %0 = constant 0x10 : i32\n}\n")).splitlines()
    assert lines[0] == "e.ir:2.19-22: expected constant"
    assert caret_columns(lines[2]) == (19, 23)


# ---- the reporter -------------------------------------------------------------------------------


def test_reporter_receives_the_same_text_and_location():
    ctx = CompilerContext()
    seen: list[tuple[str, Location]] = []
    ctx.reporter = lambda message, loc: seen.append((message, loc))
    err = fail(MISMATCH, ctx=ctx)
    assert len(seen) == 1
    message, loc = seen[0]
    assert message == str(err)
    assert loc == err.loc
    assert (loc.begin.line, loc.begin.column, loc.end.column) == (2, 10, 26)


def test_reporter_called_once_per_error_and_for_each_error():
    ctx = CompilerContext()
    seen: list[str] = []
    ctx.reporter = lambda message, loc: seen.append(message)
    err = fail("func @k() {\n    %x = foo\n}\n", ctx=ctx)
    ctx.report(err)  # reporting an already rendered error again does not call the reporter
    assert seen == [str(err)]
    fail("$a = 1\n$a = 2\n", ctx=ctx)
    assert len(seen) == 2
    assert seen[1].startswith("e.ir:2.1-6: $a is already defined")


def test_pass_errors_go_through_the_reporter():
    ctx = CompilerContext()
    seen: list[str] = []
    ctx.reporter = lambda message, loc: seen.append(message)
    prog = parse("func @k() {\n}\n", ctx)
    get_pass("check-ir").run(prog.funcs[0], ctx, sys.stdout)
    assert seen == []
    with pytest.raises(TinytcError) as info:
        get_pass("no-such-pass")
    assert info.value.status is Status.unknown_pass_name


# ---- status numbers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "status, number",
    [
        (Status.success, 0),
        (Status.invalid_arguments, 2),
        (Status.parse_error, 10),
        (Status.unknown_pass_name, 0x10),
        (Status.compute_runtime_error, 0x12),
        (Status.ir_out_of_bounds, 0x100),
        (Status.ir_incompatible_shapes, 0x102),
        (Status.ir_number_mismatch, 0x104),
        (Status.ir_forbidden_promotion, 0x12F),
        (Status.ir_value_still_has_uses, 0x139),
        (Status.ir_expected_array_attribute, 0x140),
        (Status.ir_unexpected_array_attribute_size, 0x146),
        (Status.ir_expected_non_scalar_memref, 0x150),
        (Status.ir_division_by_zero, 0x153),
        (Status.spirv_forbidden_forward_declaration, 0x1000),
        (Status.spirv_required_feature_unavailable, 0x1004),
        (Status.unknown, 0x7FFFFFFF),
    ],
)
def test_status_numbers_equal_the_c_api(status, number):
    assert int(status) == number
    assert Status(number) is status


def test_status_table_shape():
    assert len(Status) == 100  # TINYTC_ENUM_NUM_STATUS
    assert len({int(s) for s in Status}) == 100
    # upstream's texts, the headlines of its diagnostics
    assert status_description(Status.parse_error) == "Parse error"
    assert status_description(Status.unknown) == "Unknown status code"
    for status in Status:
        assert status_description(status)


def test_status_description_is_the_default_message():
    err = CompilationError(Location(), Status.ir_incompatible_shapes)
    assert err.what == "Incompatible tensor shapes"
    assert err.status == 0x102


# ---- tinytc-opt ---------------------------------------------------------------------------------


def test_opt_bad_file_exit_status_and_stderr(tmp_path, capsys):
    path = tmp_path / "bad.ir"
    path.write_text(MISMATCH)
    assert opt_main([str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[:3] == [
        f"{path}:2.10-25: Number type mismatch (operand types differ (f32 vs i32))",
        "    %c = add %a, %b : f32",
        "         ~~~~~~~~~~~~~~~~",
    ]
    assert f"{path}:1.18-24: value defined here (%b)" in err


def test_opt_good_file(tmp_path, capsys):
    path = tmp_path / "good.ir"
    path.write_text("$n = 4\nfunc @k(%a: memref<f32x$n>) {\n}\n")
    assert opt_main(["-p", "check-ir", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out == "func @k(%a: memref<f32x4>) {\n}\n"
    assert err == ""


def test_opt_unknown_pass_name(tmp_path, capsys):
    path = tmp_path / "good.ir"
    path.write_text("func @k() {\n}\n")
    assert opt_main(["-p", "no-such-pass", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip() == "tinytc-opt: unknown pass name 'no-such-pass'"


def test_opt_missing_file(tmp_path, capsys):
    assert opt_main([str(tmp_path / "missing.ir")]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "missing.ir" in err


def test_opt_as_a_process_reads_stdin():
    proc = subprocess.run(
        [sys.executable, "-m", "tinytc_py.cli.opt"],
        input="func @k() {\n    %0 = constant 9223372036854775808 : i64\n}\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.splitlines()[0] == "<stdin>:2.19-37: integer constant out of range"
