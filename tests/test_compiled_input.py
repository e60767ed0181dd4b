"""Malformed input reaching the IR (ir/, compiled by mypyc when built) through the Python
builder, the context's type and attribute constructors and the C API keeps its located error.

mypyc checks every annotation at run time: an argument the user gave that contradicts an
annotation becomes a bare TypeError (in C: runtime_error) unless the IR declares such a
parameter as what it may really be and checks it itself. Each case here passes something of
the wrong kind where a compiled class or function receives it (an int for a type, a single
value for a list, an int for an enum member, a number where a memref or coopmatrix goes) and
asserts the status, the message and the location. The cases run on whatever is imported
(compiled when built, the sources with TINYTC_PURE_PYTHON=1): both must give the same errors."""

from __future__ import annotations

import os

import pytest

from tinytc_py import compiled
from tinytc_py.errors import CompilationError, Location, Position, Status
from tinytc_py.ir.builder import IRBuilder
from tinytc_py.ir.enums import AddressSpace, MatrixUse, ReduceMode
from tinytc_py.ir.ops import INSTRUCTIONS

HERE = os.path.abspath(__file__)
LOC = Location(Position(0, 7, 3), Position(0, 7, 9))  # where the context's errors must point


@pytest.mark.skipif(
    not os.path.isfile(os.path.join(compiled.BUILD_DIR, compiled.MANIFEST))
    or compiled.pure_python_asked(),
    reason="no compiled modules (make setup builds them) or TINYTC_PURE_PYTHON set",
)
def test_the_ir_is_compiled_when_built() -> None:
    """Otherwise the cases below would not test the compiled classes."""
    in_use, reason = compiled.status()
    assert in_use, reason
    import tinytc_py.ir.context
    import tinytc_py.ir.inst
    import tinytc_py.ir.ops.memory
    import tinytc_py.ir.region

    for module in (
        tinytc_py.ir.context,
        tinytc_py.ir.inst,
        tinytc_py.ir.ops.memory,
        tinytc_py.ir.region,
    ):
        assert module.__file__ is not None and module.__file__.endswith(".so"), module.__file__


# ---- the context's constructors (public API: users call ctx.memref(...) themselves) ---------

CONTEXT_CASES = {
    "memref element an int": (
        lambda ctx: ctx.memref(3, [4], loc=LOC),
        Status.ir_expected_number,
        "memref element must be a number type",
    ),
    "memref shape an int": (
        lambda ctx: ctx.memref(ctx.f32, 4, loc=LOC),
        Status.ir_invalid_shape,
        "mode sizes must be a sequence of ints, DYNAMIC or None ('?'), got 4",
    ),
    "memref address space an int": (
        lambda ctx: ctx.memref(ctx.f32, [4], None, 5, LOC),
        Status.invalid_arguments,
        "the address space must be of type AddressSpace, got 5",
    ),
    "coopmatrix component an int": (
        lambda ctx: ctx.coopmatrix(3, 8, 8, MatrixUse.a, LOC),
        Status.ir_expected_number,
        "coopmatrix component must be a number type",
    ),
    "coopmatrix rows None": (
        lambda ctx: ctx.coopmatrix(ctx.f32, None, 8, MatrixUse.a, LOC),
        Status.ir_invalid_shape,
        "coopmatrix rows and columns must be positive, got ?x8",
    ),
    "coopmatrix rows a float": (
        lambda ctx: ctx.coopmatrix(ctx.f32, 8.0, 8, MatrixUse.a, LOC),
        Status.ir_invalid_shape,
        "coopmatrix size must be an int, DYNAMIC or None ('?'), got 8.0",
    ),
    "coopmatrix use a string": (
        lambda ctx: ctx.coopmatrix(ctx.f32, 8, 8, "a", LOC),
        Status.invalid_arguments,
        "the matrix use must be of type MatrixUse, got 'a'",
    ),
    "group of an int": (
        lambda ctx: ctx.group(3, 4, loc=LOC),
        Status.ir_expected_memref,
        "group element must be a memref",
    ),
    "group size a string": (
        lambda ctx: ctx.group(ctx.memref(ctx.f32, [4]), "x", loc=LOC),
        Status.ir_invalid_shape,
        "group size must be an int, DYNAMIC or None ('?'), got 'x'",
    ),
    "dictionary entry an int": (
        lambda ctx: ctx.dictionary_attr({"unroll": 3}, LOC),
        Status.invalid_arguments,
        "a dictionary attribute's entry must be of type Attr, got ('unroll', 3)",
    ),
    "dictionary key an int": (
        lambda ctx: ctx.dictionary_attr({3: ctx.integer_attr(1)}, LOC),
        Status.ir_expected_string_attribute,
        "strings hold printable ASCII",
    ),
}


@pytest.mark.parametrize("case", sorted(CONTEXT_CASES))
def test_context_constructors_reject_arguments_of_the_wrong_kind(case: str) -> None:
    make, status, detail = CONTEXT_CASES[case]
    with pytest.raises(CompilationError) as info:
        make(IRBuilder().ctx)
    assert info.value.status == status
    assert detail in str(info.value)
    assert info.value.location == LOC


@pytest.mark.parametrize(
    ("make", "detail"),
    [
        (lambda ctx: ctx.number("f32"), "the number kind must be of type ScalarKind, got 'f32'"),
        (lambda ctx: ctx.integer_attr("8"), "an integer attribute must be of type int, got '8'"),
        (lambda ctx: ctx.array_attr([1]), "an array attribute's entry must be of type Attr, got 1"),
        (
            lambda ctx: ctx.set_optimization_flag(1, 1),
            "the optimization flag must be of type OptFlag, got 1",
        ),
    ],
)
def test_context_methods_without_a_location_reject_the_wrong_kind(make, detail) -> None:
    with pytest.raises(CompilationError) as info:
        make(IRBuilder().ctx)
    assert info.value.status == Status.invalid_arguments
    assert detail in str(info.value)


# ---- the builder: errors located at the user's call ----------------------------------------


def _line_of(marker: str) -> int:
    with open(HERE, encoding="utf-8") as f:
        return next(i for i, line in enumerate(f, 1) if marker in line and "_line_of" not in line)


def _kernel(body) -> CompilationError:
    """Runs body(b, ctx, A, x, i, p) inside a kernel of memref A, f32 x, index i and bool p and
    returns the error it raised."""
    b = IRBuilder()
    ctx = b.ctx
    params = [ctx.memref(ctx.f32, [8, 8]), ctx.f32, ctx.index, ctx.bool]
    with pytest.raises(CompilationError) as info, b.function("k", params) as f:
        body(b, ctx, *f.params)
    return info.value


BUILDER_CASES = {
    # a single value where the row's operand is a list of them (was: 'Value' is not iterable)
    "index list a value": (
        lambda b, ctx, A, x, i, p: b.load(A, i),  # index list a value
        Status.invalid_arguments,
        "operand 'index_list' must be a sequence of values, got <value",
    ),
    "index an int": (
        lambda b, ctx, A, x, i, p: b.load(A, [i, 1]),  # index an int
        Status.invalid_arguments,
        "expected a value, got 1",
    ),
    # result types of a region instruction from the user's list
    "if result type an int": (
        lambda b, ctx, A, x, i, p: b.if_(p, [3]),  # if result type an int
        Status.invalid_arguments,
        "expected a type, got 3",
    ),
    "for result type an int": (
        lambda b, ctx, A, x, i, p: b.for_(i, i, init=[x], types=[3]),  # for result type an int
        Status.invalid_arguments,
        "expected a type, got 3",
    ),
    # operands of the wrong kind of type, met by the verifiers' narrowing checks
    "load from a number": (
        lambda b, ctx, A, x, i, p: b.load(x, [i], ctx.f32),  # load from a number
        Status.ir_expected_memref_or_group,
        "operand must be a memref or group",
    ),
    "store into a number": (
        lambda b, ctx, A, x, i, p: b.store(x, x, [i, i]),  # store into a number
        Status.ir_expected_memref,
        "operand must have memref type",
    ),
    "scale of a number": (
        lambda b, ctx, A, x, i, p: b.cooperative_matrix_scale(x, x, ctx.f32),  # scale of a number
        Status.ir_expected_coopmatrix,
        "operand must have coopmatrix type",
    ),
    "reduce of a number": (
        lambda b, ctx, A, x, i, p: b.cooperative_matrix_reduce_add(  # reduce of a number
            x, ctx.f32, mode=ReduceMode.row
        ),
        Status.ir_expected_coopmatrix,
        "operand must have coopmatrix type",
    ),
    "cast of a memref": (
        lambda b, ctx, A, x, i, p: b.cast(A, ctx.f64),  # cast of a memref
        Status.ir_expected_number,
        "operand must have number type",
    ),
    "gemm alpha a memref": (
        lambda b, ctx, A, x, i, p: b.gemm(A, A, A, x, A),  # gemm alpha a memref
        Status.ir_expected_number,
        "alpha must have number type",
    ),
    "for bound a float": (
        lambda b, ctx, A, x, i, p: b.for_(x, x),  # for bound a float
        Status.ir_expected_int,
        "loop bound must have integer type",
    ),
    # a complex constant of ints passed the verifier and then broke the printer (bare error)
    "complex constant of ints": (
        lambda b, ctx, A, x, i, p: b.constant((1, 2), ctx.c32),  # complex constant of ints
        Status.ir_constant_mismatch,
        "tuple constant does not match type c32 (expected a complex constant)",
    ),
    "global of an int type": (
        lambda b, ctx, A, x, i, p: b.global_("g", 3, [1]),  # global of an int type
        Status.ext_invalid_global,
        "a global must have memref type",
    ),
}


@pytest.mark.parametrize("case", sorted(BUILDER_CASES))
def test_builder_input_of_the_wrong_kind_is_located_at_the_call(case: str) -> None:
    body, status, detail = BUILDER_CASES[case]
    err = _kernel(body)
    assert err.status == status
    assert detail in str(err)
    assert err.location.begin.line == _line_of(f"# {case}")
    assert HERE in str(err)  # the rendered message names the user's file


@pytest.mark.parametrize("case", sorted(BUILDER_CASES))
def test_a_rejected_instruction_leaves_no_use_on_its_operands(case: str) -> None:
    """The operands bound before the bad one (or before a bad result type) lose their use
    again: a value the user keeps has no use by an instruction that was never made."""
    body = BUILDER_CASES[case][0]
    b = IRBuilder()
    ctx = b.ctx
    params = [ctx.memref(ctx.f32, [8, 8]), ctx.f32, ctx.index, ctx.bool]
    with b.function("k", params) as f:
        with pytest.raises(CompilationError):
            body(b, ctx, *f.params)
        assert [len(v.uses) for v in f.params] == [0, 0, 0, 0]


@pytest.mark.parametrize(
    ("call", "detail"),
    [
        (lambda b: b.function(3, []), "the function name must be a str, got 3"),  # name
        (lambda b: b.function("k", [3]), "a parameter type must be a type, got 3"),  # param
        (lambda b: b.function("k", [], attrs=3), "must be a dict or a DictionaryAttr"),  # attrs
    ],
)
def test_builder_function_arguments_of_the_wrong_kind(call, detail) -> None:
    with pytest.raises(CompilationError) as info:
        call(IRBuilder())
    assert info.value.status == Status.invalid_arguments
    assert detail in str(info.value)
    assert info.value.location.begin.line == _line_of(detail)


def test_a_location_of_the_wrong_kind_is_an_error_of_its_own() -> None:
    with pytest.raises(CompilationError) as info:
        IRBuilder().function("k", [], loc=3)
    assert info.value.status == Status.invalid_arguments
    assert "`loc` must be a Location, got 3" in str(info.value)


def test_coopmatrix_reductions_say_per_row_whether_complex_reduces() -> None:
    """One rule per row (`complex_ok`), not a test of the mnemonic inside the verifier."""
    flags = {m: INSTRUCTIONS[m].complex_ok for m in INSTRUCTIONS if "matrix_reduce" in m}
    assert flags == {
        "cooperative_matrix_reduce_add": True,
        "cooperative_matrix_reduce_max": False,
        "cooperative_matrix_reduce_min": False,
    }
    b = IRBuilder()
    ctx = b.ctx
    c = ctx.coopmatrix(ctx.c32, 16, 8, MatrixUse.acc)
    with b.function("k", [ctx.memref(ctx.c32, [16, 8])]) as f:
        (A,) = f.params
        zero = b.constant(0, ctx.index)
        with b.parallel():
            m = b.cooperative_matrix_load(A, zero, zero, c)
            row = ctx.coopmatrix(ctx.c32, 16, 1, MatrixUse.acc)
            b.cooperative_matrix_reduce_add(m, row, mode=ReduceMode.row)
            with pytest.raises(CompilationError) as info:
                b.cooperative_matrix_reduce_max(m, row, mode=ReduceMode.row)  # max of complex
    assert info.value.status == Status.ir_complex_unsupported
    assert "cooperative_matrix_reduce_max is not defined on c32" in str(info.value)
    assert info.value.location.begin.line == _line_of("# max of complex")


def test_addrspace_members_are_still_accepted() -> None:
    ctx = IRBuilder().ctx
    local = ctx.memref(ctx.f32, [4], None, AddressSpace.local, LOC)
    assert local.addrspace is AddressSpace.local
