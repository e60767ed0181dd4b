"""Property-based tests of the builder and the compiler: random valid programs (arithmetic on
the number types, loops carrying values, ifs yielding values) print, parse back to the same
text, and compile to SPIR-V that passes spirv-val (compile_to_spirv validates every module);
random invalid operations are rejected with a CompilationError, never built."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tinytc_py.compiler import compile_to_spirv
from tinytc_py.errors import CompilationError, Status
from tinytc_py.ir.builder import IRBuilder
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.types import ScalarKind
from tinytc_py.text.dialect import parse
from tinytc_py.text.printer import print_prog

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
TYPES = ("i32", "i64", "f32", "f64")
ARITH = ("add", "sub", "mul", "min", "max")
# one step of a random program: (kind, type index, operand picks, nested steps)
STEP = st.tuples(
    st.sampled_from(("arith", "constant", "cast", "for", "if")),
    st.integers(0, len(TYPES) - 1),
    st.integers(0, 2**16),
    st.integers(0, 2**16),
)


def number(ctx: CompilerContext, name: str):
    return ctx.number(next(k for k in ScalarKind if k.text == name))


class RandomProgram:
    """Builds one kernel from a list of steps; values of each type stay in scope lists."""

    def __init__(self, steps: list[tuple[str, int, int, int]], depth: int) -> None:
        self.ctx = CompilerContext()
        self.b = IRBuilder(self.ctx)
        self.steps = steps
        self.depth = depth
        types = [number(self.ctx, t) for t in TYPES]
        outs = [self.ctx.memref(t, []) for t in types]
        with self.b.function("k", types + outs + [self.ctx.bool]) as f:
            self.values = {t: [p] for t, p in zip(TYPES, f.params)}
            self.cond = f.params[-1]
            self.emit(steps, depth)
            for t, out in zip(TYPES, f.params[len(TYPES) : 2 * len(TYPES)]):
                self.b.store(self.values[t][-1], out, [])

    def pick(self, t: str, k: int):
        return self.values[t][k % len(self.values[t])]

    def emit(self, steps, depth: int) -> None:
        b, ctx = self.b, self.ctx
        for kind, ti, x, y in steps:
            t = TYPES[ti]
            ty = number(ctx, t)
            if kind == "arith":
                op = ARITH[x % len(ARITH)]
                v = getattr(b, op)(self.pick(t, x), self.pick(t, y))
            elif kind == "constant":
                v = b.constant(x - 2**15 if t[0] == "i" else (x - 2**15) / 8, ty)
            elif kind == "cast":
                v = b.cast(self.pick(TYPES[y % len(TYPES)], x), ty)
            elif depth > 0 and kind == "for":
                v = self.loop(t, ty, x, y, depth)
            elif depth > 0 and kind == "if":
                v = self.branch(t, ty, x, y, depth)
            else:
                continue
            self.values[t].append(v)

    def scoped(self, body, depth: int, t: str):
        """Emits `body` one level deeper; returns its last value of type `t` (values defined
        inside are not visible after the region)."""
        saved = {t: list(vs) for t, vs in self.values.items()}
        self.emit(body, depth - 1)
        last = self.values[t][-1]
        self.values = saved
        return last

    def loop(self, t, ty, x, y, depth):
        b, ctx = self.b, self.ctx
        lb = b.constant(0, ctx.index)
        ub = b.constant(x % 5, ctx.index)
        loop = b.for_(lb, ub, init=[self.pick(t, y)])
        with loop as (_i, carried):
            self.values[t].append(carried)
            b.yield_(self.scoped(self.steps[: y % 4], depth, t))
            self.values[t].remove(carried)
        return loop.results[0]

    def branch(self, t, ty, x, y, depth):
        b = self.b
        branch = b.if_(self.cond, [ty])
        with branch as (then, otherwise):
            with then:
                b.yield_(self.scoped(self.steps[: x % 3], depth, t))
            with otherwise:
                b.yield_(self.pick(t, y))
        return branch.results[0]


@SETTINGS
@given(st.lists(STEP, min_size=1, max_size=12), st.integers(0, 3))
def test_random_valid_programs_round_trip_and_compile(steps, depth):
    prog = RandomProgram(steps, depth).b.prog
    text = print_prog(prog)
    assert print_prog(parse(text)) == text
    binary = compile_to_spirv(parse(text))
    assert binary.data[:4] == b"\x03\x02\x23\x07"


@SETTINGS
@given(st.sampled_from(TYPES), st.sampled_from(TYPES), st.sampled_from(ARITH + ("div", "rem")))
def test_mixed_type_arithmetic_is_rejected(a, b_, op):
    ctx = CompilerContext()
    b = IRBuilder(ctx)
    with b.function("k", [number(ctx, a), number(ctx, b_)]) as f:
        x, y = f.params
        if a == b_:
            assert getattr(b, op)(x, y).type is number(ctx, a)
            return
        with pytest.raises(CompilationError) as info:
            getattr(b, op)(x, y)
    assert info.value.status is Status.ir_number_mismatch
