"""Resource limits: programs nested 1 000 deep, with 10^5 instructions, with constants and shapes
near 2^63 are compiled (to SPIR-V that passes spirv-val: compile_to_spirv validates every module)
or rejected with a located error; nothing else escapes (no RecursionError, no ValueError).
Nesting is limited to MAX_NESTING levels (ir/nesting.py) by the parser, the builder and every
entry point that takes a program (passes, compile, print)."""

from __future__ import annotations

import pytest

from tinytc_py.compiler import compile_to_spirv
from tinytc_py.errors import CompilationError, Position, Status
from tinytc_py.ir.builder import IRBuilder
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.nesting import MAX_NESTING
from tinytc_py.ir.ops import INSTRUCTIONS
from tinytc_py.passes.registry import run_function_pass
from tinytc_py.text.dialect import parse
from tinytc_py.text.printer import print_prog

I64_MAX = 2**63 - 1


def nested_loops(depth: int) -> str:
    """`depth` nested for loops around a store; loop k (from 1) opens on line k + 3."""
    head = "func @k(%m: memref<f32>, %x: f32) {\n  %c0 = constant 0 : index\n"
    head += "  %c1 = constant 1 : index\n"
    loops = "".join(f"  for %i{k} = %c0, %c1 {{\n" for k in range(depth))
    return head + loops + "  store %x, %m[]\n" + "  }\n" * depth + "}\n"


def rejected(src: str) -> CompilationError:
    with pytest.raises(CompilationError) as info:
        parse(src, name="limits.ir")
    return info.value


# ---- nesting ------------------------------------------------------------------------------------


def test_deepest_allowed_nesting_compiles_and_round_trips():
    prog = parse(nested_loops(MAX_NESTING - 1))
    text = print_prog(prog)
    assert print_prog(parse(text)) == text
    assert text.count("for %") == MAX_NESTING - 1
    assert compile_to_spirv(prog).kernels["k"].name == "k"


@pytest.mark.parametrize("depth", [MAX_NESTING, 1000, 100_000])
def test_deep_region_nesting_is_a_located_error(depth):
    err = rejected(nested_loops(depth))
    assert err.detail == f"regions nest deeper than {MAX_NESTING} levels"
    # the region that opens level MAX_NESTING + 1: the `{` of loop number MAX_NESTING
    line = MAX_NESTING + 3
    column = nested_loops(depth).splitlines()[line - 1].index("{") + 1
    assert err.loc.begin == Position(1, line, column)
    assert str(err).startswith(f"limits.ir:{line}.{column}: Compilation error (regions nest")


@pytest.mark.parametrize("open_, close", [("[", "]"), ("{a=", "}")])
def test_deep_attribute_nesting_is_a_located_error(open_, close):
    src = "func @k() attributes{a=" + open_ * 1000 + "1" + close * 1000 + "} {\n}\n"
    err = rejected(src)
    assert err.detail == f"attributes nest deeper than {MAX_NESTING} levels"
    column = len("func @k() attributes{a=") + len(open_) * MAX_NESTING + 1
    assert err.loc.begin == Position(1, 1, column)


def build_nested(ctx: CompilerContext, depth: int) -> IRBuilder:
    """`depth` nested for loops over [%lb, %ub), built top-down with the Python builder."""
    b = IRBuilder(ctx)
    with b.function("k", [ctx.index, ctx.index]) as f:
        scopes = []
        for _ in range(depth):
            scope = b.for_(*f.params)
            scope.__enter__()
            scopes.append(scope)
        for scope in reversed(scopes):
            scope.__exit__(None, None, None)
    return b


def test_builder_stops_at_the_nesting_limit():
    ctx = CompilerContext()
    assert build_nested(ctx, MAX_NESTING - 1).prog.funcs[0].name == "k"
    with pytest.raises(CompilationError) as info:
        build_nested(ctx, 1000)
    assert info.value.detail == f"regions nest deeper than {MAX_NESTING} levels"


def test_program_nested_bottom_up_is_rejected_by_passes_compile_and_print():
    """Region instructions put into each other from the inside out (as C API hosts may do) are
    only seen once complete: the entry points check the depth iteratively."""
    ctx = CompilerContext()
    b = build_nested(ctx, 1)
    func = b.prog.funcs[0]
    bounds = {"from": func.params[0], "to": func.params[1], "step": None, "iter_init": []}
    outer = func.body.insts[0]
    for _ in range(1000):
        inner = outer
        outer = INSTRUCTIONS["for"](bounds, None, [], inner.loc)
        inner.parent.insts.remove(inner)
        outer.regions[0].append(inner)
        func.body.append(outer)
    for action in (
        lambda: compile_to_spirv(b.prog),
        lambda: run_function_pass("check-ir", b.prog),
        lambda: print_prog(b.prog),
    ):
        with pytest.raises(CompilationError) as info:
            action()
        assert info.value.detail == f"regions nest deeper than {MAX_NESTING} levels"


# ---- size ---------------------------------------------------------------------------------------


def test_hundred_thousand_instructions_compile():
    n = 100_000
    lines = ["func @k(%a: memref<f32>, %p: f32) {", "  %x0 = add %p, %p : f32"]
    lines += [f"  %x{i} = add %x{i - 1}, %p : f32" for i in range(1, n)]
    lines += [f"  store %x{n - 1}, %a[]", "}"]
    binary = compile_to_spirv(parse("\n".join(lines)))
    assert len(binary.data) > 16 * n  # every add is an OpFAdd of 5 words


# ---- huge numbers -------------------------------------------------------------------------------

COMPILED = {
    "i64 max": f"func @k(%a: memref<i64>) {{\n  %c = constant {I64_MAX} : i64\n  store %c, %a[]\n}}",
    "shape 2^63-1": f"func @k(%a: memref<f32x{I64_MAX}>, %p: f32) {{\n"
    "  %c = constant 5 : index\n  store %p, %a[%c]\n}",
    "subview near 2^63": f"func @k(%a: memref<f32x?>, %p: f32) {{\n"
    f"  %s = subview %a[{I64_MAX - 10}:10] : memref<f32x10>\n"
    "  %c = constant 1 : index\n  store %p, %s[%c]\n}",
    "calc 2^63-1": f"$n = !calc({2**62 - 1} 2 * 1 +)\nfunc @k(%a: memref<f32x$n>) {{\n}}",
}

REJECTED = {
    # name: (source, message, (line, first column, end column))
    "i64 over": (
        f"func @k(%a: memref<i64>) {{\n  %c = constant {2**63} : i64\n}}",
        "integer constant out of range",
        (2, 17, 36),
    ),
    "100 000 digits": (
        "func @k(%a: memref<i64>) {\n  %c = constant " + "9" * 100_000 + " : i64\n}",
        "integer constant out of range",
        (2, 17, 100_017),
    ),
    "float over": (
        "func @k(%a: memref<f64>) {\n  %c = constant 1e400 : f64\n}",
        "floating constant out of range",
        (2, 17, 22),
    ),
    "shape 2^63": (
        f"func @k(%a: memref<f32x{2**63}>) {{\n}}",
        "integer constant out of range",
        (1, 24, 43),
    ),
    "canonical stride over 2^63": (
        f"func @k(%a: memref<f32x{2**62}x4x4>) {{\n}}",
        f"stride {2**64} exceeds 2^63-1",
        (1, 13, 48),
    ),
    "span over 2^63": (
        f"func @k(%a: memref<f32x{2**40}x{2**40}>) {{\n}}",
        f"memref spans {2**80} elements, more than 2^63-1",
        (1, 13, 52),
    ),
    "calc overflow": (
        f"$n = !calc({I64_MAX} 1 +)\nfunc @k() {{\n}}",
        "!calc result out of range",
        (1, 34, 35),
    ),
    "calc power": (
        "$n = !calc(2 100000000000 ^)\nfunc @k() {\n}",
        "!calc result out of range",
        (1, 27, 28),
    ),
}


@pytest.mark.parametrize("name", COMPILED)
def test_numbers_near_2_63_compile(name):
    assert compile_to_spirv(parse(COMPILED[name])).kernels["k"].name == "k"


@pytest.mark.parametrize("name", REJECTED)
def test_numbers_beyond_int64_are_located_errors(name):
    src, message, (line, first, end) = REJECTED[name]
    err = rejected(src)
    assert err.detail == message
    assert (err.loc.begin.line, err.loc.begin.column, err.loc.end.column) == (line, first, end)


def test_local_memory_beyond_32_bits_is_located_at_the_alloca():
    src = (
        "func @k(%p: f32) {\n"
        f"  %a = alloca : memref<f32x{2**62}, local>\n"
        "  %c = constant 1 : index\n"
        "  store %p, %a[%c]\n"
        "}\n"
    )
    with pytest.raises(CompilationError) as info:
        compile_to_spirv(parse(src))
    assert info.value.status is Status.out_of_range
    assert info.value.detail == (
        f"local memory of {2**64} bytes exceeds the 32-bit range of SPIR-V array lengths"
    )
    assert info.value.loc.begin.line == 2


PREFETCH = """func @k(%A: memref<bf16x64x64>, %B: memref<bf16x64x64>, %C: memref<f32x64x64>)
    attributes {{subgroup_size=16}} {{
 parallel {{
  %c0 = constant 0 : index
  %a = cooperative_matrix_load.t %A[%c0,%c0] : coopmatrix<bf16x16x32,matrix_a>
  %b = cooperative_matrix_load.n %B[%c0,%c0] : coopmatrix<bf16x32x8,matrix_b>
  %c = cooperative_matrix_load.n %C[%c0,%c0] : coopmatrix<f32x16x8,matrix_acc>
  %d = cooperative_matrix_mul_add %a, %b, %c : coopmatrix<bf16x16x8,matrix_acc>
  {prefetch}
  cooperative_matrix_store %d, %B[%c0,%c0]
 }}
}}
"""


def block_messages(prefetch: str) -> int:
    """The 2D block messages (raw_sends in the inline asm) of the DPAS kernel on pvc."""
    module = compile_to_spirv(parse(PREFETCH.format(prefetch=prefetch)))
    return module.data.count(b"raw_sends")


@pytest.mark.parametrize(("rows", "prefetched"), [(32, True), (2**31, False)])
def test_huge_prefetch_is_dropped_not_unrolled(rows, prefetched):
    """A prefetch is a hint: one over a region that would take millions of 2D block messages
    (found by `make fuzz`: it compiled for hours) is left out; a tile-sized one is kept."""
    without = block_messages("")
    count = block_messages(f"cooperative_matrix_prefetch 1, %A[%c0,%c0], {rows}, 32")
    assert (count > without) is prefetched
