"""The language extensions from Python: every extension row is marked in the instruction table,
documented and round-trip tested; the builder makes each one and prints what the parser reads;
the extensions flag rejects them (parser, builder, compiler) with a located ext_disabled error;
printf formats and global data are checked as docs/extensions.md says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tinytc_py.compiler import compile_to_spirv
from tinytc_py.errors import CompilationError, Location, Position, Status
from tinytc_py.ir.builder import IRBuilder
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.enums import OptFlag
from tinytc_py.ir.ops import INSTRUCTIONS
from tinytc_py.ir.printf_format import FormatError, check, conversions, decode
from tinytc_py.text.dialect import parse
from tinytc_py.text.printer import print_prog

ROOT = Path(__file__).resolve().parents[1]
EXTENSIONS = sorted(m for m, cls in INSTRUCTIONS.items() if cls.spec.extension)


def test_extension_rows():
    assert len(EXTENSIONS) == 28
    assert {"printf", "select", "bitcast", "global_ref", "fma", "work_group_broadcast"} <= set(
        EXTENSIONS
    )
    assert not INSTRUCTIONS["subgroup_broadcast"].spec.extension  # the base language stays


@pytest.mark.parametrize("mnemonic", EXTENSIONS)
def test_every_extension_is_documented_and_round_tripped(mnemonic):
    doc = (ROOT / "docs" / "extensions.md").read_text()
    assert re.search(rf"\b{mnemonic}\b", doc), f"{mnemonic} missing from docs/extensions.md"
    lit = "".join(p.read_text() for p in (ROOT / "tests/lit/parse").glob("ext-*.ir"))
    assert re.search(rf"= {mnemonic} |^\s*{mnemonic} ", lit, re.M), mnemonic


def build_all(ctx: CompilerContext) -> IRBuilder:
    b = IRBuilder(ctx)
    f32, i32 = ctx.f32, ctx.i32
    mt = ctx.memref(f32, [4])
    b.global_("tab", mt, [1.0, 2.0, 3.0, 4.0])
    with b.function("k", [f32, i32, ctx.bool], ["x", "n", "c"]) as fn:
        x, n, c = fn.params
        b.global_ref(mt, symbol="tab", name="t")
        s = b.select(c, x, x, name="s")
        b.bitcast(s, i32, name="bits")
        q = b.sqrt(s, name="q")
        b.fma(q, q, b.pow(q, x, name="p"), name="f")
        with b.parallel():
            y = b.subgroup_shuffle_down(x, n, name="y")
            r = b.work_group_reduce_max(y, name="r")
            b.work_group_broadcast(r, n, name="z")
            b.printf(args=[r, n], format="%f %d\\n")
    return b


TEXT = """\
global @tab : memref<f32x4> = dense<[0x1p+0, 0x1p+1, 0x1.8p+1, 0x1p+2]>

func @k(%x: f32, %n: i32, %c: bool) {
    %t = global_ref @tab : memref<f32x4>
    %s = select %c, %x, %x : f32
    %bits = bitcast %s : i32
    %q = sqrt %s : f32
    %p = pow %q, %x : f32
    %f = fma %q, %q, %p : f32
    parallel {
        %y = subgroup_shuffle_down %x, %n : f32
        %r = work_group_reduce_max %y : f32
        %z = work_group_broadcast %r, %n : f32
        printf "%f %d\\n", %r, %n
    }
}
"""


def test_builder_makes_every_kind_like_the_parser():
    b = build_all(CompilerContext())
    assert print_prog(b.prog) == TEXT
    assert print_prog(parse(TEXT)) == TEXT
    compile_to_spirv(b.prog)  # validates with spirv-val


def off_context() -> CompilerContext:
    ctx = CompilerContext()
    ctx.set_optimization_flag(OptFlag.extensions, 0)
    return ctx


def test_flag_off_rejects_in_the_parser_with_location():
    with pytest.raises(CompilationError) as info:
        parse(TEXT, off_context(), "p.ir")
    assert info.value.status is Status.ext_disabled
    assert str(info.value.loc) == "1.1-6"  # the global definition comes first
    text = TEXT.split("\n", 2)[2]  # without the global: the first instruction is global_ref
    with pytest.raises(CompilationError) as info:
        parse(text.replace("    %t = global_ref @tab : memref<f32x4>\n", ""), off_context())
    assert info.value.status is Status.ext_disabled
    assert str(info.value.loc) == "2.10-32"
    assert "'select' is a tinytc-py language extension" in info.value.what


def test_flag_off_rejects_in_the_builder():
    with pytest.raises(CompilationError) as info:
        build_all(off_context())
    assert info.value.status is Status.ext_disabled


def test_flag_turned_off_after_building_rejects_at_compile_time():
    ctx = CompilerContext()
    b = build_all(ctx)
    ctx.set_optimization_flag(OptFlag.extensions, 0)
    with pytest.raises(CompilationError) as info:
        compile_to_spirv(b.prog)
    assert info.value.status is Status.ext_disabled
    assert "'global'" in info.value.what  # the program's global data is checked first
    b.prog.globals.clear()
    with pytest.raises(CompilationError) as info:
        compile_to_spirv(b.prog)
    assert info.value.status is Status.ext_disabled
    assert "'global_ref'" in info.value.what


def test_flag_turned_off_rejects_unused_global_data():
    ctx = CompilerContext()
    b = IRBuilder(ctx)
    b.global_("tab", ctx.memref(ctx.f32, [2]), [1.0, 2.0])
    with b.function("k", []):
        pass
    compile_to_spirv(b.prog)
    ctx.set_optimization_flag(OptFlag.extensions, 0)
    with pytest.raises(CompilationError) as info:
        compile_to_spirv(b.prog)
    assert info.value.status is Status.ext_disabled
    assert "'global'" in info.value.what


def test_global_ref_needs_the_global():
    b = IRBuilder(CompilerContext())
    mt = b.ctx.memref(b.ctx.f32, [4])
    with pytest.raises(CompilationError) as info, b.function("k", []):
        b.global_ref(mt, symbol="missing")
    assert info.value.status is Status.ext_undefined_global


def test_builder_global_takes_python_numbers():
    """From Python, ints fill a floating global and real or complex numbers a complex one (as
    `IRBuilder.constant` takes them); the program prints the kinds the text asks for."""
    b = IRBuilder(CompilerContext())
    ctx = b.ctx
    b.global_("f", ctx.memref(ctx.f32, [2]), [1, 2.5])
    b.global_("z", ctx.memref(ctx.c64, [3]), [1, 0.5, 2 - 1j])
    assert b.prog.globals["f"].values == (1.0, 2.5)
    assert b.prog.globals["z"].values == ((1.0, 0.0), (0.5, 0.0), (2.0, -1.0))
    text = print_prog(b.prog)
    assert "global @f : memref<f32x2> = dense<[0x1p+0, 0x1.4p+1]>" in text
    assert "global @z : memref<c64x3> = dense<[[0x1p+0,0x0p+0], [0x1p-1,0x0p+0]" in text
    assert print_prog(parse(text, CompilerContext())) == text


@pytest.mark.parametrize(
    ("element", "values", "detail"),
    [
        ("i32", [1, 2.5], "value 1: floating constant does not match type i32"),
        ("i16", [1j, 2], "value 0: complex constant does not match type i16"),
        ("f32", [1.0, True], "value 1 is a boolean, not a number"),
    ],
)
def test_builder_global_rejects_the_wrong_kind(element, values, detail):
    b = IRBuilder(CompilerContext())
    mt = b.ctx.memref(getattr(b.ctx, element), [2])
    loc = Location(Position(0, 3, 5), Position(0, 3, 9))
    with pytest.raises(CompilationError) as info:
        b.global_("g", mt, values, loc=loc)
    assert info.value.status is Status.ext_invalid_global
    assert detail in info.value.what
    assert info.value.loc == loc
    assert "g" not in b.prog.globals


def test_builder_global_and_function_names_are_unique():
    """A global may not take a function's name, nor a function a global's (either order)."""
    b = IRBuilder(CompilerContext())
    mt = b.ctx.memref(b.ctx.f32, [1])
    here = Location(Position(0, 2, 1), Position(0, 2, 8))
    with b.function("f", [], loc=here):
        pass
    with pytest.raises(CompilationError) as info:
        b.global_("f", mt, [1.0], loc=here)
    assert info.value.status is Status.ext_global_redefined
    assert "@f is already defined as a function" in info.value.what
    assert info.value.loc == here and "f" not in b.prog.globals
    b.global_("g", mt, [1.0])
    with pytest.raises(CompilationError) as info, b.function("g", [], loc=here):
        pass
    assert info.value.status is Status.ext_global_redefined
    assert "@g is already defined as a global" in info.value.what
    assert info.value.loc == here
    assert [f.name for f in b.prog.funcs] == ["f"]


@pytest.mark.parametrize(
    ("fmt", "specs"),
    [
        ("plain %% text", []),
        (
            "%d %5.2f %-08lx %hhu %hd %.3e %c %G %a",
            [
                ("d", None),
                ("f", None),
                ("x", "l"),
                ("u", "hh"),
                ("d", "h"),
                ("e", None),
                ("c", None),
                ("G", None),
                ("a", None),
            ],
        ),
    ],
)
def test_printf_conversions(fmt, specs):
    assert conversions(fmt) == specs


def test_printf_escapes_and_errors():
    assert decode(r"a\n\t\\b") == "a\n\t\\b"
    ctx = CompilerContext()
    check("%ld %lu %hhd %c %f %e", [ctx.i64, ctx.index, ctx.i8, ctx.i32, ctx.bf16, ctx.f64])
    with pytest.raises(FormatError, match="expects i32"):
        check("%d", [ctx.i64])
    with pytest.raises(FormatError, match="1 conversion"):
        check("%d", [])
    for bad in (r"\x", "%s", "%hf", "%", "%5%"):
        with pytest.raises(FormatError):
            conversions(bad)
