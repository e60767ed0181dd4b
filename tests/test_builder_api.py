"""The Python builder as a user meets it: real signatures generated from the instruction table,
positional integer parameters (`size(x, 0)`), `DYNAMIC` and None for '?', and errors located
at the user's line (file, line and columns of the call, with the line quoted)."""

from __future__ import annotations

import inspect
import keyword
import sys
from pathlib import Path

import pytest

import tinytc_py
from tinytc_py import DYNAMIC, CompilationError, Status
from tinytc_py.errors import Location, Position
from tinytc_py.ir.builder import IRBuilder
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.ops import INSTRUCTIONS
from tinytc_py.passes.pass_builder import PassBuilder
from tinytc_py.text.printer import print_prog


def _method_name(mnemonic: str) -> str:
    name = INSTRUCTIONS[mnemonic].spec.python_name
    return name + "_" if keyword.iskeyword(name) else name


@pytest.mark.parametrize("mnemonic", sorted(INSTRUCTIONS))
def test_every_instruction_has_a_method_with_its_parameters(mnemonic):
    spec = INSTRUCTIONS[mnemonic].spec
    method = getattr(IRBuilder, _method_name(mnemonic))
    params = inspect.signature(method).parameters
    kinds = {p.kind for p in params.values()}
    assert inspect.Parameter.VAR_KEYWORD not in kinds
    if method.__qualname__.startswith("IRBuilder."):
        return  # hand-written (regions, views, constant): parameters of its own
    names = [n for n in params if n != "self"]
    py = [n + "_" if keyword.iskeyword(n) else n for n, _ in spec.operand_slots]
    assert names[: len(py)] == py  # operands first, in the table's order
    for prop in spec.props:
        p = params[prop.name + "_" if keyword.iskeyword(prop.name) else prop.name]
        assert (p.default is inspect.Parameter.empty) == (prop.default is None)
    assert ("ty" in params) == (spec.result == "result")
    assert {"loc", "attrs"} <= set(params)


def test_positional_integer_parameters():
    b = IRBuilder()
    ctx = b.ctx
    with b.function("k", [ctx.memref(ctx.f32, [DYNAMIC, 4, DYNAMIC])], ["A"]) as f:
        (a,) = f.params
        m = b.size(a, 0, name="m")
        n = b.size(a, 2)
        assert m.type is ctx.index and n.type is ctx.index
        b.fuse(a, 1, 2, ctx.memref(ctx.f32, [DYNAMIC, DYNAMIC]))
    text = print_prog(b.prog)
    assert "%m = size %A[0] : index" in text
    assert "size %A[2] : index" in text
    assert "fuse %A[1,2] : memref<f32x?x?>" in text


def test_a_type_in_place_of_an_integer_parameter_is_a_clear_error():
    b = IRBuilder()
    ctx = b.ctx
    with b.function("k", [ctx.memref(ctx.f32, [8])]) as f:
        (a,) = f.params
        with pytest.raises(CompilationError) as info:
            b.size(a, ctx.index)  # the old order: the type where the mode goes
        assert info.value.status == Status.invalid_arguments
        assert "size: 'mode' must be an int, got the type index" in str(info.value)
        with pytest.raises(CompilationError, match="the result type `ty` must be a type, got 3"):
            b.size(a, 0, 3)
        assert not a.uses


def test_dynamic_and_none_mean_a_run_time_size():
    ctx = CompilerContext()
    assert tinytc_py.DYNAMIC == DYNAMIC == -(2**63)
    dyn = ctx.memref(ctx.f32, [DYNAMIC, DYNAMIC])
    assert ctx.memref(ctx.f32, [None, None]) is dyn
    assert str(dyn) == "memref<f32x?x?>"
    assert str(ctx.memref(ctx.f64, [4, None], [1, None])) == "memref<f64x4x?,strided<1,?>>"
    assert str(ctx.group(dyn, None, None)) == "group<memref<f32x?x?>x?, offset: ?>"
    for bad in ([1.5], ["?"], [True]):
        with pytest.raises(CompilationError) as info:
            ctx.memref(ctx.f32, bad)
        assert info.value.status == Status.ir_invalid_shape
        assert f"mode size must be an int, DYNAMIC or None ('?'), got {bad[0]!r}" in str(info.value)
    with pytest.raises(CompilationError) as info:
        ctx.memref(ctx.f32, [4], [0.5])
    assert info.value.status == Status.ir_invalid_stride


def test_errors_are_located_at_the_callers_line():
    b = IRBuilder()
    ctx = b.ctx
    with b.function("k", [ctx.f32, ctx.i32], ["x", "k"]) as f:
        x, k = f.params
        line = sys._getframe().f_lineno + 2
        with pytest.raises(CompilationError) as info:
            r = b.add(x, k)  # noqa: F841
    err = info.value
    assert err.status == Status.ir_number_mismatch
    begin, end = err.location.begin, err.location.end
    assert (begin.line, end.line) == (line, line)
    source = Path(__file__).read_text().splitlines()[line - 1]
    assert source[begin.column - 1 : end.column - 1] == "b.add(x, k)"
    message = str(err).splitlines()
    assert message[0] == (
        f"{__file__}:{line}.{begin.column}-{end.column - 1}: "
        "Number type mismatch (operand types differ (f32 vs i32))"
    )
    assert message[1] == source
    assert message[2].strip() == "~" * len("b.add(x, k)")


def test_instructions_are_located_where_they_were_built():
    """Also without an error: the location is kept for later diagnostics, e.g. an error of a
    region's end that the `with` block reports."""
    b = IRBuilder()
    ctx = b.ctx
    with pytest.raises(CompilationError) as info, b.function("k", [ctx.index]) as f:
        (n,) = f.params
        line = sys._getframe().f_lineno + 1
        loop = b.for_(n, n, init=[b.constant(1.0, ctx.f32)])
        with loop:
            pass  # no yield of the loop-carried value
    assert loop.inst.loc.begin.line == line
    assert info.value.location.begin.line == line
    assert str(info.value).startswith(f"{__file__}:{line}.")


@pytest.mark.parametrize("builder", [IRBuilder, PassBuilder])
def test_a_loop_with_a_non_value_init_is_a_located_error(builder):
    """PassBuilder.for_ overrides IRBuilder.for_: a non-value among the loop-carried values
    is the same CompilationError (not an AttributeError or TypeError from its `.type`)."""
    ctx = CompilerContext()
    b = builder(ctx)
    where = Location(Position(0, 3, 5), Position(0, 3, 9))
    with pytest.raises(CompilationError) as info, b.function("k", [ctx.index]) as f:
        (n,) = f.params
        b.for_(n, n, init=[1.0], loc=where)
    assert info.value.status is Status.invalid_arguments
    assert info.value.what == "Invalid arguments passed to function (expected a value, got 1.0)"
    assert info.value.loc == where


def test_pass_builder_keeps_locations_unknown():
    """A pass's instructions are located where the pass says, never at the pass's own line."""
    ctx = CompilerContext()
    b = PassBuilder(ctx)
    with b.function("k", [ctx.f32]) as f:
        (x,) = f.params
        y = b.add(x, x)
        z = b.add(x, x, loc=f.func.loc)
    assert y.defining_inst.loc.begin.line == 0
    assert z.defining_inst.loc == f.func.loc
