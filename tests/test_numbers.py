"""Numeric literals of the tensor language: the integer range, signs, decimal and hexadecimal
floating constants, inf/nan, overflow errors with their locations, and the printer's shortest
round-trip formatting of doubles."""

from __future__ import annotations

import math
import random
import re
import struct
import sys
from fractions import Fraction

import pytest

from tinytc_py.errors import CompilationError, Status
from tinytc_py.text import lexer
from tinytc_py.text.dialect import parse
from tinytc_py.text.printer import format_float, print_prog

I64_MAX = 2**63 - 1


def program(value: str, ty: str) -> str:
    return f"func @k() {{\n    %0 = constant {value} : {ty}\n}}\n"


def constant(value: str, ty: str):
    """The parsed value of `constant value : ty`."""
    prog = parse(program(value, ty), name="num.ir")
    return prog.funcs[0].body.insts[0].props["value"]


def printed(value: str, ty: str) -> str:
    """The constant's text as printed back."""
    line = print_prog(parse(program(value, ty))).splitlines()[1]
    return line.split("constant ", 1)[1].rsplit(" :", 1)[0]


def error(src: str) -> CompilationError:
    with pytest.raises(CompilationError) as info:
        parse(src, name="num.ir")
    return info.value


def where(err: CompilationError) -> tuple[int, int, int, int]:
    b, e = err.loc.begin, err.loc.end
    return (b.line, b.column, e.line, e.column)


def same_double(a: float, b: float) -> bool:
    return struct.pack("<d", a) == struct.pack("<d", b)


# ---- integers -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text, value", [(str(I64_MAX), I64_MAX), (str(-I64_MAX), -I64_MAX)])
def test_integer_limits_accepted(text, value):
    assert constant(text, "i64") == value
    assert printed(text, "i64") == text
    assert constant(text, "index") == value


@pytest.mark.parametrize("text", [str(2**63), str(-(2**63)), str(2**64), "99999999999999999999999"])
def test_integer_limits_rejected(text):
    err = error(program(text, "i64"))
    assert err.status is Status.parse_error
    assert err.what == "integer constant out of range"
    assert where(err) == (2, 19, 2, 19 + len(text))
    assert (
        str(err).splitlines()[0] == f"num.ir:2.19-{18 + len(text)}: integer constant out of range"
    )


@pytest.mark.parametrize(
    "src, loc",
    [
        ("func @k(%a: memref<f32x9223372036854775808>) {\n}\n", (1, 24, 1, 43)),
        ("func @k() attributes {subgroup_size = 9223372036854775808} {\n}\n", (1, 39, 1, 58)),
        ("$n = -9223372036854775808\n", (1, 6, 1, 26)),
        ("$n = !calc(9223372036854775808 1 -)\n", (1, 12, 1, 31)),
        (
            "func @k(%A: memref<f32x4>) {\n"
            "    %s = subview %A[9223372036854775808:1] : memref<f32x1>\n}\n",
            (2, 21, 2, 40),
        ),
    ],
)
def test_integer_out_of_range_in_other_places(src, loc):
    err = error(src)
    assert err.status is Status.parse_error
    assert err.what == "integer constant out of range"
    assert where(err) == loc


def test_leading_plus():
    assert constant("+5", "i32") == 5
    assert constant("+0", "i8") == 0
    assert constant("+1.5", "f32") == 1.5
    assert constant("+0x1p1", "f64") == 2.0
    assert constant("+.5e+1", "f64") == 5.0
    assert constant("+inf", "f64") == math.inf
    assert printed("+5", "i32") == "5"
    assert printed("+1.5", "f32") == "0x1.8p+0"


@pytest.mark.parametrize("text", ["--1", "+-1", "- 1", "0x10", "1_000"])
def test_not_integers(text):
    err = error(program(text, "i32"))
    assert err.status is Status.parse_error


def test_integer_helper():
    assert lexer.parse_integer_text("+7") == 7
    assert lexer.parse_integer_text(str(I64_MAX)) == I64_MAX
    assert lexer.parse_integer_text(str(-I64_MAX)) == -I64_MAX
    assert lexer.parse_integer_text(str(2**63)) is None
    assert lexer.parse_integer_text(str(-(2**63))) is None


# ---- floating constants -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, value",
    [
        ("0x1p3", 8.0),
        ("0x1.8p1", 3.0),
        ("0x.8p1", 1.0),
        ("-0x1p-2", -0.25),
        ("0x1.", 1.0),
        ("0x1.8", 1.5),
        ("0xA.Bp0", 10.6875),
        ("0x1P3", 8.0),
        ("0X1p3", 8.0),
        ("0x1p+3", 8.0),
        ("0x1.fffffffffffffp1023", 1.7976931348623157e308),
        ("0x1p-1074", 5e-324),
        ("0x1p0", 1.0),
    ],
)
def test_hex_floats(text, value):
    assert constant(text, "f64") == value


@pytest.mark.parametrize(
    "text, value",
    [
        ("1.", 1.0),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("1E3", 1000.0),
        ("1e+3", 1000.0),
        ("1.5e-3", 0.0015),
        ("1.e5", 1e5),
        ("-.25", -0.25),
        ("0.0", 0.0),
        ("00.5", 0.5),
        ("123456789.125", 123456789.125),
    ],
)
def test_decimal_floats(text, value):
    assert constant(text, "f64") == value


@pytest.mark.parametrize("text", ["1e", "0x1", ".", "0x.p1", "e3", "infinite", "1.5.5", "0x1p"])
def test_not_floats(text):
    err = error(program(text, "f64"))
    assert err.status is Status.parse_error


@pytest.mark.parametrize("ty", ["bf16", "f16", "f32", "f64"])
@pytest.mark.parametrize(
    "text, shown", [("inf", "inf"), ("-inf", "-inf"), ("+inf", "inf"), ("nan", "nan")]
)
def test_inf_nan_real(ty, text, shown):
    value = constant(text, ty)
    if shown == "nan":
        assert math.isnan(value)
    else:
        assert value == float(shown)
    assert printed(text, ty) == shown


@pytest.mark.parametrize("ty", ["c32", "c64"])
def test_inf_nan_complex(ty):
    re_part, im_part = constant("[inf, -inf]", ty)
    assert (re_part, im_part) == (math.inf, -math.inf)
    re_part, im_part = constant("[nan, +inf]", ty)
    assert math.isnan(re_part) and im_part == math.inf
    assert printed("[nan, 1e3]", ty) == "[nan,0x1.f4p+9]"
    assert printed("[-0.0, +inf]", ty) == "[-0x0p+0,inf]"


def test_integer_text_is_not_a_float_constant():
    err = error(program("1", "f32"))
    assert err.status is Status.ir_constant_mismatch
    err = error(program("1.0", "i32"))
    assert err.status is Status.ir_constant_mismatch
    err = error(program("inf", "index"))
    assert err.status is Status.ir_constant_mismatch


@pytest.mark.parametrize("text", ["1e999", "-1e999", "1.8e308", "0x1p1024", "-0x1.8p99999"])
def test_float_overflow_rejected(text):
    err = error(program(text, "f64"))
    assert err.status is Status.parse_error
    assert err.what == "floating constant out of range"
    assert where(err) == (2, 19, 2, 19 + len(text))


def test_float_overflow_in_complex_and_definition():
    err = error(program("[0.0, 1e999]", "c64"))
    assert err.what == "floating constant out of range"
    assert where(err) == (2, 25, 2, 30)
    err = error("$x = 1e400\n")
    assert err.what == "floating constant out of range"
    assert where(err) == (1, 6, 1, 11)


def test_underflow_rounds_to_zero():
    assert constant("1e-400", "f64") == 0.0
    assert constant("0x1p-1075", "f64") == 0.0


def test_float_helper():
    assert lexer.parse_float_text("0x1.8") == 1.5
    assert lexer.parse_float_text("-0x1p-2") == -0.25
    assert lexer.parse_float_text("1e999") is None
    assert lexer.parse_float_text("0x1p1024") is None
    assert same_double(lexer.parse_float_text("-0.0"), -0.0)
    assert math.isnan(lexer.parse_float_text("nan"))


# ---- printing -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, shown",
    [
        ("5e-324", "0x0.0000000000001p-1022"),
        ("4.9406564584124654e-324", "0x0.0000000000001p-1022"),
        ("1.7976931348623157e308", "0x1.fffffffffffffp+1023"),
        ("2.2250738585072014e-308", "0x1p-1022"),
        ("0.1", "0x1.999999999999ap-4"),
        ("0.30000000000000004", "0x1.3333333333334p-2"),
        ("-0.0", "-0x0p+0"),
        ("0.0", "0x0p+0"),
        ("1e16", "0x1.1c37937e08p+53"),
        ("123.0", "0x1.ecp+6"),
        ("0x1p3", "0x1p+3"),
        ("1e22", "0x1.0f0cf064dd592p+73"),
    ],
)
def test_print_tricky_doubles(text, shown):
    assert printed(text, "f64") == shown
    again = constant(shown, "f64")
    assert same_double(again, constant(text, "f64"))


def test_negative_zero_keeps_its_sign():
    assert math.copysign(1.0, constant("-0.0", "f64")) == -1.0
    assert math.copysign(1.0, constant("-0x0p0", "f32")) == -1.0
    re_part, im_part = constant("[-0.0, 0.0]", "c64")
    assert math.copysign(1.0, re_part) == -1.0 and math.copysign(1.0, im_part) == 1.0


def test_format_float_matches_grammar_and_round_trips():
    rng = random.Random(1234)
    samples = [
        struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(2000)
    ]
    samples += [0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 1.7976931348623157e308, 1e-5, 1e15, 2**53]
    for value in samples:
        if math.isnan(value):
            continue
        text = format_float(float(value))
        m = lexer.FLOAT.fullmatch(text)
        assert m is not None, text
        assert lexer.integer_end(text, 0) == 0, text  # not read as an integer constant
        assert same_double(lexer.parse_float_text(text), float(value)), text


@pytest.mark.parametrize(
    "value,text",
    [
        (0.0, "0x0p+0"),
        (-0.0, "-0x0p+0"),
        (1.0, "0x1p+0"),
        (-1.0, "-0x1p+0"),
        (0.5, "0x1p-1"),
        (1024.0, "0x1p+10"),
        (42.0, "0x1.5p+5"),
        (-3.0, "-0x1.8p+1"),
        (65504.0, "0x1.ffcp+15"),
        (0.1, "0x1.999999999999ap-4"),
        (1 / 3, "0x1.5555555555555p-2"),
        (1.7976931348623157e308, "0x1.fffffffffffffp+1023"),
        (2.2250738585072014e-308, "0x1p-1022"),  # the smallest normal double
        (2.225073858507201e-308, "0x0.fffffffffffffp-1022"),  # the largest subnormal
        (1e-310, "0x0.012688b70e62bp-1022"),
        (5e-324, "0x0.0000000000001p-1022"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        (math.nan, "nan"),
        (math.copysign(math.nan, -1.0), "-nan"),
    ],
)
def test_format_float_spelling(value, text):
    """Floating constants print as C's printf("%a") spells them with glibc (and so upstream
    tinytc's printer, through std::hexfloat): lowercase, no trailing zeros, a signed exponent,
    subnormals as 0x0.<13 digits>p-1022; inf and NaN keep their sign."""
    assert format_float(value) == text


HEX_FLOAT = re.compile(r"(-?)0x([01])(?:\.([0-9a-f]*[1-9a-f]))?p([+-](?:0|[1-9][0-9]*))")


def test_format_float_is_c_hexfloat():
    """Random doubles print in that form: a leading 1 and the double's binary exponent when
    normal, a leading 0 and exponent -1022 when subnormal, and digits that are the double's exact
    value."""
    rng = random.Random(99)
    samples = [
        struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(500)
    ]
    samples += [2.0**-1022, 2.0**-1074 * 3, -1e-310]
    for value in (v for v in samples if math.isfinite(v) and v != 0):
        text = format_float(value)
        m = HEX_FLOAT.fullmatch(text)
        assert m is not None, text
        sign, lead, frac, exp = m.groups(default="")
        assert (sign == "-") == (math.copysign(1.0, value) < 0), text
        if abs(value) >= sys.float_info.min:
            assert (lead, int(exp)) == ("1", math.frexp(value)[1] - 1), text
        else:
            assert (lead, exp) == ("0", "-1022"), text
        digits = Fraction(int(lead + frac, 16), 16 ** len(frac))
        assert digits * Fraction(2) ** int(exp) == Fraction(abs(value)), text


def test_print_parse_print_is_stable():
    src = """
func @k() {
    %a = constant 5e-324 : f64
    %b = constant 1.7976931348623157e308 : f64
    %c = constant 0.1 : f32
    %d = constant -0.0 : f64
    %e = constant 0x1.8p1 : f64
    %f = constant [0x.8p1, -1e-3] : c64
    %g = constant inf : f16
    %h = constant -inf : bf16
    %i = constant nan : f32
    %j = constant 9223372036854775807 : i64
    %k = constant -9223372036854775807 : index
    %l = constant +12 : i8
    %m = constant 1. : f64
    %n = constant .5 : f64
    %o = constant [nan, -inf] : c32
    %p = constant true : bool
}
"""
    first = print_prog(parse(src))
    second = print_prog(parse(first))
    assert first == second
    assert "%a = constant 0x0.0000000000001p-1022 : f64" in first
    assert "%b = constant 0x1.fffffffffffffp+1023 : f64" in first
    assert "%d = constant -0x0p+0 : f64" in first
    assert "%e = constant 0x1.8p+1 : f64" in first
    assert "%f = constant [0x1p+0,-0x1.0624dd2f1a9fcp-10] : c64" in first
    assert "%l = constant 12 : i8" in first
