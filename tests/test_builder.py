"""IRBuilder tests: every instruction family built with the Python builder prints exactly like the
same program parsed from text (and like the text itself, which is written in canonical printed
form), and the builder rejects the same mistakes as the parser with the same Status."""

from __future__ import annotations

import math
import textwrap

import pytest

from tinytc_py.errors import CompilationError, Status
from tinytc_py.ir.builder import IRBuilder
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.enums import (
    AddressSpace,
    CheckedFlag,
    Comp3,
    MatrixUse,
    MemoryScope,
    MemorySemantics,
    ReduceMode,
    Transpose,
)
from tinytc_py.ir.types import DYNAMIC
from tinytc_py.text.dialect import parse
from tinytc_py.text.printer import print_prog

# ---- helpers -------------------------------------------------------------------------------------


@pytest.fixture
def ctx() -> CompilerContext:
    return CompilerContext()


@pytest.fixture
def b(ctx: CompilerContext) -> IRBuilder:
    return IRBuilder(ctx)


def _text(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def assert_prints(b: IRBuilder, text: str, canonical: bool = True) -> None:
    """The built program prints like the parsed text (and like the text itself if canonical)."""
    text = _text(text)
    got = print_prog(b.prog)
    assert got == print_prog(parse(text))
    if canonical:
        assert got == text
    # what the builder made parses back to itself
    assert print_prog(parse(got)) == got


def parse_status(text: str) -> Status:
    with pytest.raises(CompilationError) as info:
        parse(_text(text))
    return info.value.status


def build_status(build) -> Status:
    with pytest.raises(CompilationError) as info:
        build()
    return info.value.status


def mem(ctx: CompilerContext, *shape: int, elem=None, stride=None, local: bool = False):
    addr = AddressSpace.local if local else AddressSpace.global_
    return ctx.memref(elem or ctx.f32, shape, stride, addr)


def coop(ctx: CompilerContext, rows: int, cols: int, use: MatrixUse, elem=None):
    return ctx.coopmatrix(elem or ctx.f32, rows, cols, use)


# ---- collective linear algebra -----------------------------------------------------------------


def test_blas_a2(ctx, b):
    types = [ctx.f32, mem(ctx, 8, 16), mem(ctx, 16, 8), mem(ctx, 8, 16), mem(ctx, 8), mem(ctx)]
    with b.function("blas_a2", types, ["alpha", "A", "At", "B", "v", "s"]) as f:
        alpha, A, At, B, v, s = f.params
        beta = b.constant(0.0, ctx.f32, name="beta")
        b.axpby(alpha, A, beta, B)
        b.axpby(alpha, At, beta, B, atomic=True, tA=Transpose.t)
        b.cumsum(alpha, A, beta, B, mode=1)
        b.cumsum(alpha, A, beta, B, atomic=True)
        b.sum(alpha, A, beta, v)
        b.sum(alpha, At, beta, v, tA=Transpose.t, atomic=True)
        b.sum(alpha, v, beta, s)
    assert_prints(
        b,
        """
        func @blas_a2(%alpha: f32, %A: memref<f32x8x16>, %At: memref<f32x16x8>, %B: memref<f32x8x16>, %v: memref<f32x8>, %s: memref<f32>) {
            %beta = constant 0x0p+0 : f32
            axpby %alpha, %A, %beta, %B
            axpby.atomic.t %alpha, %At, %beta, %B
            cumsum %alpha, %A, 1, %beta, %B
            cumsum.atomic %alpha, %A, 0, %beta, %B
            sum %alpha, %A, %beta, %v
            sum.atomic.t %alpha, %At, %beta, %v
            sum %alpha, %v, %beta, %s
        }
        """,
    )  # noqa: E501


def test_blas_a3(ctx, b):
    types = [
        ctx.f32,
        mem(ctx, 8, 16),
        mem(ctx, 16, 4),
        mem(ctx, 8, 4),
        mem(ctx, 4, 8),
        mem(ctx, 16),
        mem(ctx, 8),
        mem(ctx, 4),
    ]
    names = ["alpha", "A", "B", "C", "D", "x", "y", "z"]
    with b.function("blas_a3", types, names) as f:
        alpha, A, B, C, D, x, y, z = f.params
        beta = b.constant(1.0, ctx.f32, name="beta")
        b.gemm(alpha, A, B, beta, C)
        b.gemm(alpha, B, A, beta, D, atomic=True, tA=Transpose.t, tB=Transpose.t)
        b.gemv(alpha, A, x, beta, y)
        b.gemv(alpha, A, y, beta, x, tA=Transpose.t)
        b.ger(alpha, y, z, beta, C, atomic=True)
        b.hadamard(alpha, y, y, beta, y)
        b.hadamard(alpha, C, C, beta, C, atomic=True)
    assert_prints(
        b,
        """
        func @blas_a3(%alpha: f32, %A: memref<f32x8x16>, %B: memref<f32x16x4>, %C: memref<f32x8x4>, %D: memref<f32x4x8>, %x: memref<f32x16>, %y: memref<f32x8>, %z: memref<f32x4>) {
            %beta = constant 0x1p+0 : f32
            gemm %alpha, %A, %B, %beta, %C
            gemm.atomic.t.t %alpha, %B, %A, %beta, %D
            gemv %alpha, %A, %x, %beta, %y
            gemv.t %alpha, %A, %y, %beta, %x
            ger.atomic %alpha, %y, %z, %beta, %C
            hadamard %alpha, %y, %y, %beta, %y
            hadamard.atomic %alpha, %C, %C, %beta, %C
        }
        """,
    )  # noqa: E501


def test_blas_mixed_precision_and_dynamic_shapes(ctx, b):
    types = [
        mem(ctx, DYNAMIC, DYNAMIC, elem=ctx.f16),
        mem(ctx, DYNAMIC, 8, elem=ctx.f16),
        mem(ctx, 32, 8, elem=ctx.f64),
    ]
    with b.function("mixed", types, ["A", "B", "C"]) as f:
        A, B, C = f.params
        one = b.constant(1, ctx.i8)
        zero = b.constant(0.0, ctx.f64)
        b.gemm(one, A, B, zero, C)
    assert_prints(
        b,
        """
        func @mixed(%A: memref<f16x?x?>, %B: memref<f16x?x8>, %C: memref<f64x32x8>) {
            %0 = constant 1 : i8
            %1 = constant 0x0p+0 : f64
            gemm %0, %A, %B, %1, %C
        }
        """,
    )


def test_alloca_and_lifetime_stop(ctx, b):
    local = mem(ctx, 8, 8, local=True)
    with b.function("alloca", []):
        tmp = b.alloca(local, name="tmp")
        aligned = b.alloca(mem(ctx, 16, local=True, elem=ctx.f64), attrs={"alignment": 64})
        b.lifetime_stop(aligned)
        b.lifetime_stop(tmp)
    assert_prints(
        b,
        """
        func @alloca() {
            %tmp = alloca : memref<f32x8x8,local>
            %0 = alloca {alignment=64} : memref<f64x16,local>
            lifetime_stop %0
            lifetime_stop %tmp
        }
        """,
    )


def test_foreach(ctx, b):
    A = mem(ctx, DYNAMIC, DYNAMIC)
    with b.function("foreach", [A], ["A"]) as f:
        (a,) = f.params
        c0 = b.constant(0, ctx.index, name="c0")
        m = b.size(a, mode=0, name="m")
        n = b.size(a, mode=1, name="n")
        with b.foreach([c0, c0], [m, n], param_names=["i", "j"]) as (i, j):
            x = b.load(a, [i, j], name="x")
            y = b.mul(x, x, name="y")
            b.store(y, a, [i, j])
        with b.foreach([c0], [m]) as i:
            b.store(b.load(a, [i, c0]), a, [c0, i])
    assert_prints(
        b,
        """
        func @foreach(%A: memref<f32x?x?>) {
            %c0 = constant 0 : index
            %m = size %A[0] : index
            %n = size %A[1] : index
            foreach (%i,%j)=(%c0,%c0),(%m,%n) {
                %x = load %A[%i,%j] : f32
                %y = mul %x, %x : f32
                store %y, %A[%i,%j]
            }
            foreach (%0)=(%c0),(%m) {
                %1 = load %A[%0,%c0] : f32
                store %1, %A[%c0,%0]
            }
        }
        """,
    )


def test_foreach_tile(ctx, b):
    A = mem(ctx, 64, DYNAMIC)
    with b.function("tile", [A], ["A"]) as f:
        (a,) = f.params
        c0 = b.constant(0, ctx.index, name="c0")
        c64 = b.constant(64, ctx.index, name="c64")
        n = b.size(a, mode=1, name="n")
        with b.foreach_tile([c0, c0], [c64, n], [32, 4], param_names=["i", "j", "ti", "tj"]) as (
            i,
            j,
            ti,
            tj,
        ):
            b.add(ti, tj, name="t")
            sgid = b.subgroup_id(mode=Comp3.x)
            b.cast(sgid, ctx.index)
    assert_prints(
        b,
        """
        func @tile(%A: memref<f32x64x?>) {
            %c0 = constant 0 : index
            %c64 = constant 64 : index
            %n = size %A[1] : index
            foreach_tile (%i,%j)=(%c0,%c0),(%c64,%n) as (%ti,%tj)<=(32,4) {
                %t = add %ti, %tj : index
                %0 = subgroup_id.x : i32
                %1 = cast %0 : index
            }
        }
        """,
    )


def test_parallel(ctx, b):
    with b.function("par", [mem(ctx, 16)], ["A"]) as f:
        (a,) = f.params
        with b.parallel():
            lid = b.subgroup_local_id(name="lid")
            idx = b.cast(lid, ctx.index, name="idx")
            x = b.load(a, [idx])
            b.store(x, a, [idx])
    assert_prints(
        b,
        """
        func @par(%A: memref<f32x16>) {
            parallel {
                %lid = subgroup_local_id : i32
                %idx = cast %lid : index
                %0 = load %A[%idx] : f32
                store %0, %A[%idx]
            }
        }
        """,
    )


# ---- arithmetic, math, comparison, cast, constants -----------------------------------------------


def test_arith_binary(ctx, b):
    types = [ctx.f32, ctx.i32, ctx.bool, ctx.c64]
    with b.function("binary", types, ["x", "k", "p", "z"]) as f:
        x, k, p, z = f.params
        for op in ("add", "sub", "mul", "div", "rem", "max", "min"):
            getattr(b, op)(x, x)
        for op in ("shl", "shr", "and_", "or_", "xor"):
            getattr(b, op)(k, k)
        b.and_(p, p)
        b.or_(p, p, ctx.bool)
        b.xor(p, p, ty=ctx.bool)
        b.add(z, z)
        b.div(z, z)
    assert_prints(
        b,
        """
        func @binary(%x: f32, %k: i32, %p: bool, %z: c64) {
            %0 = add %x, %x : f32
            %1 = sub %x, %x : f32
            %2 = mul %x, %x : f32
            %3 = div %x, %x : f32
            %4 = rem %x, %x : f32
            %5 = max %x, %x : f32
            %6 = min %x, %x : f32
            %7 = shl %k, %k : i32
            %8 = shr %k, %k : i32
            %9 = and %k, %k : i32
            %10 = or %k, %k : i32
            %11 = xor %k, %k : i32
            %12 = and %p, %p : bool
            %13 = or %p, %p : bool
            %14 = xor %p, %p : bool
            %15 = add %z, %z : c64
            %16 = div %z, %z : c64
        }
        """,
    )


def test_arith_unary(ctx, b):
    with b.function("unary", [ctx.f64, ctx.i16, ctx.bool, ctx.c32], ["x", "k", "p", "z"]) as f:
        x, k, p, z = f.params
        b.abs(x)
        b.neg(x)
        b.abs(k)
        b.not_(k)
        b.not_(p)
        b.abs(z)  # complex → component type
        b.neg(z)
        b.conj(z)
        b.im(z)
        b.re(z, ctx.f32)
    assert_prints(
        b,
        """
        func @unary(%x: f64, %k: i16, %p: bool, %z: c32) {
            %0 = abs %x : f64
            %1 = neg %x : f64
            %2 = abs %k : i16
            %3 = not %k : i16
            %4 = not %p : bool
            %5 = abs %z : f32
            %6 = neg %z : c32
            %7 = conj %z : c32
            %8 = im %z : f32
            %9 = re %z : f32
        }
        """,
    )


def test_math(ctx, b):
    ops = ["cos", "sin", "exp", "exp2", "log", "log2"]
    ops += ["native_" + op for op in ops]
    with b.function("math", [ctx.f32, ctx.c64], ["x", "z"]) as f:
        x, z = f.params
        for op in ops:
            getattr(b, op)(x)
        b.exp(z)
        b.native_exp2(z)
    lines = [f"    %{k} = {op} %x : f32\n" for k, op in enumerate(ops)]
    lines += ["    %12 = exp %z : c64\n", "    %13 = native_exp2 %z : c64\n"]
    text = "func @math(%x: f32, %z: c64) {\n" + "".join(lines) + "}\n"
    assert_prints(b, text)


def test_compare(ctx, b):
    ops = [
        "equal",
        "not_equal",
        "greater_than",
        "greater_than_equal",
        "less_than",
        "less_than_equal",
    ]
    with b.function("cmp", [ctx.index, ctx.c32], ["i", "z"]) as f:
        i, z = f.params
        results = [getattr(b, op)(i, i) for op in ops]
        results.append(b.equal(z, z, name="ceq"))
        results.append(b.not_equal(z, z, ctx.bool))
    assert all(r.type is ctx.bool for r in results)
    lines = [f"    %{k} = {op} %i, %i : bool\n" for k, op in enumerate(ops)]
    lines += ["    %ceq = equal %z, %z : bool\n", "    %6 = not_equal %z, %z : bool\n"]
    assert_prints(b, "func @cmp(%i: index, %z: c32) {\n" + "".join(lines) + "}\n")


def test_cast(ctx, b):
    with b.function("cast", [ctx.i32, ctx.f32], ["k", "x"]) as f:
        k, x = f.params
        b.cast(k, ctx.f64)
        b.cast(x, ty=ctx.c64)
        b.cast(x, ctx.bf16, name="h")
        b.cast(x, ctx.index)
    assert_prints(
        b,
        """
        func @cast(%k: i32, %x: f32) {
            %0 = cast %k : f64
            %1 = cast %x : c64
            %h = cast %x : bf16
            %2 = cast %x : index
        }
        """,
    )


def test_constants_of_every_kind(ctx, b):
    with b.function("constants", []):
        b.constant(True, ctx.bool)
        b.constant(False, ctx.bool)
        b.constant(-128, ctx.i8)
        b.constant(32767, ctx.i16)
        b.constant(-5, ctx.i32)
        b.constant(2**62, ctx.i64)
        b.constant(7, ctx.index)
        b.constant(0.5, ctx.bf16)
        b.constant(-2.25, ctx.f16)
        b.constant(3, ctx.f32)  # int → float
        b.constant(1e-300, ctx.f64)
        b.constant(math.inf, ctx.f32)
        b.constant(-math.inf, ctx.f64)
        b.constant(math.nan, ctx.f64)
        b.constant(1 + 2j, ctx.c32)
        b.constant((0.5, -1.0), ctx.c64)
        b.constant(2, ctx.c64)  # real → complex
        with b.parallel():
            b.constant(1.0, coop(ctx, 16, 8, MatrixUse.acc))
            b.constant(1, coop(ctx, 16, 8, MatrixUse.a, elem=ctx.i8))
            b.constant(0j, coop(ctx, 8, 8, MatrixUse.b, elem=ctx.c32))
    assert_prints(
        b,
        """
        func @constants() {
            %0 = constant true : bool
            %1 = constant false : bool
            %2 = constant -128 : i8
            %3 = constant 32767 : i16
            %4 = constant -5 : i32
            %5 = constant 4611686018427387904 : i64
            %6 = constant 7 : index
            %7 = constant 0x1p-1 : bf16
            %8 = constant -0x1.2p+1 : f16
            %9 = constant 0x1.8p+1 : f32
            %10 = constant 0x1.56e1fc2f8f359p-997 : f64
            %11 = constant inf : f32
            %12 = constant -inf : f64
            %13 = constant nan : f64
            %14 = constant [0x1p+0,0x1p+1] : c32
            %15 = constant [0x1p-1,-0x1p+0] : c64
            %16 = constant [0x1p+1,0x0p+0] : c64
            parallel {
                %17 = constant 0x1p+0 : coopmatrix<f32x16x8,matrix_acc>
                %18 = constant 1 : coopmatrix<i8x16x8,matrix_a>
                %19 = constant [0x0p+0,0x0p+0] : coopmatrix<c32x8x8,matrix_b>
            }
        }
        """,
    )


def test_constants_non_canonical_text(ctx, b):
    """Spellings the printer normalizes (hex floats, '+' signs, exponent forms)."""
    with b.function("k", []):
        b.constant(1.0, ctx.f32)
        b.constant(3, ctx.i32)
        b.constant(1500.0, ctx.f64)
        b.constant(0.25 - 0.5j, ctx.c32)
    assert_prints(
        b,
        """
        func @k() {
            %0 = constant 0x1p0 : f32
            %1 = constant +3 : i32
            %2 = constant 1.5e3 : f64
            %3 = constant [0x1p-2,-5e-1] : c32
        }
        """,
        canonical=False,
    )


def test_constant_errors_match_parser(ctx, b):
    def build(value, ty):
        def run():
            with b.function("k", []):
                b.constant(value, ty)

        return run

    for value, ty, text in (
        (1.5, ctx.i32, "1.5 : i32"),
        (300, ctx.i8, "300 : i8"),
        (True, ctx.f32, "true : f32"),
        (1, ctx.bool, "1 : bool"),
    ):
        status = build_status(build(value, ty))
        assert status == Status.ir_constant_mismatch
        assert parse_status(f"func @k() {{ %0 = constant {text} }}") == status


# ---- memory --------------------------------------------------------------------------------------


def test_load_store_memref_and_group(ctx, b):
    A = mem(ctx, 8, 8)
    G = ctx.group(mem(ctx, DYNAMIC), DYNAMIC, DYNAMIC)
    S = mem(ctx, elem=ctx.i64)
    with b.function("ldst", [A, G, S], ["A", "G", "s"]) as f:
        a, g, s = f.params
        c1 = b.constant(1, ctx.index, name="c1")
        x = b.load(a, [c1, c1], name="x")
        row = b.load(g, [c1], name="row")
        assert row.type is mem(ctx, DYNAMIC)
        y = b.load(row, [c1], ctx.f32)
        b.store(x, a, [c1, c1])
        b.store(y, row, [c1])
        k = b.load(s, [])
        b.store(k, s, [])
    assert_prints(
        b,
        """
        func @ldst(%A: memref<f32x8x8>, %G: group<memref<f32x?>x?, offset: ?>, %s: memref<i64>) {
            %c1 = constant 1 : index
            %x = load %A[%c1,%c1] : f32
            %row = load %G[%c1] : memref<f32x?>
            %0 = load %row[%c1] : f32
            store %x, %A[%c1,%c1]
            store %0, %row[%c1]
            %1 = load %s[] : i64
            store %1, %s[]
        }
        """,
    )


def test_atomics_with_scope_and_semantics(ctx, b):
    with b.function("atomics", [mem(ctx, 16), mem(ctx, 16, elem=ctx.c32)], ["A", "Z"]) as f:
        a, z = f.params
        i = b.constant(3, ctx.index, name="i")
        v = b.atomic_load(a, [i], name="v")
        b.atomic_load(a, [i], scope=MemoryScope.device, semantics=MemorySemantics.acquire)
        b.atomic_store(v, a, [i])
        b.atomic_store(v, a, [i], scope=MemoryScope.subgroup, semantics=MemorySemantics.release)
        b.atomic_add(v, a, [i])
        b.atomic_max(v, a, [i], scope=MemoryScope.cross_device)
        b.atomic_min(v, a, [i], semantics=MemorySemantics.sequentially_consistent)
        w = b.atomic_load(z, [i], semantics=MemorySemantics.acquire_release)
        b.atomic_add(w, z, [i], ctx.c32, scope=MemoryScope.work_group)
    assert_prints(
        b,
        """
        func @atomics(%A: memref<f32x16>, %Z: memref<c32x16>) {
            %i = constant 3 : index
            %v = atomic_load %A[%i] : f32
            %0 = atomic_load.device.acquire %A[%i] : f32
            atomic_store %v, %A[%i]
            atomic_store.subgroup.release %v, %A[%i]
            %1 = atomic_add %v, %A[%i] : f32
            %2 = atomic_max.cross_device %v, %A[%i] : f32
            %3 = atomic_min.sequentially_consistent %v, %A[%i] : f32
            %4 = atomic_load.acquire_release %Z[%i] : c32
            %5 = atomic_add %4, %Z[%i] : c32
        }
        """,
    )


def test_atomic_min_on_complex_rejected(ctx, b):
    def run():
        with b.function("k", [mem(ctx, 4, elem=ctx.c32), ctx.c32]) as f:
            z, v = f.params
            b.atomic_min(v, z, [b.constant(0, ctx.index)])

    status = build_status(run)
    assert status == Status.ir_complex_unsupported
    assert (
        parse_status("""
        func @k(%z: memref<c32x4>, %v: c32) {
            %0 = constant 0 : index
            %1 = atomic_min %v, %z[%0] : c32
        }
        """)
        == status
    )


def test_views_size_associated(ctx, b):
    A = mem(ctx, 32, 16)
    D = mem(ctx, DYNAMIC, 8)
    G = ctx.group(mem(ctx, 4), 10)
    with b.function("views", [A, D, G, ctx.index], ["A", "D", "G", "n"]) as f:
        a, d, g, n = f.params
        b.subview(a, [4, 8], [8, 4], mem(ctx, 8, 4, stride=[1, 32]), name="s")
        b.subview(a, [4, 8], [8, 4], mem(ctx, 8, 4, stride=[1, DYNAMIC]))
        b.subview(a, [2, n], [4, 0], mem(ctx, 4))
        b.subview(a, [2, n], [4, n], mem(ctx, 4, DYNAMIC, stride=[1, 32]))
        b.subview(a, [n, 0], [1, 16], mem(ctx, 1, 16, stride=[1, 32]))
        b.expand(a, 0, [4, 8], mem(ctx, 4, 8, 16, stride=[1, 4, 32]), name="e")
        b.expand(a, 1, [2, 2, 4], mem(ctx, 32, 2, 2, 4, stride=[1, 32, 64, 128]))
        b.fuse(a, from_=0, to=1, ty=mem(ctx, 512))  # `from` is a Python keyword
        b.size(d, mode=0, name="dsize")
        b.size(g, mode=0)
        b.associated(a)
        b.associated(g, name="ok")
    assert_prints(
        b,
        """
        func @views(%A: memref<f32x32x16>, %D: memref<f32x?x8>, %G: group<memref<f32x4>x10>, %n: index) {
            %s = subview %A[4:8,8:4] : memref<f32x8x4,strided<1,32>>
            %0 = subview %A[4:8,8:4] : memref<f32x8x4,strided<1,?>>
            %1 = subview %A[2:4,%n] : memref<f32x4>
            %2 = subview %A[2:4,%n:%n] : memref<f32x4x?,strided<1,32>>
            %3 = subview %A[%n:1,0:16] : memref<f32x1x16,strided<1,32>>
            %e = expand %A[0->4x8] : memref<f32x4x8x16>
            %4 = expand %A[1->2x2x4] : memref<f32x32x2x2x4>
            %5 = fuse %A[0,1] : memref<f32x512>
            %dsize = size %D[0] : index
            %6 = size %G[0] : index
            %7 = associated %A : bool
            %ok = associated %G : bool
        }
        """,
    )  # noqa: E501


def test_fuse_dynamic(ctx, b):
    D = mem(ctx, 4, DYNAMIC, 8)
    with b.function("fuse", [D], ["D"]) as f:
        (d,) = f.params
        b.fuse(d, 0, 1, mem(ctx, DYNAMIC, 8, stride=[1, DYNAMIC]))  # as in the text: [from, to]
    assert_prints(
        b,
        """
        func @fuse(%D: memref<f32x4x?x8>) {
            %0 = fuse %D[0,1] : memref<f32x?x8>
        }
        """,
    )


def test_expand_dynamic(ctx, b):
    with b.function("expand", [mem(ctx, 32, 16), ctx.index], ["A", "n"]) as f:
        a, n = f.params
        b.expand(a, 1, [n, 2], mem(ctx, 32, DYNAMIC, 2, stride=[1, 32, DYNAMIC]))
        b.expand(a, 1, [2, n, 4], mem(ctx, 32, 2, DYNAMIC, 4, stride=[1, 32, 64, DYNAMIC]))
    # '%n x 2', not '%nx2' (that would lex as the identifier %nx2)
    assert_prints(
        b,
        """
        func @expand(%A: memref<f32x32x16>, %n: index) {
            %0 = expand %A[1->%n x 2] : memref<f32x32x?x2>
            %1 = expand %A[1->2 x %n x 4] : memref<f32x32x2x?x4>
        }
        """,
    )


def test_barrier(ctx, b):
    with b.function("barrier", []):
        b.barrier()
        b.barrier(fence_flags=AddressSpace.global_)
        b.barrier(fence_flags=AddressSpace.local)
        b.barrier(fence_flags=AddressSpace.global_ | AddressSpace.local)
    assert_prints(
        b,
        """
        func @barrier() {
            barrier
            barrier.global
            barrier.local
            barrier.global.local
        }
        """,
    )


def test_every_builtin(ctx, b):
    with b.function("builtins", []):
        for mode in Comp3:
            b.group_id(mode=mode)
        b.num_groups(ctx.index, mode=Comp3.z)
        b.num_subgroups(mode=Comp3.y)
        b.subgroup_size(name="sgs")
        with b.parallel():
            b.subgroup_id(mode=Comp3.x)
            b.subgroup_linear_id()
            b.subgroup_local_id(ty=ctx.i32)
            b.group_id(mode=Comp3.x)
            b.subgroup_size()
    assert_prints(
        b,
        """
        func @builtins() {
            %0 = group_id.x : index
            %1 = group_id.y : index
            %2 = group_id.z : index
            %3 = num_groups.z : index
            %4 = num_subgroups.y : i32
            %sgs = subgroup_size : i32
            parallel {
                %5 = subgroup_id.x : i32
                %6 = subgroup_linear_id : i32
                %7 = subgroup_local_id : i32
                %8 = group_id.x : index
                %9 = subgroup_size : i32
            }
        }
        """,
    )


def test_builtin_wrong_type_matches_parser(ctx, b):
    def run():
        with b.function("k", []):
            b.group_id(ctx.i32, mode=Comp3.x)

    status = build_status(run)
    assert status == Status.ir_expected_index
    assert parse_status("func @k() { %0 = group_id.x : i32 }") == status


# ---- control flow --------------------------------------------------------------------------------


def test_for_with_init_and_step(ctx, b):
    with b.function("loop", [mem(ctx, 64), ctx.index], ["A", "n"]) as f:
        a, n = f.params
        c0 = b.constant(0, ctx.index, name="c0")
        c2 = b.constant(2, ctx.index, name="c2")
        zero = b.constant(0.0, ctx.f32, name="zero")
        one = b.constant(1, ctx.i32, name="one")
        loop = b.for_(
            c0, n, c2, init=[zero, one], name=["sum", "cnt"], param_names=["i", "acc", "k"]
        )
        with loop as (i, acc, k):
            x = b.load(a, [i], name="x")
            b.yield_(b.add(acc, x), b.add(k, one))
        total, count = loop.results
        b.store(b.div(total, b.cast(count, ctx.f32)), a, [c0])
        with b.for_(c0, n, attrs={"unroll": True}) as i:
            b.store(zero, a, [i])
        with b.for_(c0, n, c2, attrs={"unroll": 4}):
            pass
        step = b.for_(c0, n, init=[zero], types=[ctx.f32])
        with step as (_, s):
            b.yield_(s)
    assert_prints(
        b,
        """
        func @loop(%A: memref<f32x64>, %n: index) {
            %c0 = constant 0 : index
            %c2 = constant 2 : index
            %zero = constant 0x0p+0 : f32
            %one = constant 1 : i32
            %sum,%cnt = for %i=%c0,%n,%c2 init(%acc=%zero,%k=%one) -> (f32,i32) {
                %x = load %A[%i] : f32
                %0 = add %acc, %x : f32
                %1 = add %k, %one : i32
                yield (%0, %1)
            }
            %2 = cast %cnt : f32
            %3 = div %sum, %2 : f32
            store %3, %A[%c0]
            for %4=%c0,%n {
                store %zero, %A[%4]
            } attributes{unroll=true}
            for %5=%c0,%n,%c2 {
            } attributes{unroll=4}
            %8 = for %6=%c0,%n init(%7=%zero) -> (f32) {
                yield (%7)
            }
        }
        """,
    )


def test_if_with_results(ctx, b):
    with b.function("branch", [ctx.i32, ctx.f32], ["k", "x"]) as f:
        k, x = f.params
        zero = b.constant(0, ctx.i32)
        cond = b.less_than(k, zero, name="neg")
        branch = b.if_(cond, [ctx.f32, ctx.i32], name=["y", "m"])
        with branch as (then, otherwise):
            with then:
                b.yield_(b.neg(x), b.neg(k))
            with otherwise:
                b.yield_(x, k)
        y, m = branch.results
        b.add(y, y)
        with b.if_(cond) as (then, _), then:
            b.barrier()
    assert_prints(
        b,
        """
        func @branch(%k: i32, %x: f32) {
            %0 = constant 0 : i32
            %neg = less_than %k, %0 : bool
            %y,%m = if %neg -> (f32,i32) {
                %1 = neg %x : f32
                %2 = neg %k : i32
                yield (%1, %2)
            } else {
                yield (%x, %k)
            }
            %3 = add %y, %y : f32
            if %neg {
                barrier
            }
        }
        """,
    )


def test_nested_regions_and_shadowed_names(ctx, b):
    """Names repeated in nested scopes are renamed by the printer, and the result re-parses."""
    with b.function("nest", [mem(ctx, 8)], ["A"]) as f:
        (a,) = f.params
        c0 = b.constant(0, ctx.index, name="x")
        c8 = b.constant(8, ctx.index, name="n")
        with b.for_(c0, c8, param_names=["i"]) as i:
            b.load(a, [i], name="x")
        b.load(a, [c0], name="x")
    printed = print_prog(b.prog)
    assert "%x_1 = load %A[%i]" in printed
    assert print_prog(parse(printed)) == printed


# ---- SPMD: subgroups and cooperative matrices ----------------------------------------------------


def test_subgroup_broadcast_and_operations(ctx, b):
    ops = [
        f"subgroup_{kind}_{op}"
        for kind in ("exclusive_scan", "inclusive_scan", "reduce")
        for op in ("add", "max", "min")
    ]
    with b.function("sg", [ctx.f32, ctx.c64], ["x", "z"]) as f:
        x, z = f.params
        with b.parallel():
            lid = b.subgroup_linear_id(name="sid")
            b.subgroup_broadcast(x, lid, name="bx")
            b.subgroup_broadcast(z, lid, ctx.c64)
            for op in ops:
                getattr(b, op)(x)
            b.subgroup_reduce_add(z)
    lines = [f"        %{k + 1} = {op} %x : f32\n" for k, op in enumerate(ops)]
    text = (
        "func @sg(%x: f32, %z: c64) {\n"
        "    parallel {\n"
        "        %sid = subgroup_linear_id : i32\n"
        "        %bx = subgroup_broadcast %x, %sid : f32\n"
        "        %0 = subgroup_broadcast %z, %sid : c64\n"
        + "".join(lines)
        + "        %10 = subgroup_reduce_add %z : c64\n"
        "    }\n"
        "}\n"
    )
    assert_prints(b, text)


def test_cooperative_matrix_instructions(ctx, b):
    A = mem(ctx, 64, 64)
    H = mem(ctx, 64, 64, elem=ctx.f16)
    ca = coop(ctx, 16, 8, MatrixUse.a, elem=ctx.f16)
    cb = coop(ctx, 8, 16, MatrixUse.b, elem=ctx.f16)
    cc = coop(ctx, 16, 16, MatrixUse.acc)
    with b.function("coop", [A, H, ctx.f32], ["A", "H", "alpha"]) as f:
        a, h, alpha = f.params
        with b.parallel():
            i = b.constant(0, ctx.index, name="i")
            j = b.constant(16, ctx.index, name="j")
            ma = b.cooperative_matrix_load(h, i, j, ca, name="ma")
            mb = b.cooperative_matrix_load(
                h, j, i, cb, tA=Transpose.t, checked=CheckedFlag.rows, name="mb"
            )
            mc = b.cooperative_matrix_atomic_load(
                a,
                i,
                j,
                cc,
                checked=CheckedFlag.both,
                scope=MemoryScope.device,
                semantics=MemorySemantics.acquire,
                name="mc",
            )
            md = b.cooperative_matrix_mul_add(ma, mb, mc, name="md")
            b.cooperative_matrix_mul_add(ma, mb, mc, coop(ctx, 16, 16, MatrixUse.acc, elem=ctx.f64))
            ms = b.cooperative_matrix_scale(alpha, md, name="ms")
            e = b.cooperative_matrix_extract(ms, index=3, name="e")
            mi = b.cooperative_matrix_insert(e, ms, index=5, name="mi")
            mk = b.cooperative_matrix_construct(alpha, cc, name="mk")
            b.add(mi, mk)
            b.cast(mc, coop(ctx, 16, 16, MatrixUse.a, elem=ctx.f16))
            b.cooperative_matrix_reduce_add(
                mi, coop(ctx, 16, 1, MatrixUse.acc), mode=ReduceMode.row
            )
            b.cooperative_matrix_reduce_max(
                mi, coop(ctx, 1, 16, MatrixUse.acc), mode=ReduceMode.column
            )
            b.cooperative_matrix_reduce_min(
                mi, coop(ctx, 16, 1, MatrixUse.acc), mode=ReduceMode.row
            )
            b.cooperative_matrix_prefetch(a, i, j, cache_level=1, rows=16, cols=16)
            b.cooperative_matrix_store(mi, a, i, j)
            b.cooperative_matrix_store(mi, a, j, i, tA=Transpose.t, checked=CheckedFlag.cols)
            b.cooperative_matrix_atomic_store(
                mi, a, i, j, scope=MemoryScope.subgroup, semantics=MemorySemantics.release
            )
            b.cooperative_matrix_atomic_add(mi, a, i, j)
            b.cooperative_matrix_atomic_max(mi, a, i, j, checked=CheckedFlag.rows)
            b.cooperative_matrix_atomic_min(
                mi, a, i, j, cc, tA=Transpose.t, semantics=MemorySemantics.sequentially_consistent
            )
    assert_prints(
        b,
        """
        func @coop(%A: memref<f32x64x64>, %H: memref<f16x64x64>, %alpha: f32) {
            parallel {
                %i = constant 0 : index
                %j = constant 16 : index
                %ma = cooperative_matrix_load %H[%i,%j] : coopmatrix<f16x16x8,matrix_a>
                %mb = cooperative_matrix_load.t.rows_checked %H[%j,%i] : coopmatrix<f16x8x16,matrix_b>
                %mc = cooperative_matrix_atomic_load.both_checked.device.acquire %A[%i,%j] : coopmatrix<f32x16x16,matrix_acc>
                %md = cooperative_matrix_mul_add %ma, %mb, %mc : coopmatrix<f32x16x16,matrix_acc>
                %0 = cooperative_matrix_mul_add %ma, %mb, %mc : coopmatrix<f64x16x16,matrix_acc>
                %ms = cooperative_matrix_scale %alpha, %md : coopmatrix<f32x16x16,matrix_acc>
                %e = cooperative_matrix_extract %ms[3] : f32
                %mi = cooperative_matrix_insert %e, %ms[5] : coopmatrix<f32x16x16,matrix_acc>
                %mk = cooperative_matrix_construct %alpha : coopmatrix<f32x16x16,matrix_acc>
                %1 = add %mi, %mk : coopmatrix<f32x16x16,matrix_acc>
                %2 = cast %mc : coopmatrix<f16x16x16,matrix_a>
                %3 = cooperative_matrix_reduce_add.row %mi : coopmatrix<f32x16x1,matrix_acc>
                %4 = cooperative_matrix_reduce_max.column %mi : coopmatrix<f32x1x16,matrix_acc>
                %5 = cooperative_matrix_reduce_min.row %mi : coopmatrix<f32x16x1,matrix_acc>
                cooperative_matrix_prefetch 1, %A[%i,%j], 16, 16
                cooperative_matrix_store %mi, %A[%i,%j]
                cooperative_matrix_store.t.cols_checked %mi, %A[%j,%i]
                cooperative_matrix_atomic_store.subgroup.release %mi, %A[%i,%j]
                %6 = cooperative_matrix_atomic_add %mi, %A[%i,%j] : coopmatrix<f32x16x16,matrix_acc>
                %7 = cooperative_matrix_atomic_max.rows_checked %mi, %A[%i,%j] : coopmatrix<f32x16x16,matrix_acc>
                %8 = cooperative_matrix_atomic_min.t.sequentially_consistent %mi, %A[%i,%j] : coopmatrix<f32x16x16,matrix_acc>
            }
        }
        """,
    )  # noqa: E501


def test_cooperative_matrix_apply(ctx, b):
    cc = coop(ctx, 16, 8, MatrixUse.acc)
    with b.function("apply", [mem(ctx, 16, 8)], ["A"]) as f:
        (a,) = f.params
        with b.parallel():
            c0 = b.constant(0, ctx.index, name="c0")
            m = b.cooperative_matrix_load(a, c0, c0, cc, name="m")
            apply = b.cooperative_matrix_apply(m, name="r", param_names=["row", "col", "val"])
            with apply as (row, col, val):
                mask = b.less_than_equal(row, col, name="mask")
                branch = b.if_(mask, [ctx.f32])
                with branch as (then, otherwise):
                    with then:
                        b.yield_(b.native_exp(val))
                    with otherwise:
                        b.yield_(b.constant(0.0, ctx.f32, name="zero"))
                b.yield_(branch.results[0])
            b.cooperative_matrix_store(apply.results[0], a, c0, c0)
            with b.cooperative_matrix_apply(m) as (_, _, v):
                b.yield_(v)
    assert_prints(
        b,
        """
        func @apply(%A: memref<f32x16x8>) {
            parallel {
                %c0 = constant 0 : index
                %m = cooperative_matrix_load %A[%c0,%c0] : coopmatrix<f32x16x8,matrix_acc>
                %r = cooperative_matrix_apply (%row,%col,%val)=%m -> coopmatrix<f32x16x8,matrix_acc> {
                    %mask = less_than_equal %row, %col : bool
                    %0 = if %mask -> (f32) {
                        %1 = native_exp %val : f32
                        yield (%1)
                    } else {
                        %zero = constant 0x0p+0 : f32
                        yield (%zero)
                    }
                    yield (%0)
                }
                cooperative_matrix_store %r, %A[%c0,%c0]
                %5 = cooperative_matrix_apply (%2,%3,%4)=%m -> coopmatrix<f32x16x8,matrix_acc> {
                    yield (%4)
                }
            }
        }
        """,
    )  # noqa: E501


# ---- errors: builder and parser agree ------------------------------------------------------------


def test_gemm_shape_mismatch(ctx, b):
    def run():
        types = [mem(ctx, 8, 16), mem(ctx, 8, 4), mem(ctx, 8, 4), ctx.f32]
        with b.function("k", types) as f:
            A, B, C, alpha = f.params
            b.gemm(alpha, A, B, alpha, C)

    status = build_status(run)
    assert status == Status.ir_incompatible_shapes
    assert (
        parse_status("""
        func @k(%A: memref<f32x8x16>, %B: memref<f32x8x4>, %C: memref<f32x8x4>, %alpha: f32) {
            gemm %alpha, %A, %B, %alpha, %C
        }
        """)
        == status
    )


def test_failed_instruction_leaves_no_uses(ctx, b):
    with b.function("k", [mem(ctx, 8, 16), mem(ctx, 8, 4), ctx.f32]) as f:
        A, B, alpha = f.params
        with pytest.raises(CompilationError):
            b.gemm(alpha, A, B, alpha, B)
        assert not A.uses and not B.uses and not alpha.uses
        with pytest.raises(CompilationError), b.parallel():
            b.gemm(alpha, A, A, alpha, A)
    assert not A.uses and not alpha.uses


def test_collective_in_foreach(ctx, b):
    def run():
        with b.function("k", [mem(ctx, 8, 8), ctx.f32, ctx.index]) as f:
            A, alpha, n = f.params
            with b.foreach([n], [n]):
                b.gemm(alpha, A, A, alpha, A)

    status = build_status(run)
    assert status == Status.ir_collective_called_from_spmd
    assert (
        parse_status("""
        func @k(%A: memref<f32x8x8>, %alpha: f32, %n: index) {
            foreach (%i)=(%n),(%n) {
                gemm %alpha, %A, %A, %alpha, %A
            }
        }
        """)
        == status
    )


def test_collective_in_if_inside_parallel(ctx, b):
    """Mixed regions (if/for bodies) inherit the kind of the enclosing region."""

    def run():
        with b.function("k", [ctx.bool]) as f:
            (p,) = f.params
            with b.parallel(), b.if_(p) as (then, _), then:
                b.alloca(mem(ctx, 4, local=True))

    status = build_status(run)
    assert status == Status.ir_collective_called_from_spmd
    assert (
        parse_status("""
        func @k(%p: bool) {
            parallel {
                if %p {
                    %0 = alloca : memref<f32x4,local>
                }
            }
        }
        """)
        == status
    )


def test_spmd_in_collective_region(ctx, b):
    def run():
        with b.function("k", [ctx.f32]) as f:
            b.subgroup_reduce_add(f.params[0])

    status = build_status(run)
    assert status == Status.ir_spmd_called_from_collective
    assert parse_status("func @k(%x: f32) { %0 = subgroup_reduce_add %x : f32 }") == status


def test_value_from_another_region_rejected(ctx, b):
    with b.function("k", [ctx.index]) as f:
        (n,) = f.params
        with b.for_(n, n) as i:
            inner = b.add(i, i)
        with pytest.raises(CompilationError) as info:
            b.add(inner, n)
        assert info.value.status == Status.compilation_error
        with pytest.raises(CompilationError):
            b.add(i, n)  # loop variable outside its loop
        assert len(n.uses) == 2  # only the loop bounds: failed instructions left no uses
    # the parser rejects the same program (as an undefined name)
    with pytest.raises(CompilationError):
        parse(
            _text("""
            func @k(%n: index) {
                for %i=%n,%n {
                    %x = add %i, %i : index
                }
                %y = add %x, %n : index
            }
            """)
        )


def test_value_from_another_function_rejected(ctx, b):
    with b.function("f", [ctx.i32]) as f:
        (x,) = f.params
    with b.function("g", [ctx.i32]), pytest.raises(CompilationError):
        b.add(x, x)


def test_for_with_init_needs_yield(ctx, b):
    def run():
        with b.function("k", [ctx.index, ctx.f32]) as f:
            n, x = f.params
            with b.for_(n, n, init=[x]):
                pass

    status = build_status(run)
    assert status == Status.ir_must_have_yield
    assert (
        parse_status("""
        func @k(%n: index, %x: f32) {
            %0 = for %i=%n,%n init(%a=%x) -> (f32) {
            }
        }
        """)
        == status
    )


def test_for_region_never_entered_is_checked(ctx, b):
    """A region-owning instruction whose region was never filled is caught at function end."""

    def run():
        with b.function("k", [ctx.index, ctx.f32]) as f:
            n, x = f.params
            b.for_(n, n, init=[x])

    assert build_status(run) == Status.ir_must_have_yield


def test_yield_mismatch(ctx, b):
    def run():
        with b.function("k", [ctx.index, ctx.f32]) as f:
            n, x = f.params
            with b.for_(n, n, init=[x]) as (i, a):
                b.yield_(i)

    status = build_status(run)
    assert status == Status.ir_yield_mismatch
    assert (
        parse_status("""
        func @k(%n: index, %x: f32) {
            %0 = for %i=%n,%n init(%a=%x) -> (f32) {
                yield (%i)
            }
        }
        """)
        == status
    )


def test_yield_not_last(ctx, b):
    def run():
        with b.function("k", [ctx.index, ctx.f32]) as f:
            n, x = f.params
            with b.for_(n, n, init=[x]) as (i, a):
                b.yield_(a)
                b.add(a, a)

    status = build_status(run)
    assert status == Status.ir_unexpected_yield
    assert (
        parse_status("""
        func @k(%n: index, %x: f32) {
            %0 = for %i=%n,%n init(%a=%x) -> (f32) {
                yield (%a)
                %1 = add %a, %a : f32
            }
        }
        """)
        == status
    )


def test_if_with_results_needs_else(ctx, b):
    def run():
        with b.function("k", [ctx.bool, ctx.f32]) as f:
            p, x = f.params
            with b.if_(p, [ctx.f32]) as (then, _), then:
                b.yield_(x)

    status = build_status(run)
    assert status == Status.ir_yield_in_else_branch_missing
    assert (
        parse_status("""
        func @k(%p: bool, %x: f32) {
            %0 = if %p -> (f32) {
                yield (%x)
            }
        }
        """)
        == status
    )


def test_if_condition_must_be_bool(ctx, b):
    def run():
        with b.function("k", [ctx.i32]) as f:
            b.if_(f.params[0])

    status = build_status(run)
    assert status == Status.ir_expected_boolean
    assert parse_status("func @k(%p: i32) { if %p { } }") == status


def test_init_type_mismatch(ctx, b):
    def run():
        with b.function("k", [ctx.index, ctx.f32]) as f:
            n, x = f.params
            b.for_(n, n, init=[x], types=[ctx.f64])

    status = build_status(run)
    assert status == Status.ir_init_return_type_mismatch
    assert (
        parse_status("""
        func @k(%n: index, %x: f32) {
            %0 = for %i=%n,%n init(%a=%x) -> (f64) {
                yield (%a)
            }
        }
        """)
        == status
    )


def test_number_mismatch_matches_parser(ctx, b):
    def run():
        with b.function("k", [ctx.f32, ctx.f64]) as f:
            b.add(*f.params)

    status = build_status(run)
    assert status == Status.ir_number_mismatch
    assert parse_status("func @k(%a: f32, %b: f64) { %0 = add %a, %b : f32 }") == status


def test_forbidden_cast_matches_parser(ctx, b):
    def run():
        with b.function("k", [ctx.c32]) as f:
            b.cast(f.params[0], ctx.f32)

    status = build_status(run)
    assert status == Status.ir_forbidden_cast
    assert parse_status("func @k(%z: c32) { %0 = cast %z : f32 }") == status


def test_subgroup_size_dependent_checks(ctx, b):
    def run():
        with b.function("k", [], attrs={"subgroup_size": 16}):
            c0 = b.constant(0, ctx.index)
            with b.foreach_tile([c0], [c0], [8]):
                pass

    status = build_status(run)
    assert status == Status.ir_tile_shape0_not_multiple_of_sgs
    assert (
        parse_status("""
        func @k() attributes{subgroup_size=16} {
            %c0 = constant 0 : index
            foreach_tile (%i)=(%c0),(%c0) as (%t)<=(8) {
            }
        }
        """)
        == status
    )


# ---- result-type inference, names, attributes, API details ------------------------------------


def test_result_type_inference(ctx, b):
    with b.function("infer", [mem(ctx, 4, elem=ctx.i16), ctx.c32, ctx.index], ["A", "z", "i"]) as f:
        a, z, i = f.params
        assert b.add(z, z).type is ctx.c32
        assert b.load(a, [i]).type is ctx.i16
        assert b.less_than(i, i).type is ctx.bool
        assert b.abs(z).type is ctx.f32
        assert b.size(a, mode=0).type is ctx.index
        assert b.associated(a).type is ctx.bool
        assert b.atomic_add(b.load(a, [i]), a, [i]).type is ctx.i16
        assert b.group_id(mode=Comp3.x).type is ctx.index
        assert b.subgroup_size().type is ctx.i32


def test_result_type_required_where_not_inferable(ctx, b):
    with b.function("k", [ctx.i32, mem(ctx, 8, 8)]) as f:
        k, a = f.params
        for build in (
            lambda: b.cast(k),
            lambda: b.alloca(),
            lambda: b.subview(a, [0, 0], [4, 4], None),
            lambda: b.constant(1, None),
        ):
            with pytest.raises(CompilationError) as info:
                build()
            assert info.value.status == Status.invalid_arguments
        with b.parallel():
            with pytest.raises(CompilationError) as info:
                b.cooperative_matrix_load(a, b.constant(0, ctx.index), b.constant(0, ctx.index))
            assert info.value.status == Status.invalid_arguments
            with pytest.raises(CompilationError) as info:
                b.cooperative_matrix_construct(b.constant(0.0, ctx.f32))
            assert info.value.status == Status.invalid_arguments
    assert not k.uses


def test_names_survive_printing(ctx, b):
    with b.function("names", [ctx.f32, ctx.index], ["alpha", "n"]) as f:
        alpha, n = f.params
        two = b.constant(2.0, ctx.f32, name="two")
        b.mul(alpha, two, name="scaled")
        with b.foreach([n], [n], param_names=["idx"]) as idx:
            b.cast(idx, ctx.i32, name="as_int")
        loop = b.for_(n, n, init=[two], name="final", param_names=["it", "carry"])
        with loop as (_, carry):
            b.yield_(carry)
        assert loop.results[0].name == "final"
    printed = print_prog(b.prog)
    for name in ("%alpha", "%n", "%two", "%scaled", "%idx", "%as_int", "%final", "%it", "%carry"):
        assert name in printed
    assert print_prog(parse(printed)) == printed


def test_bad_names_rejected(ctx, b):
    with b.function("k", [ctx.f32]) as f:
        (x,) = f.params
        for bad in ("has space", "1abc", "_x", "a-b", "%x"):
            with pytest.raises(CompilationError) as info:
                b.add(x, x, name=bad)
            assert info.value.status == Status.invalid_arguments
        assert not x.uses
        c = b.constant(0, ctx.index)
        with pytest.raises(CompilationError) as info:
            b.for_(c, c, param_names=["i j"])
        assert info.value.status == Status.invalid_arguments
        assert not c.uses  # the loop was taken out again
        with pytest.raises(CompilationError):
            b.add(x, x, name=["a", "b"])  # more names than results
        # a purely numeric name means "unnamed", as in the parser
        b.add(x, x, name="7")
    assert print_prog(b.prog) == _text("""
        func @k(%0: f32) {
            %1 = constant 0 : index
            %2 = add %0, %0 : f32
        }
        """)


def test_unknown_property_rejected(ctx, b):
    """The methods have real signatures: Python itself rejects a wrong call."""
    with b.function("k", [ctx.f32, mem(ctx, 8, 8)]) as f:
        alpha, A = f.params
        with pytest.raises(TypeError, match="unexpected keyword argument 'transA'"):
            b.gemm(alpha, A, A, alpha, A, transA=Transpose.t)
        with pytest.raises(TypeError, match="unexpected keyword argument 'atomic'"):
            b.add(alpha, alpha, atomic=True)
        with pytest.raises(TypeError, match="positional arguments"):
            b.gemm(alpha, A, A, alpha, A, alpha)  # too many arguments
        assert not alpha.uses


def test_missing_required_property(ctx, b):
    with b.function("k", []), b.parallel():
        m = b.constant(1.0, coop(ctx, 16, 8, MatrixUse.acc))
        with pytest.raises(TypeError, match="required keyword-only argument: 'mode'"):
            b.cooperative_matrix_reduce_add(m, coop(ctx, 16, 1, MatrixUse.acc))
        with pytest.raises(CompilationError, match="'mode' required") as info:
            b.cooperative_matrix_reduce_add(m, coop(ctx, 16, 1, MatrixUse.acc), mode=None)
        assert info.value.status == Status.invalid_arguments
    assert (
        parse_status("""
        func @k() {
            parallel {
                %0 = constant 0x1p+0 : coopmatrix<f32x16x8,matrix_acc>
                %1 = cooperative_matrix_reduce_add %0 : coopmatrix<f32x16x1,matrix_acc>
            }
        }
        """)
        == Status.parse_error
    )


def test_operands_as_keywords(ctx, b):
    with b.function("k", [mem(ctx, 8), ctx.index], ["A", "i"]) as f:
        a, i = f.params
        x = b.load(operand=a, index_list=[i])
        b.store(x, a, index_list=[i])
    assert_prints(
        b,
        """
        func @k(%A: memref<f32x8>, %i: index) {
            %0 = load %A[%i] : f32
            store %0, %A[%i]
        }
        """,
    )


def test_function_and_parameter_attributes(ctx, b):
    types = [mem(ctx, DYNAMIC, 8), ctx.f32]
    with b.function(
        "attrs",
        types,
        ["A", "x"],
        attrs={"subgroup_size": 16, "work_group_size": [32, 2]},
        param_attrs=[{"alignment": 64, "shape_gcd": [8]}, None],
    ):
        pass
    assert_prints(
        b,
        """
        func @attrs(%A: memref<f32x?x8> {alignment=64,shape_gcd=[8]}, %x: f32) attributes{subgroup_size=16,work_group_size=[32,2]} {
        }
        """,
        canonical=False,
    )  # noqa: E501


def test_insertion_point_required(ctx):
    b = IRBuilder(ctx)
    with pytest.raises(CompilationError) as info:
        b.constant(1, ctx.i32)
    assert info.value.status == Status.invalid_arguments


def test_several_functions(ctx, b):
    with b.function("first", [ctx.i32], ["x"]) as f:
        b.add(f.params[0], f.params[0])
    with b.function("second", []):
        b.constant(1, ctx.i32)
    assert_prints(
        b,
        """
        func @first(%x: i32) {
            %0 = add %x, %x : i32
        }

        func @second() {
            %0 = constant 1 : i32
        }
        """,
    )
