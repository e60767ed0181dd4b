"""Element-wise arithmetic, math, comparisons and casts executed on the CPU OpenCL device.

Each kernel computes a global index i = group_id.x * W0 + subgroup_id.x * S + subgroup_local_id
inside `parallel`, guards it with `if i < size(a, 0)` and applies several operations at once
(one program per type keeps the JIT time down), writing op k to column k of the output.
"""

from __future__ import annotations

import numpy as np
import pytest

from tinytc_py.passes.registry import run_function_pass
from tinytc_py.spirv import dump
from tinytc_py.text.dialect import parse
from tinytc_py.text.printer import print_prog

from .support import (
    CMP,
    assert_ulp,
    bf16_bits,
    bf16_value,
    build,
    elementwise,
    num_groups,
    ops_source,
    run_ops,
)
from .support import NP_DTYPE as NP

pytestmark = pytest.mark.timeout(120, method="thread")

N = 37  # not a multiple of the work-group size: the guard matters
RTOL = {"f16": 2e-3, "bf16": 1e-2, "f32": 1e-6, "f64": 1e-13, "c32": 1e-6, "c64": 1e-13}


def store_ops(ty: str, exprs: list[str], out: str = "%c") -> str:
    lines = []
    for k, expr in enumerate(exprs):
        lines += [
            f"%r{k} = {expr} : {ty}",
            f"%k{k} = constant {k} : index",
            f"store %r{k}, {out}[%i, %k{k}]",
        ]
    return "\n".join(" " * 12 + line for line in lines)


def run_binary(ty: str, ops: list[str], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    body = "\n".join(
        [
            f"            %x = load %a[%i] : {ty}",
            f"            %y = load %b[%i] : {ty}",
            store_ops(ty, [f"{op} %x, %y" for op in ops]),
        ]
    )
    params = f"%a: memref<{ty}x?>, %b: memref<{ty}x?>, %c: memref<{ty}x?x{len(ops)}>"
    k = build(elementwise("binary", params, [body])).kernel("binary")
    c = np.zeros((len(a), len(ops)), dtype=NP[ty], order="F")
    k(a, b, c, num_groups=num_groups(len(a)))
    return c


def trunc_div(a, b):
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return (q * np.sign(a) * np.sign(b)).astype(a.dtype)


INT_OPS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": trunc_div,
    "rem": np.fmod,
    "min": np.minimum,
    "max": np.maximum,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}


@pytest.mark.parametrize("ty", ["i8", "i16", "i32", "i64", "index"])
def test_int_binary(ty):
    rng = np.random.default_rng(1)
    dt = NP[ty]
    a = rng.integers(-100, 100, N).astype(dt)
    b = rng.integers(1, 20, N).astype(dt) * rng.choice([-1, 1], N).astype(dt)
    c = run_binary(ty, list(INT_OPS), a, b)
    with np.errstate(over="ignore"):
        for k, fn in enumerate(INT_OPS.values()):
            np.testing.assert_array_equal(c[:, k], fn(a, b), err_msg=list(INT_OPS)[k])


@pytest.mark.parametrize("ty", ["i8", "i32", "i64"])
def test_int_shifts(ty):
    """shl is logical, shr arithmetic (negative values keep their sign)."""
    dt = NP[ty]
    a = (np.arange(N) - N // 2).astype(dt) * 3
    b = (np.arange(N) % 7).astype(dt)
    c = run_binary(ty, ["shl", "shr"], a, b)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(c[:, 0], np.left_shift(a, b))
    np.testing.assert_array_equal(c[:, 1], np.right_shift(a, b))


FLOAT_OPS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "rem": np.fmod,
    "min": np.minimum,
    "max": np.maximum,
}


@pytest.mark.parametrize("ty", ["f16", "f32", "f64"])
def test_float_binary(ty):
    rng = np.random.default_rng(2)
    dt = NP[ty]
    a = rng.uniform(-10, 10, N).astype(dt)
    b = (rng.uniform(0.5, 4, N) * rng.choice([-1, 1], N)).astype(dt)
    c = run_binary(ty, list(FLOAT_OPS), a, b)
    for k, (name, fn) in enumerate(FLOAT_OPS.items()):
        np.testing.assert_allclose(c[:, k], fn(a, b), rtol=RTOL[ty], atol=RTOL[ty], err_msg=name)


def test_bf16_binary():
    """bf16 values travel as raw bits; the arithmetic happens in f32 and is rounded back."""
    rng = np.random.default_rng(3)
    a = bf16_bits(rng.uniform(-10, 10, N))
    b = bf16_bits(rng.uniform(0.5, 4, N))
    ops = ["add", "sub", "mul", "div", "min", "max"]
    c = run_binary("bf16", ops, a, b)
    x, y = bf16_value(a), bf16_value(b)
    for k, name in enumerate(ops):
        want = bf16_value(bf16_bits(FLOAT_OPS[name](x, y)))
        np.testing.assert_allclose(bf16_value(c[:, k]), want, rtol=1e-2, err_msg=name)


@pytest.mark.parametrize("ty", ["c32", "c64"])
def test_complex_binary(ty):
    rng = np.random.default_rng(4)
    dt = NP[ty]
    a = (rng.uniform(-3, 3, N) + 1j * rng.uniform(-3, 3, N)).astype(dt)
    b = (rng.uniform(0.5, 3, N) + 1j * rng.uniform(-3, 3, N)).astype(dt)
    ops = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
    c = run_binary(ty, list(ops), a, b)
    for k, (name, fn) in enumerate(ops.items()):
        np.testing.assert_allclose(c[:, k], fn(a, b), rtol=10 * RTOL[ty], err_msg=name)


@pytest.mark.parametrize(("ty", "real"), [("c32", "f32"), ("c64", "f64")])
def test_complex_times_real(ty, real):
    """Complex mul/div by a value known to be real (a cast from a float or an integer, a
    constant with zero imaginary part) scales the other operand: products exactly NumPy's."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-3, 3, N).astype(NP[real])
    y = (rng.uniform(-3, 3, N) + 1j * rng.uniform(-3, 3, N)).astype(NP[ty])
    body = [
        f"%x = load %a[%i] : {real}",
        f"%y = load %b[%i] : {ty}",
        f"%xc = cast %x : {ty}",
        f"%ic = cast %i : {ty}",
        f"%half = constant [-0.5, 0.0] : {ty}",
    ]
    ops = ["mul %xc, %y", "mul %y, %xc", "mul %y, %ic", "mul %half, %y", "div %y, %xc"]
    params = f"%a: memref<{real}x?>, %b: memref<{ty}x?>, %c: memref<{ty}x?x{len(ops)}>"
    lines = [" " * 12 + line for line in body] + [store_ops(ty, ops)]
    k = build(elementwise("scale", params, ["\n".join(lines)])).kernel("scale")
    c = np.zeros((N, len(ops)), dtype=NP[ty], order="F")
    k(x, y, c, num_groups=num_groups(N))
    i = np.arange(N).astype(NP[real])
    np.testing.assert_array_equal(c[:, 0], x * y)
    np.testing.assert_array_equal(c[:, 1], y * x)
    np.testing.assert_array_equal(c[:, 2], y * i)
    np.testing.assert_array_equal(c[:, 3], y * NP[real](-0.5))
    np.testing.assert_allclose(c[:, 4], y / x, rtol=RTOL[ty])


# identities with one constant operand: constant-propagation folds those exact in IEEE
# arithmetic (x + -0.0, x - 0.0, x*1, x*-1, x/1) and, with the default flags, keeps the others
IDENTITIES = [
    ("add %x, %pz", lambda x, c: x + c[0]),
    ("add %pz, %x", lambda x, c: c[0] + x),
    ("add %x, %nz", lambda x, c: x + c[1]),
    ("add %nz, %x", lambda x, c: c[1] + x),
    ("sub %x, %pz", lambda x, c: x - c[0]),
    ("sub %x, %nz", lambda x, c: x - c[1]),
    ("sub %pz, %x", lambda x, c: c[0] - x),
    ("sub %nz, %x", lambda x, c: c[1] - x),
    ("mul %x, %one", lambda x, c: x * c[2]),
    ("mul %mone, %x", lambda x, c: c[3] * x),
    ("mul %x, %pz", lambda x, c: x * c[0]),
    ("mul %nz, %x", lambda x, c: c[1] * x),
    ("div %x, %one", lambda x, c: x / c[2]),
]


@pytest.mark.parametrize("ty", ["f32", "f64"])
def test_identities_keep_ieee_results(ty):
    """With the default flags, x + 0.0 for x = -0.0 is +0.0 (the sign bit checked), x*0.0 for
    x = inf is NaN, and so on: every identity gives IEEE's result (NumPy's) for signed zeros,
    infinities and NaN, whether constant-propagation folded it or not."""
    dt = NP[ty]
    x = np.array([-0.0, 0.0, 1.5, -2.5, np.inf, -np.inf, np.nan], dt)
    pre = [
        f"%pz = constant 0.0 : {ty}",
        f"%nz = constant -0.0 : {ty}",
        f"%one = constant 1.0 : {ty}",
        f"%mone = constant -1.0 : {ty}",
    ]
    got = run_ops(ty, [expr for expr, _ in IDENTITIES], [x], pre=pre)
    consts = (dt(0.0), dt(-0.0), dt(1.0), dt(-1.0))
    for k, (expr, fn) in enumerate(IDENTITIES):
        with np.errstate(invalid="ignore"):
            want = fn(x, consts)
        g = got[:, k]
        np.testing.assert_array_equal(np.isnan(g), np.isnan(want), err_msg=expr)
        num = ~np.isnan(want)
        np.testing.assert_array_equal(g[num], want[num], err_msg=expr)
        np.testing.assert_array_equal(np.signbit(g[num]), np.signbit(want[num]), err_msg=expr)


def run_unary(ty: str, ops: list[str], a: np.ndarray, rty: str | None = None) -> np.ndarray:
    rty = rty or ty
    body = "\n".join(
        [f"            %x = load %a[%i] : {ty}", store_ops(rty, [f"{op} %x" for op in ops])]
    )
    params = f"%a: memref<{ty}x?>, %c: memref<{rty}x?x{len(ops)}>"
    k = build(elementwise("unary", params, [body])).kernel("unary")
    c = np.zeros((len(a), len(ops)), dtype=NP[rty], order="F")
    k(a, c, num_groups=num_groups(len(a)))
    return c


@pytest.mark.parametrize("ty", ["i16", "i32", "i64"])
def test_int_unary(ty):
    a = (np.arange(N) - N // 2).astype(NP[ty]) * 7
    c = run_unary(ty, ["abs", "neg", "not"], a)
    np.testing.assert_array_equal(c[:, 0], np.abs(a))
    np.testing.assert_array_equal(c[:, 1], -a)
    np.testing.assert_array_equal(c[:, 2], ~a)


MATH = {
    "abs": np.abs,
    "neg": np.negative,
    "cos": np.cos,
    "sin": np.sin,
    "exp": np.exp,
    "exp2": np.exp2,
    "log": np.log,
    "log2": np.log2,
}


@pytest.mark.parametrize("ty", ["f16", "f32", "f64"])
@pytest.mark.parametrize("native", [False, True], ids=["precise", "native"])
def test_float_math(ty, native):
    """native_* on f16 is computed in f32 (the CPU runtime has no f16 native builtins)."""
    a = np.linspace(0.1, 3.0, N).astype(NP[ty])
    names = [("native_" + n if native and n not in ("abs", "neg") else n) for n in MATH]
    c = run_unary(ty, names, a)
    rtol = max(RTOL[ty], 1e-3 if native else 0)
    for k, fn in enumerate(MATH.values()):
        want = fn(a.astype(np.float64))
        np.testing.assert_allclose(c[:, k], want, rtol=rtol, atol=rtol, err_msg=names[k])


def test_bf16_math():
    a = bf16_bits(np.linspace(0.1, 3.0, N))
    c = run_unary("bf16", ["exp", "log", "neg"], a)
    x = bf16_value(a).astype(np.float64)
    for k, fn in enumerate((np.exp, np.log, np.negative)):
        np.testing.assert_allclose(bf16_value(c[:, k]), fn(x), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("ty", ["c32", "c64"])
def test_complex_unary(ty):
    rng = np.random.default_rng(5)
    a = (rng.uniform(-2, 2, N) + 1j * rng.uniform(-2, 2, N)).astype(NP[ty])
    ops = {"neg": np.negative, "conj": np.conj, "exp": np.exp, "exp2": lambda z: 2.0**z}
    c = run_unary(ty, list(ops), a)
    for k, (name, fn) in enumerate(ops.items()):
        np.testing.assert_allclose(c[:, k], fn(a), rtol=10 * RTOL[ty], err_msg=name)
    real = "f32" if ty == "c32" else "f64"
    r = run_unary(ty, ["abs", "re", "im"], a, rty=real)
    for k, fn in enumerate((np.abs, np.real, np.imag)):
        np.testing.assert_allclose(r[:, k], fn(a), rtol=10 * RTOL[ty])


def math_insts(text: str, ops: set[str]) -> list[str]:
    """The lines of printed IR or of a SPIR-V dump that apply one of `ops`
    (`%r0 = cos %c0 : f32`, `%11 = OpExtInst %2 %1 cos %9`)."""
    return [line for line in text.splitlines() if ops & set(line.split())]


# math of constants: constant-propagation folds them (as upstream) in double precision
MATH_OF_CONSTANTS = [
    ("cos", 0.75, np.cos),
    ("native_sin", -1.25, np.sin),
    ("exp", 1.0, np.exp),
    ("native_exp", -2.0, np.exp),
    ("exp2", 0.3, np.exp2),
    ("log", 3.5, np.log),
    ("native_log2", 10.0, np.log2),
    ("log", 0.0, np.log),
    ("log2", -1.0, np.log2),
]


@pytest.mark.parametrize("ty", ["f16", "f32", "f64"])
def test_math_of_constants(ty):
    """The default pipeline folds math of constants: constant-propagation leaves no math
    instruction in use (dead-code-elimination then removes them all), the kernel calls no math
    function, and the stored values are the functions' values rounded to the type, to within
    half an ulp (log 0 = -inf, log of -1 is NaN)."""
    pre = [f"%c{k} = constant {x!r} : {ty}" for k, (_, x, _) in enumerate(MATH_OF_CONSTANTS)]
    exprs = [f"{op} %c{k}" for k, (op, _, _) in enumerate(MATH_OF_CONSTANTS)]
    ops = {op for op, _, _ in MATH_OF_CONSTANTS}
    src = ops_source(ty, exprs, 1, pre=pre)
    prog = parse(src)
    assert len(math_insts(print_prog(prog), ops)) == len(MATH_OF_CONSTANTS)
    for name in ("constant-propagation", "dead-code-elimination"):
        run_function_pass(name, prog)
    assert math_insts(print_prog(prog), ops) == []
    a = np.zeros(N, NP[ty])
    got = run_ops(ty, exprs, [a], pre=pre)
    assert math_insts(dump(build(src).binary.data), ops) == []
    with np.errstate(all="ignore"):
        want = [fn(np.float64(x)) for _, x, fn in MATH_OF_CONSTANTS]
    for k, (op, x, _) in enumerate(MATH_OF_CONSTANTS):
        w = np.full(N, want[k])
        assert_ulp(got[:, k], w, ty, 0.5 if ty != "f64" else 1.0, err_msg=f"{op} {x}")


def test_complex_math_of_constants():
    pre = ["%z = constant [0.5, -1.0] : c64", "%w = constant [0.25, 2.0] : c32"]
    got = run_ops("c64", ["exp %z", "exp2 %z"], [np.zeros(N, np.complex128)], pre=pre)
    z = 0.5 - 1.0j
    np.testing.assert_allclose(got[:, 0], np.exp(z), rtol=1e-15)
    np.testing.assert_allclose(got[:, 1], 2.0**z, rtol=1e-15)
    got = run_ops("c32", ["exp %w", "exp2 %w"], [np.zeros(N, np.complex64)], pre=pre[1:])
    w = 0.25 + 2.0j
    np.testing.assert_allclose(got[:, 0], np.complex64(np.exp(w)), rtol=1e-7)
    np.testing.assert_allclose(got[:, 1], np.complex64(2.0**w), rtol=1e-7)
    r = run_ops("c32", ["abs %w"], [np.zeros(N, np.complex64)], rty="f32", pre=pre[1:])
    np.testing.assert_array_equal(r[:, 0], np.float32(abs(w)))


def run_compare(ty: str, ops: list[str], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each comparison selects 1 or 0 through an `if` with a result."""
    lines = [
        f"%x = load %a[%i] : {ty}",
        f"%y = load %b[%i] : {ty}",
        "%one = constant 1 : i32",
        "%zero = constant 0 : i32",
    ]
    for k, op in enumerate(ops):
        lines += [
            f"%p{k} = {op} %x, %y : bool",
            f"%r{k} = if %p{k} -> (i32) {{",
            "    yield (%one)",
            "} else {",
            "    yield (%zero)",
            "}",
            f"%k{k} = constant {k} : index",
            f"store %r{k}, %c[%i, %k{k}]",
        ]
    body = "\n".join(" " * 12 + line for line in lines)
    params = f"%a: memref<{ty}x?>, %b: memref<{ty}x?>, %c: memref<i32x?x{len(ops)}>"
    k = build(elementwise("compare", params, [body])).kernel("compare")
    c = np.zeros((len(a), len(ops)), dtype=np.int32, order="F")
    k(a, b, c, num_groups=num_groups(len(a)))
    return c


@pytest.mark.parametrize("ty", ["i32", "i64", "f16", "f32", "f64"])
def test_compare(ty):
    a = (np.arange(N) % 5).astype(NP[ty])
    b = (np.arange(N) % 3).astype(NP[ty])
    if ty.startswith("f"):
        a[3] = np.nan  # ordered compares are false, not_equal is true
    c = run_compare(ty, list(CMP), a, b)
    for k, (name, fn) in enumerate(CMP.items()):
        np.testing.assert_array_equal(c[:, k], fn(a, b).astype(np.int32), err_msg=name)


def test_compare_complex():
    a = (np.arange(N) % 3 + 1j * (np.arange(N) % 2)).astype(np.complex64)
    b = (np.arange(N) % 2 + 1j * 0).astype(np.complex64)
    c = run_compare("c32", ["equal", "not_equal"], a, b)
    np.testing.assert_array_equal(c[:, 0], (a == b).astype(np.int32))
    np.testing.assert_array_equal(c[:, 1], (a != b).astype(np.int32))


def test_cast():
    """Float to int truncates; int to float, float widths, real to complex, complex widths."""
    src = elementwise(
        "cast",
        "%a: memref<f32x?>, %b: memref<i32x?>, %z: memref<c32x?>, %oi: memref<i32x?>, "
        "%od: memref<f64x?>, %oh: memref<f16x?>, %oc: memref<c32x?>, %ob: memref<bf16x?>, "
        "%of: memref<f32x?>, %o8: memref<i8x?>, %ol: memref<i64x?>, %oz: memref<c64x?>",
        [
            "%x = load %a[%i] : f32",
            "%y = load %b[%i] : i32",
            "%w = load %z[%i] : c32",
            "%x0 = cast %x : i32",
            "store %x0, %oi[%i]",
            "%x1 = cast %x : f64",
            "store %x1, %od[%i]",
            "%x2 = cast %x : f16",
            "store %x2, %oh[%i]",
            "%x3 = cast %x : c32",
            "store %x3, %oc[%i]",
            "%x4 = cast %x : bf16",
            "store %x4, %ob[%i]",
            "%y0 = cast %y : f32",
            "store %y0, %of[%i]",
            "%y1 = cast %y : i8",
            "store %y1, %o8[%i]",
            "%y2 = cast %y : i64",
            "store %y2, %ol[%i]",
            "%w0 = cast %w : c64",
            "store %w0, %oz[%i]",
        ],
    )
    k = build(src).kernel("cast")
    a = np.linspace(-5.5, 5.5, N).astype(np.float32)
    b = (np.arange(N) * 37 - 300).astype(np.int32)
    z = (a + 2j * a).astype(np.complex64)
    outs = [
        np.zeros(N, dt)
        for dt in (
            np.int32,
            np.float64,
            np.float16,
            np.complex64,
            np.uint16,
            np.float32,
            np.int8,
            np.int64,
            np.complex128,
        )
    ]
    k(a, b, z, *outs, num_groups=num_groups(N))
    oi, od, oh, oc, ob, of, o8, ol, oz = outs
    np.testing.assert_array_equal(oi, np.trunc(a).astype(np.int32))
    np.testing.assert_array_equal(od, a.astype(np.float64))
    np.testing.assert_array_equal(oh, a.astype(np.float16))
    np.testing.assert_array_equal(oc, a.astype(np.complex64))
    np.testing.assert_array_equal(ob, bf16_bits(a))
    np.testing.assert_array_equal(of, b.astype(np.float32))
    np.testing.assert_array_equal(o8, b.astype(np.int8))
    np.testing.assert_array_equal(ol, b.astype(np.int64))
    np.testing.assert_array_equal(oz, z.astype(np.complex128))


def test_scalar_arguments_and_constants():
    """Scalar kernel arguments of every kind, plus constants (incl. complex and bf16)."""
    src = """
func @scal(%a: memref<f64x4>, %s8: i8, %s16: i16, %s32: i32, %s64: i64, %sh: f16, %sb: bf16,
           %sf: f32, %sz: c32, %sw: c64, %si: index)
    attributes {subgroup_size=4, work_group_size=[4,1]} {
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    %c2 = constant 2 : index
    %c3 = constant 3 : index
    %a8 = cast %s8 : f64
    %a16 = cast %s16 : f64
    %a32 = cast %s32 : f64
    %a64 = cast %s64 : f64
    %ai = cast %si : f64
    %t0 = add %a8, %a16 : f64
    %t1 = add %t0, %a32 : f64
    %t2 = add %t1, %a64 : f64
    %t3 = add %t2, %ai : f64
    store %t3, %a[%c0]
    %kb = constant 0.5 : bf16
    %hb = mul %sb, %kb : bf16
    %hf = cast %hb : f32
    %hh = cast %sh : f32
    %u = add %hf, %hh : f32
    %v = add %u, %sf : f32
    %vd = cast %v : f64
    store %vd, %a[%c1]
    %kz = constant [1.0, -1.0] : c32
    %z = mul %sz, %kz : c32
    %zw = cast %z : c64
    %zz = add %zw, %sw : c64
    %re = re %zz : f64
    %im = im %zz : f64
    store %re, %a[%c2]
    store %im, %a[%c3]
}
"""
    a = np.zeros(4)
    build(src).kernel("scal")(a, -3, 300, 70000, 2**40, 1.5, 3.0, 0.25, 1 + 2j, 0.5 - 0.5j, 11)
    assert a[0] == -3 + 300 + 70000 + 2**40 + 11
    assert a[1] == 1.5 + 1.5 + 0.25
    z = (1 + 2j) * (1 - 1j) + (0.5 - 0.5j)
    assert (a[2], a[3]) == (z.real, z.imag)
