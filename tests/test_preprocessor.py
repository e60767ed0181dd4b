"""The preprocessor of the tensor language: `$variables` (constants, types, attributes) in every
place the reference allows, aliasing, region scoping, single assignment, use before definition,
and the `!calc` reverse-Polish calculator with its errors (message, status and location)."""

from __future__ import annotations

import pytest

from tinytc_py.errors import CompilationError, Status
from tinytc_py.text.dialect import parse
from tinytc_py.text.preprocessor import evaluate_rpn
from tinytc_py.text.printer import print_prog


def dump(src: str) -> str:
    return print_prog(parse(src, name="pp.ir"))


def body(src: str) -> list[str]:
    """The stripped instruction lines of the printed program (without func header / braces)."""
    return [
        line.strip()
        for line in dump(src).splitlines()
        if line.strip() not in ("", "}") and not line.startswith("func")
    ]


def error(src: str) -> CompilationError:
    with pytest.raises(CompilationError) as info:
        parse(src, name="pp.ir")
    return info.value


def where(err: CompilationError) -> tuple[int, int, int, int]:
    b, e = err.loc.begin, err.loc.end
    return (b.line, b.column, e.line, e.column)


def calc(expr: str) -> int:
    """The value of `!calc(expr)`, read back through an i64 constant."""
    src = f"$r = !calc({expr})\nfunc @k() {{\n    %0 = constant $r : i64\n}}\n"
    (line,) = body(src)
    return int(line.split("constant ")[1].split(" :")[0])


# ---- definitions in every allowed place ---------------------------------------------------------


def test_constants_int_float_bool():
    src = """
$i = 42
$neg = -7
$f = 1.5
$g = -0x1p-2
$b = true
$nb = false
func @k() {
    %0 = constant $i : i32
    %1 = constant $neg : i64
    %2 = constant $f : f32
    %3 = constant $g : f64
    %4 = constant $b : bool
    %5 = constant $nb : bool
    %6 = constant [$f, $g] : c64
}
"""
    assert body(src) == [
        "%0 = constant 42 : i32",
        "%1 = constant -7 : i64",
        "%2 = constant 0x1.8p+0 : f32",
        "%3 = constant -0x1p-2 : f64",
        "%4 = constant true : bool",
        "%5 = constant false : bool",
        "%6 = constant [0x1.8p+0,-0x1p-2] : c64",
    ]


def test_definitions_are_not_printed():
    out = dump("$a = 1\n$t = f32\nfunc @k(%x: $t) {\n    $b = 2\n}\n")
    assert "$" not in out
    assert out == "func @k(%x: f32) {\n}\n"


def test_types_everywhere():
    src = """
$ty = f32
$ity = index
$mt = memref<$ty x 4 x ?>
$gt = group<$mt x 8>
func @k(%a: $ty, %A: $mt, %G: $gt, %i: $ity) {
    %0 = constant 1.0 : $ty
    %1 = load %A[%i, %i] : $ty
    %2 = add %a, %1 : $ty
    %3 = load %G[%i] : $mt
    %4 = cast %2 : f64
}
"""
    out = dump(src)
    assert out.startswith(
        "func @k(%a: f32, %A: memref<f32x4x?>, %G: group<memref<f32x4x?>x8>, %i: index) {"
    )
    assert "%1 = load %A[%i,%i] : f32" in out
    assert "%3 = load %G[%i] : memref<f32x4x?>" in out


def test_shapes_strides_group_and_coopmatrix_parameters():
    src = """
$ty = f64
$M = 32
$N = 8
$ld = 40
$gs = 5
$off = 3
$cm = coopmatrix<$ty x $M x $N, matrix_acc>
func @k(%A: memref<$ty x $M x $N, strided<1, $ld>>, %B: memref<$ty x$M x$N>,
        %G: group<memref<$ty x $N> x $gs, offset: $off>, %L: memref<$ty x $M, local>) {
    parallel {
        %c0 = constant 0 : index
        %m = cooperative_matrix_load %A[%c0, %c0] : $cm
        %n = cooperative_matrix_load %B[%c0, %c0] : coopmatrix<$ty x $M x $N, matrix_acc>
    }
}
"""
    out = dump(src)
    assert out.startswith(
        "func @k(%A: memref<f64x32x8,strided<1,40>>, %B: memref<f64x32x8>, "
        "%G: group<memref<f64x8>x5, offset: 3>, %L: memref<f64x32,local>) {"
    )
    assert out.count(": coopmatrix<f64x32x8,matrix_acc>") == 2


def test_attributes_array_dictionary_string():
    src = """
$wgs = [32, 2]
$fattrs = {subgroup_size = 16, work_group_size = $wgs}
$gcd = [8, 4]
$pattrs = {alignment = 64, shape_gcd = $gcd}
$name = "user data"
$al = 32
func @k(%A: memref<f32x16x8> $pattrs, %B: memref<f32x16> {alignment = $al, "note" = $name})
        attributes $fattrs {
    $la = {alignment = 64}
    %l = alloca $la : memref<f32x16, local>
    %c0 = constant 0 : index
    %c4 = constant 4 : index
    $unroll = true
    for %i = %c0, %c4 {
    } attributes {unroll = $unroll}
}
"""
    out = dump(src)
    assert out.splitlines()[0] == (
        "func @k(%A: memref<f32x16x8> {alignment=64, shape_gcd=[8,4]}, "
        '%B: memref<f32x16> {alignment=32, "note"="user data"}) '
        "attributes{subgroup_size=16, work_group_size=[32,2]} {"
    )
    assert "%l = alloca {alignment=64} : memref<f32x16,local>" in out
    assert "} attributes{unroll=true}" in out


def test_integer_constants_of_instructions():
    src = """
$M = 16
$N = 8
$one = 1
$zero = 0
$tile = 16
func @k(%A: memref<f32x$M x $N>, %B: memref<f32x?x$N>) attributes {subgroup_size = 16} {
    %s = size %B[$one] : index
    %v = subview %A[$N:$N, $one] : memref<f32x$N>
    %w = subview %A[$zero, $one:$one] : memref<f32x$one, strided<$M>>
    %e = expand %v[$zero -> $one x $N] : memref<f32x$one x $N>
    %f = fuse %e[$zero, $one] : memref<f32x$N>
    %c0 = constant 0 : index
    foreach_tile (%i, %j) = (%c0, %c0), (%s, %s) as (%ti, %tj) <= ($tile, $N) {
    }
    parallel {
        %m = cooperative_matrix_load %A[%c0, %c0] : coopmatrix<f32x$M x $N, matrix_a>
        $last = !calc($M $N * 16 / 1 -)
        %x = cooperative_matrix_extract %m[$last] : f32
        cooperative_matrix_prefetch $one, %A[%c0, %c0], $M, $N
    }
}
"""
    assert body(src) == [
        "%s = size %B[1] : index",
        "%v = subview %A[8:8,1] : memref<f32x8>",
        "%w = subview %A[0,1:1] : memref<f32x1,strided<16>>",
        "%e = expand %v[0->1x8] : memref<f32x1x8>",
        "%f = fuse %e[0,1] : memref<f32x8>",
        "%c0 = constant 0 : index",
        "foreach_tile (%i,%j)=(%c0,%c0),(%s,%s) as (%ti,%tj)<=(16,8) {",
        "parallel {",
        "%m = cooperative_matrix_load %A[%c0,%c0] : coopmatrix<f32x16x8,matrix_a>",
        "%x = cooperative_matrix_extract %m[7] : f32",
        "cooperative_matrix_prefetch 1, %A[%c0,%c0], 16, 8",
    ]


def test_preprocessor_example_of_the_reference():
    src = """
$element_ty = f32
$chunk_size = 64
$chunk_ty = memref<$element_ty x $chunk_size>
func @k(%X: memref<f32x128>) {
    %x = subview %X[0:$chunk_size] : memref<$element_ty x $chunk_size>
    %y = subview %X[$chunk_size:$chunk_size] : $chunk_ty
}
"""
    assert body(src) == [
        "%x = subview %X[0:64] : memref<f32x64>",
        "%y = subview %X[64:64] : memref<f32x64>",
    ]


# ---- aliasing, scoping, single assignment -------------------------------------------------------


def test_aliasing():
    src = """
$a = 5
$b = $a
$c = $b
$t = i16
$u = $t
$d = {alignment = 16}
$e = $d
func @k(%A: memref<f32x$c> $e) {
    %0 = constant $c : $u
    %1 = constant !calc($b 1 +) : i32
}
"""
    with pytest.raises(CompilationError):
        # !calc is a definition right-hand side only, not a constant.
        parse(src, name="pp.ir")
    src = src.replace("    %1 = constant !calc($b 1 +) : i32\n", "")
    out = dump(src)
    assert out.startswith("func @k(%A: memref<f32x5> {alignment=16}) {")
    assert "%0 = constant 5 : i16" in out


def test_definition_visible_in_nested_regions():
    src = """
$g = 1
func @k(%c: bool) {
    $f = 2
    %c0 = constant 0 : index
    %c4 = constant 4 : index
    for %i = %c0, %c4 {
        $l = 3
        if %c {
            %0 = constant $g : i32
            %1 = constant $f : i32
            %2 = constant $l : i32
        } else {
            %3 = constant $l : i32
        }
        foreach (%j) = (%c0), (%c4) {
            %4 = constant $l : i64
        }
        parallel {
            %5 = constant $f : i64
        }
    }
}
"""
    out = dump(src)
    for text in (
        "constant 1 : i32",
        "constant 2 : i32",
        "constant 3 : i32",
        "constant 3 : i64",
        "constant 2 : i64",
    ):
        assert text in out


@pytest.mark.parametrize(
    "src, loc",
    [
        # defined in a for body, used after it
        (
            "func @k() {\n    %c0 = constant 0 : index\n    for %i = %c0, %c0 {\n"
            "        $v = 1\n    }\n    %1 = constant $v : i32\n}\n",
            (6, 19, 6, 21),
        ),
        # defined in a function, used in the next function
        (
            "func @a() {\n    $v = 1\n}\nfunc @b() {\n    %0 = constant $v : i32\n}\n",
            (5, 19, 5, 21),
        ),
        # defined in the then-branch, used in the else-branch
        (
            "func @k(%c: bool) {\n    if %c {\n        $v = 1\n    } else {\n"
            "        %0 = constant $v : i32\n    }\n}\n",
            (5, 23, 5, 25),
        ),
    ],
)
def test_definition_not_visible_after_region(src, loc):
    err = error(src)
    assert err.status is Status.parse_error
    assert err.what == "$v is used before its definition"
    assert where(err) == loc


def test_name_reusable_after_region_closes():
    src = """
func @a() {
    $v = 1
    %0 = constant $v : i32
}
$v = 2
func @b() {
    %c0 = constant 0 : index
    for %i = %c0, %c0 {
        $w = 3
        %0 = constant $w : i32
    }
    $w = 4
    %1 = constant $w : i32
    %2 = constant $v : i32
}
"""
    assert body(src) == [
        "%0 = constant 1 : i32",
        "%c0 = constant 0 : index",
        "for %i=%c0,%c0 {",
        "%0 = constant 3 : i32",
        "%1 = constant 4 : i32",
        "%2 = constant 2 : i32",
    ]


@pytest.mark.parametrize(
    "src, loc",
    [
        ("$a = 1\n$a = 2\n", (2, 1, 2, 7)),
        ("$a = 1\n$a = f32\n", (2, 1, 2, 9)),
        ("$a = 1\nfunc @k() {\n    $a = 2\n}\n", (3, 5, 3, 11)),
        ("func @k() {\n    $a = 1\n    $a = 1\n}\n", (3, 5, 3, 11)),
        (
            "func @k() {\n    $a = 1\n    %c = constant 0 : index\n"
            "    for %i = %c, %c {\n      $a = 2\n    }\n}\n",
            (5, 7, 5, 13),
        ),
        (
            "func @k() {\n    parallel {\n        $b = 1\n        parallel {\n"
            "            $b = [1]\n        }\n    }\n}\n",
            (5, 13, 5, 21),
        ),
    ],
)
def test_single_assignment(src, loc):
    err = error(src)
    assert err.status is Status.parse_error
    assert err.what.endswith("is already defined")
    assert where(err) == loc


@pytest.mark.parametrize(
    "src, loc",
    [
        ("func @k() {\n    %0 = constant $a : i32\n}\n$a = 3\n", (2, 19, 2, 21)),
        ("func @k(%x: $t) {\n}\n$t = f32\n", (1, 13, 1, 15)),
        ("func @k(%x: memref<f32x$n>) {\n}\n", (1, 24, 1, 26)),
        ("func @k() attributes $d {\n}\n", (1, 22, 1, 24)),
        ("func @k() {\n    %0 = constant $x : i32\n    $x = 1\n}\n", (2, 19, 2, 21)),
        ("$b = $a\n$a = 1\n", (1, 6, 1, 8)),
        ("$b = !calc($a 1 +)\n", (1, 12, 1, 14)),
    ],
)
def test_use_before_definition(src, loc):
    err = error(src)
    assert err.status is Status.parse_error
    assert err.what.endswith("is used before its definition")
    assert where(err) == loc


@pytest.mark.parametrize(
    "src, message, loc",
    [
        (
            "$t = f32\nfunc @k() {\n    %0 = constant $t : f32\n}\n",
            "expected constant",
            (3, 19, 3, 21),
        ),
        ("$n = 4\nfunc @k(%x: $n) {\n}\n", "expected a type", (2, 13, 2, 15)),
        (
            "$f = 1.5\nfunc @k(%x: memref<f32x$f>) {\n}\n",
            "expected integer constant",
            (2, 24, 2, 26),
        ),
        (
            '$s = "x"\nfunc @k() attributes $s {\n}\n',
            "expected dictionary attribute",
            (2, 22, 2, 24),
        ),
        ("$n = 4\nfunc @k(%x: memref<$n>) {\n}\n", "expected number type", (2, 20, 2, 22)),
        ("$a = foo\n", "unknown type 'foo'", (1, 6, 1, 9)),
        ("$ = 1\n", "expected compile-time variable ($name)", (1, 1, 1, 2)),
        ("$a 1\n", "expected '='", (1, 4, 1, 5)),
    ],
)
def test_wrong_kind_of_definition(src, message, loc):
    err = error(src)
    assert err.status is Status.parse_error
    assert err.what == message
    assert where(err) == loc


# ---- the calculator -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr, value",
    [
        ("7", 7),
        ("-7", -7),
        ("2 10 ^", 1024),
        ("-2 3 ^", -8),
        ("5 0 ^", 1),
        ("0 0 ^", 1),
        ("5 3 -", 2),
        ("3 5 -", -2),
        ("5 -3 -", 8),
        ("5 3 +", 8),
        ("-5 +3 +", -2),
        ("6 7 *", 42),
        ("-6 7 *", -42),
        ("7 2 /", 3),
        ("7 2 %", 1),
        ("3 9 min", 3),
        ("-3 -9 min", -9),
        ("3 9 max", 9),
        ("-3 -9 max", -3),
    ],
)
def test_calc_operators(expr, value):
    assert calc(expr) == value


@pytest.mark.parametrize(
    "a, b, quotient, remainder",
    [(7, 2, 3, 1), (-7, 2, -3, -1), (7, -2, -3, 1), (-7, -2, 3, -1), (-6, 3, -2, 0), (1, -5, 0, 1)],
)
def test_calc_truncating_division(a, b, quotient, remainder):
    """C semantics: the quotient truncates toward zero and a % b has the sign of a."""
    assert calc(f"{a} {b} /") == quotient
    assert calc(f"{a} {b} %") == remainder
    assert quotient * b + remainder == a


@pytest.mark.parametrize(
    "expr, value",
    [
        ("1 2 + 3 4 + *", 21),
        ("2 3 4 * +", 14),
        ("2 3 ^ 2 ^", 64),
        ("2 3 2 ^ ^", 512),
        ("100 7 3 - / 4 %", 1),
        ("1 2 max 3 max 4 min", 3),
        ("10 3 - 2 * 4 + 5 /", 3),
        ("2 62 ^ 1 - 2 * 1 +", 2**63 - 1),
    ],
)
def test_calc_nesting(expr, value):
    assert calc(expr) == value


def test_calc_with_variables_and_ceil_division_example():
    src = """
$a = 17
$b = 4
$c = !calc($a 1 - $b / 1 +)
$d = !calc($c $c *)
$e = $d
func @k(%A: memref<f32x$c x $e>) {
    $f = !calc($e $a max)
    %0 = constant $f : index
}
"""
    out = dump(src)
    assert out.startswith("func @k(%A: memref<f32x5x25>) {")
    assert "constant 25 : index" in out


def test_calc_is_free_form():
    src = "$c = !calc( 1\n  2 ; comment\n  + )\nfunc @k() {\n    %0 = constant $c : i32\n}\n"
    assert body(src) == ["%0 = constant 3 : i32"]


@pytest.mark.parametrize(
    "expr, loc",
    [("1 0 /", (1, 16, 1, 17)), ("1 0 %", (1, 16, 1, 17)), ("5 2 2 - /", (1, 20, 1, 21))],
)
def test_calc_division_by_zero(expr, loc):
    err = error(f"$a = !calc({expr})\n")
    assert err.status is Status.ir_division_by_zero
    assert err.detail == "division by zero in !calc"
    assert where(err) == loc


@pytest.mark.parametrize(
    "expr, message, loc",
    [
        ("1 +", "'+' needs two operands", (1, 14, 1, 15)),
        ("min", "'min' needs two operands", (1, 12, 1, 15)),
        ("1 2", "!calc expression must leave exactly one value", (1, 11, 1, 16)),
        ("", "!calc expression must leave exactly one value", (1, 11, 1, 13)),
        ("1 2 foo", "expected integer constant", (1, 16, 1, 19)),
        ("1.5 2 +", "expected integer constant", (1, 12, 1, 15)),
        ("true 1 +", "expected integer constant", (1, 12, 1, 16)),
        ("$t 2 +", "expected integer constant", (1, 12, 1, 14)),
        ("2 -1 ^", "negative exponent", (1, 17, 1, 18)),
        ("2 63 ^", "!calc result out of range", (1, 17, 1, 18)),
        ("10 1000000000 ^", "!calc result out of range", (1, 26, 1, 27)),
        ("2 62 ^ 2 *", "!calc result out of range", (1, 21, 1, 22)),
        ("9223372036854775807 1 +", "!calc result out of range", (1, 34, 1, 35)),
        ("9223372036854775808", "integer constant out of range", (1, 12, 1, 31)),
    ],
)
def test_calc_malformed(expr, message, loc):
    err = error(f"$t = f32\n$a = !calc({expr})\n".replace("$t = f32\n", "", "$t" not in expr))
    if "$t" in expr:
        loc = (loc[0] + 1, loc[1], loc[2] + 1, loc[3])
    assert err.status is Status.parse_error
    assert err.what == message
    assert where(err) == loc


def test_calc_unterminated():
    err = error("$a = !calc(1 2 +\n")
    assert err.status is Status.parse_error
    assert err.what == "expected ')'"
    assert (err.loc.begin.line, err.loc.begin.column) == (2, 1)
    err = error("$a = !calc 1 2 +)\n")
    assert err.what == "expected '('"
    assert where(err) == (1, 12, 1, 13)


def test_evaluate_rpn_directly():
    from tinytc_py.errors import UNKNOWN_LOCATION as U

    assert evaluate_rpn([(3, U), (4, U), ("-", U)], U) == -1
    with pytest.raises(CompilationError) as info:
        evaluate_rpn([(3, U), (0, U), ("%", U)], U)
    assert info.value.status is Status.ir_division_by_zero


def test_a_memref_type_spelt_with_a_variable_takes_its_scopes_value():
    # the same spelling in two functions, each with its own $n: the parser's memref-type memo
    # (text/lexer.py memref_spelling_end) must not take `memref<f32x$n>` for one type
    src = "".join(
        f"func @{name}(%x: memref<f32x16>) {{\n"
        f"    $n = {n}\n"
        f"    %v = subview %x[0:$n] : memref<f32x$n>\n"
        f"}}\n"
        for name, n in (("a", 4), ("b", 8))
    )
    out = dump(src)
    assert "memref<f32x4>" in out and "memref<f32x8>" in out
