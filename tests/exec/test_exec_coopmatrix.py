"""Cooperative matrices on the CPU OpenCL device against NumPy (docs/design.md §B3).

Every instruction over a grid of types, shapes (rows a power of two, columns not multiples of
16), transposes, checked flags at matrix edges and subgroup sizes. Several kernels share one
program so that the JIT (0.1-1 s per program) runs rarely. The layout oracle below is written
from docs/design.md §B3.1, independently of the converter's, and extract/insert tests write
component index maps to memory to pin the work-item layout down.

Arrays are column-major (Fortran order), as memrefs are.

Coverage (issue 4; T = .n/.t, shapes: M a power of two, N not a multiple of 16; the matrix
sizes are static by definition, the memrefs dynamic or static):
  load/store       all 4 T combos x 14 (type, shape): f32 f64 c32 c64 i8 i16 i32 f16 bf16
  checked ld/st    n,t x rows/cols/both, at both edges: f32 f64 c32 c64 i8 i16 i32 f16 bf16
  atomic ld/st     n,t x rows/cols/both checked: f32 f64 c32 c64 i64; .t.both across 4 groups
  atomic add/max/min  4 work-groups into the same C: f32 f64 i32 i64 (+ add for c32 c64)
  mul_add          15 type combos incl. f16/bf16 -> f32, mixed real/complex (here: .n loads)
  reduce           add/max/min x row/column: f32 f64 c32 c64 i8 i32 f16 bf16
  cast             acc -> a/b (same type and narrowing), widening, real -> complex
  apply, extract/insert, scale/construct/constant, arithmetic: f32 f64 c32 c64 f16 bf16 + ints
  prefetch         inside every mul_add kernel
The gemm grid (all 4 T x f32/f64/c32/c64/f16->f32/bf16->f32 x 8 dynamic shapes, checked and
atomic stores from several work-groups) is in test_exec_coopmatrix_tiles.py.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings

import numpy as np
import pytest

from .support import NP_DTYPE, _device_or_none, bf16_bits, bf16_value, build

pytestmark = pytest.mark.timeout(300, method="thread")

RNG = np.random.default_rng(1234)
NP = NP_DTYPE  # bf16 as raw uint16 bits
SIZE = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8}
SIZE |= {"c32": 8, "c64": 16}


# ---- layout oracle (docs/design.md §B3.1) -------------------------------------------------------------


@functools.cache
def layout(M: int, N: int, S: int, use: str, ty: str):
    I = min(M, S)  # noqa: E741
    J = -(-I * N // S) * S // I
    K = M // I
    K1 = max(1, 2 // SIZE[ty]) if use == "b" and K > 1 else 1
    V = I * J * K // S
    return I, J, K, K1, V


def element(M, N, S, use, ty, v, p):
    """(row, col) held by component v of lane p."""
    I, J, K, K1, V = layout(M, N, S, use, ty)  # noqa: E741
    k1, u, k2 = v % K1, v // K1 % J, v // (K1 * J)
    return p % I + (k1 + k2 * K1) * I, p // I + u * (S // I)


# ---- helpers -------------------------------------------------------------------------------------


def F(a) -> np.ndarray:
    return np.asfortranarray(a)


def rand(ty: str, shape, lo=-8, hi=8) -> np.ndarray:
    """Values exactly representable in every type of the test (small integers / 4)."""
    x = RNG.integers(lo, hi, size=shape)
    if ty == "bf16":
        return F(bf16_bits(x / 4))
    if ty.startswith("c"):
        y = RNG.integers(lo, hi, size=shape)
        return F((x / 4 + 1j * y / 4).astype(NP[ty]))
    if ty.startswith("f"):
        return F((x / 4).astype(NP[ty]))
    return F(x.astype(NP[ty]))


def value(ty: str, a) -> np.ndarray:
    """Numeric values of an array (bf16 bits -> float32)."""
    return bf16_value(a) if ty == "bf16" else np.asarray(a)


def lit(ty: str, x) -> str:
    """A constant literal of type ty."""
    if ty.startswith("c"):
        x = complex(x)
        return f"[{float(x.real)!r}, {float(x.imag)!r}]"
    return repr(float(x)) if ty.startswith(("f", "bf")) else str(int(x))


def zero(ty: str) -> str:
    return lit(ty, 0)


def func(name: str, params: str, body: str, S: int, wgs: int | None = None) -> str:
    attrs = f"attributes {{subgroup_size={S}, work_group_size=[{wgs or S},1]}}"
    return f"func @{name}({params}) {attrs} {{\n    parallel {{\n{body}\n    }}\n}}\n"


def cm(ty: str, M: int, N: int, use: str) -> str:
    return f"coopmatrix<{ty}x{M}x{N},matrix_{use}>"


@functools.cache
def build_generic(text: str):
    """`text` built for the CPU device without subgroup block IO (forces the generic path)."""
    from tinytc_py.runtime import device
    from tinytc_py.runtime.opencl import core_info_for, program
    from tinytc_py.target.core_info import SpirvFeature

    build_device()  # skips without a device
    info = dataclasses.replace(core_info_for(device.default_device()))
    info.spirv_features = set(info.spirv_features) - {SpirvFeature.subgroup_buffer_block_io}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return program(text, core_info=info)


def build_device() -> None:
    if _device_or_none() is None:
        pytest.skip("no SPIR-V capable OpenCL device")


def programs(text: str):
    """The program, and if it uses subgroup block IO also the one forced onto the generic path."""
    from tinytc_py.spirv import dump

    prog = build(text)
    if "OpSubgroupBlock" not in dump(prog.binary.data):
        return [prog]
    return [prog, build_generic(text)]


# ---- load / store --------------------------------------------------------------------------------

# (type, M, N, S): M a power of two, N not a multiple of 16
LOAD_STORE = [
    ("f32", 8, 5, 16),
    ("f32", 16, 13, 16),
    ("f32", 32, 17, 8),
    ("f32", 64, 24, 32),
    ("f64", 16, 17, 16),
    ("f64", 4, 13, 8),
    ("c32", 32, 5, 16),
    ("c64", 16, 13, 8),
    ("i32", 64, 13, 16),
    ("i32", 2, 17, 32),
    ("i8", 32, 17, 16),
    ("i16", 16, 24, 8),
    ("f16", 32, 13, 16),
    ("bf16", 16, 5, 16),
]


@pytest.mark.parametrize("ty,M,N,S", LOAD_STORE)
def test_load_store_transposes(ty, M, N, S):
    """load.{n,t} at an offset from a larger dynamic memref, store.{n,t} into static and
    dynamic ones; `.t` loads read the transposed window."""
    T = f"memref<{ty}x?x?>"
    mt = cm(ty, M, N, "acc")
    body = ""
    cases = [("n", "n"), ("t", "n"), ("n", "t"), ("t", "t")]
    for k, (ta, tb) in enumerate(cases):
        body += f"""        %a{k} = cooperative_matrix_load.{ta} %A[%x,%y] : {mt}
        cooperative_matrix_store.{tb} %a{k}, %B{k}[%c0,%c0]
"""
    body = "        %c0 = constant 0 : index\n" + body
    params = f"%A: {T}, " + ", ".join(
        f"%B{k}: memref<{ty}x{M if tb == 'n' else N}x{N if tb == 'n' else M}>"
        for k, (_, tb) in enumerate(cases)
    )
    text = func("ls", params + ", %x: index, %y: index", body, S)
    x, y = 3, 2
    A = rand(ty, (M + N + 5, M + N + 4))
    for prog in programs(text):
        Bs = [np.zeros((M, N) if tb == "n" else (N, M), NP[ty], order="F") for _, tb in cases]
        prog.kernel("ls")(A, *Bs, x, y)
        for (ta, tb), B in zip(cases, Bs, strict=True):
            tile = A[x : x + M, y : y + N] if ta == "n" else A[x : x + N, y : y + M].T
            np.testing.assert_array_equal(B if tb == "n" else B.T, tile, err_msg=f"{ta}{tb}")


def test_store_at_row_computed_in_floating_point():
    """Row 2x, computed as (4x as f32) * 0.5: a float -> index cast carries no divisor, so the
    store must not take the block-IO path, which needs a row that is a multiple of 4 (16 bytes;
    the gcd analysis once passed 4x's divisor through the floats)."""
    from tinytc_py.spirv import dump

    body = """        %c0 = constant 0 : index
        %c4 = constant 4 : index
        %x4 = mul %x, %c4 : index
        %f = cast %x4 : f32
        %half = constant 0.5 : f32
        %h = mul %f, %half : f32
        %row = cast %h : index
        %a = cooperative_matrix_load %A[%row,%c0] : coopmatrix<f32x32x5,matrix_acc>
        cooperative_matrix_store %a, %B[%row,%c0]"""
    text = func("rowf", "%A: memref<f32x64x5>, %B: memref<f32x64x5>, %x: index", body, 16)
    prog = build(text)
    assert "OpSubgroupBlockWriteINTEL" not in dump(prog.binary.data)
    A = rand("f32", (64, 5))
    B = np.zeros((64, 5), np.float32, order="F")
    prog.kernel("rowf")(A, B, 1)
    want = np.zeros_like(B)
    want[2:34] = A[2:34]
    np.testing.assert_array_equal(B, want)


@pytest.mark.parametrize(
    "ty,M,N,S,use,atomic",
    [
        ("f32", 16, 13, 16, "acc", ""),
        ("f32", 4, 13, 16, "acc", ""),
        ("i32", 32, 5, 8, "b", ""),
        ("i8", 64, 5, 16, "b", ""),
        ("f64", 8, 17, 32, "a", ""),
        ("c32", 16, 5, 8, "a", ""),
        ("i16", 32, 13, 16, "a", ""),
        ("c64", 8, 13, 8, "acc", ""),
        ("f16", 32, 5, 16, "b", ""),
        ("bf16", 16, 17, 8, "a", ""),
        # atomic load / store: small (the JIT of per-component atomics with checks is slow)
        ("f32", 8, 5, 8, "acc", "atomic_"),
        ("f64", 8, 3, 8, "acc", "atomic_"),
        ("c32", 8, 3, 8, "acc", "atomic_"),
        ("c64", 4, 3, 8, "acc", "atomic_"),
        ("i64", 8, 3, 8, "acc", "atomic_"),
    ],
)
def test_checked_load_store_at_edges(ty, M, N, S, use, atomic):
    """The tile overhangs an m x n window (a subview of a larger array, so unchecked accesses
    stay inside the allocation) at both ends: checked loads give zeros outside, checked stores
    write only inside; rows/cols/both with .n and .t; also with the atomic load / store."""
    mt = cm(ty, M, N, use)
    m, n = M - 1, max(N - 3, 1)
    D = max(M, N) + 2
    big = f"memref<{ty}x{m + 2 * D}x{n + 2 * D}>"
    win = f"memref<{ty}x{m}x{n},strided<1,{m + 2 * D}>>"
    cases = [(t, c) for t in ("n", "t") for c in ("rows", "cols", "both")]
    body = f"""        %c0 = constant 0 : index
        %Aw = subview %A[{D}:{m}, {D}:{n}] : {win}
"""
    for k, (t, chk) in enumerate(cases):
        body += f"""        %a{k} = cooperative_matrix_{atomic}load.{t}.{chk}_checked %Aw[%x,%y] : {mt}
        cooperative_matrix_store %a{k}, %T{k}[%c0,%c0]
        %Bw{k} = subview %B{k}[{D}:{m}, {D}:{n}] : {win}
        cooperative_matrix_{atomic}store.{t}.{chk}_checked %a{k}, %Bw{k}[%x,%y]
"""
    full = f"memref<{ty}x{M}x{N}>"
    params = ", ".join(
        [f"%A: {big}"]
        + [f"%T{k}: {full}, %B{k}: {big}" for k in range(len(cases))]
        + ["%x: index, %y: index"]
    )
    text = func("chk", params, body, S)
    A = rand(ty, (m + 2 * D, n + 2 * D))
    for x, y in ((-2, -1), (m - 3, n - 2)):
        for prog in programs(text):
            args = []
            for _ in cases:
                args += [np.full((M, N), 9, NP[ty], "F"), np.full(A.shape, 7, NP[ty], "F")]
            prog.kernel("chk")(A, *args, x, y)
            for k, (t, chk) in enumerate(cases):
                T, B = args[2 * k], args[2 * k + 1]
                expT = np.zeros((M, N), NP[ty])
                expB = np.full(A.shape, 7, NP[ty])
                for i in range(M):
                    for j in range(N):
                        r, c = (x + i, y + j) if t == "n" else (x + j, y + i)
                        ri, cj = (r, c) if t == "n" else (c, r)  # the tile's row / col in memory
                        ext_i, ext_j = (m, n) if t == "n" else (n, m)
                        ok_i = chk == "cols" or 0 <= ri < ext_i
                        ok_j = chk == "rows" or 0 <= cj < ext_j
                        if ok_i and ok_j:
                            expT[i, j] = A[D + r, D + c]
                            expB[D + r, D + c] = expT[i, j]
                np.testing.assert_array_equal(T, expT, err_msg=f"load {t}.{chk} at {x},{y}")
                np.testing.assert_array_equal(B, expB, err_msg=f"store {t}.{chk} at {x},{y}")


# ---- layout: extract / insert --------------------------------------------------------------------


@pytest.mark.parametrize(
    "ty,M,N,S,use",
    [
        ("f32", 8, 5, 16, "acc"),
        ("f32", 4, 13, 16, "b"),
        ("i32", 64, 13, 16, "acc"),
        ("i8", 32, 17, 8, "b"),
        ("i8", 16, 24, 16, "a"),
        ("f16", 16, 13, 8, "a"),
        ("f64", 2, 17, 32, "a"),
        ("c32", 32, 5, 16, "b"),
        ("c64", 8, 5, 8, "acc"),
        ("bf16", 32, 5, 16, "b"),
    ],
)
def test_extract_insert_layout(ty, M, N, S, use):
    """extract: out[p, v] = component v of lane p of a loaded matrix; insert: component v of
    lane p set to a code of (p, v), stored, lands at element(v, p) of §B3.1."""
    I, J, K, K1, V = layout(M, N, S, use, ty)  # noqa: E741
    mt = cm(ty, M, N, use)
    body = f"""        %c0 = constant 0 : index
        %p = subgroup_local_id : i32
        %pi = cast %p : index
        %a = cooperative_matrix_load %A[%c0,%c0] : {mt}
        %z = constant {zero(ty)} : {ty}
        %m0 = cooperative_matrix_construct %z : {mt}
"""
    for v in range(V):
        body += f"""        %e{v} = cooperative_matrix_extract %a[{v}] : {ty}
        %cv{v} = constant {v} : index
        store %e{v}, %X[%pi, %cv{v}]
        %w{v} = load %W[%pi, %cv{v}] : {ty}
        %m{v + 1} = cooperative_matrix_insert %w{v}, %m{v}[{v}] : {mt}
"""
    body += f"        cooperative_matrix_store %m{V}, %B[%c0,%c0]"
    params = f"%A: memref<{ty}x{M}x{N}>, %X: memref<{ty}x{S}x{V}>, %W: memref<{ty}x{S}x{V}>, "
    params += f"%B: memref<{ty}x{M}x{N}>"
    text = func("ei", params, body, S)
    A = rand(ty, (M, N), -100, 100)
    W = F(np.arange(S * V).reshape(S, V) % 97).astype(NP[ty])
    if ty == "bf16":
        W = bf16_bits(W)
    for prog in programs(text):
        X = np.full((S, V), 55, NP[ty], order="F")
        B = np.full((M, N), 55, NP[ty], order="F")
        prog.kernel("ei")(A, X, F(W), B)
        expB = np.full((M, N), 55, NP[ty])
        for p in range(S):
            for v in range(V):
                r, c = element(M, N, S, use, ty, v, p)
                assert X[p, v] == (A[r, c] if c < N else 0), (p, v, r, c)
                if c < N:
                    expB[r, c] = W[p, v]
        np.testing.assert_array_equal(B, expB)


def test_extract_index_out_of_bounds():
    from tinytc_py.compiler import compile_to_spirv
    from tinytc_py.errors import CompilationError, Status
    from tinytc_py.text.dialect import parse

    body = """        %z = constant 0.0 : f32
        %m = cooperative_matrix_construct %z : coopmatrix<f32x16x4,matrix_acc>
        %e = cooperative_matrix_extract %m[4] : f32
        %c0 = constant 0 : index
        store %e, %out[%c0]"""
    with pytest.raises(CompilationError) as e:
        compile_to_spirv(parse(func("k", "%out: memref<f32x1>", body, 16)))
    assert e.value.status is Status.ir_out_of_bounds


# ---- mul_add -------------------------------------------------------------------------------------

# (A type, B type, C type, D type, M, K, N, S)
MUL_ADD = [
    ("f32", "f32", "f32", "f32", 16, 8, 5, 16),
    ("f32", "f32", "f32", "f32", 32, 16, 13, 8),
    ("f32", "f32", "f32", "f64", 64, 4, 17, 32),
    ("f64", "f64", "f64", "f64", 16, 16, 24, 16),
    ("c32", "c32", "c32", "c32", 16, 8, 5, 8),
    ("c64", "c64", "c64", "c64", 8, 4, 13, 8),
    ("f32", "c32", "c32", "c32", 16, 8, 5, 16),
    ("c32", "f32", "c64", "c64", 16, 4, 13, 16),
    ("i32", "i32", "i32", "i32", 32, 8, 13, 16),
    ("i8", "i8", "i32", "i32", 32, 32, 13, 16),
    ("i8", "i16", "i32", "f32", 16, 8, 17, 8),
    ("f16", "f16", "f32", "f32", 16, 16, 17, 16),
    ("bf16", "bf16", "f32", "f32", 32, 8, 5, 8),
    ("bf16", "bf16", "bf16", "bf16", 16, 8, 5, 16),
    ("f16", "f16", "f16", "f16", 16, 8, 13, 16),
]


@pytest.mark.parametrize("ta,tb,tc,td,M,K,N,S", MUL_ADD)
def test_mul_add(ta, tb, tc, td, M, K, N, S):
    body = f"""        %c0 = constant 0 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : {cm(ta, M, K, "a")}
        %b = cooperative_matrix_load %B[%c0,%c0] : {cm(tb, K, N, "b")}
        %c = cooperative_matrix_load %C[%c0,%c0] : {cm(tc, M, N, "acc")}
        cooperative_matrix_prefetch 1, %A[%c0,%c0], {M}, {K}
        %d = cooperative_matrix_mul_add %a, %b, %c : {cm(td, M, N, "acc")}
        cooperative_matrix_store %d, %D[%c0,%c0]"""
    params = (
        f"%A: memref<{ta}x{M}x{K}>, %B: memref<{tb}x{K}x{N}>, %C: memref<{tc}x{M}x{N}>, "
        f"%D: memref<{td}x{M}x{N}>"
    )
    A, B, C = rand(ta, (M, K), -4, 4), rand(tb, (K, N), -4, 4), rand(tc, (M, N))
    D = np.zeros((M, N), NP[td], order="F")
    build(func("mma", params, body, S)).kernel("mma")(A, B, C, D)
    exp = value(ta, A).astype(np.complex128) @ value(tb, B) + value(tc, C)
    got = value(td, D)
    if not (td.startswith("c") or any(t.startswith("c") for t in (ta, tb))):
        exp = exp.real
    np.testing.assert_allclose(got, exp, rtol=1e-2 if "16" in td else 1e-6)


def test_mul_add_rows_not_multiple_of_subgroup_size():
    from tinytc_py.compiler import compile_to_spirv
    from tinytc_py.errors import CompilationError, Status
    from tinytc_py.text.dialect import parse

    body = f"""        %z = constant 0.0 : f32
        %a = cooperative_matrix_construct %z : {cm("f32", 8, 8, "a")}
        %b = cooperative_matrix_construct %z : {cm("f32", 8, 8, "b")}
        %c = cooperative_matrix_construct %z : {cm("f32", 8, 8, "acc")}
        %d = cooperative_matrix_mul_add %a, %b, %c : {cm("f32", 8, 8, "acc")}
        %c0 = constant 0 : index
        cooperative_matrix_store %d, %D[%c0,%c0]"""
    with pytest.raises(CompilationError) as e:
        compile_to_spirv(parse(func("k", "%D: memref<f32x8x8>", body, 16)))
    assert e.value.status is Status.ir_unsupported_coopmatrix_shape


# ---- reduce --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ty,M,N,S,use",
    [
        ("f32", 16, 5, 16, "acc"),
        ("f32", 32, 13, 8, "a"),
        ("f64", 64, 17, 16, "acc"),
        ("i32", 32, 24, 32, "acc"),
        ("i8", 32, 13, 16, "b"),
        ("bf16", 16, 13, 8, "acc"),
        ("c32", 16, 17, 8, "acc"),
        ("c64", 8, 13, 8, "acc"),
        ("f16", 16, 5, 16, "a"),
    ],
)
def test_reduce(ty, M, N, S, use):
    ops = ["add"] if ty.startswith("c") else ["add", "max", "min"]
    body = f"""        %c0 = constant 0 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : {cm(ty, M, N, use)}
"""
    outs = []
    for op in ops:
        for mode, shape in (("row", (M, 1)), ("column", (1, N))):
            k = len(outs)
            rt = cm(ty, *shape, use)
            body += f"""        %r{k} = cooperative_matrix_reduce_{op}.{mode} %a : {rt}
        cooperative_matrix_store %r{k}, %R{k}[%c0,%c0]
"""
            outs.append((op, mode, shape))
    params = f"%A: memref<{ty}x{M}x{N}>, " + ", ".join(
        f"%R{k}: memref<{ty}x{s[0]}x{s[1]}>" for k, (_, _, s) in enumerate(outs)
    )
    A = rand(ty, (M, N), -20, 20)
    Rs = [np.zeros(s, NP[ty], order="F") for _, _, s in outs]
    build(func("red", params, body, S)).kernel("red")(A, *Rs)
    a = value(ty, A)
    fn = {"add": np.sum, "max": np.max, "min": np.min}
    for (op, mode, _), R in zip(outs, Rs, strict=True):
        exp = fn[op](a, axis=1 if mode == "row" else 0, keepdims=True)
        if ty in ("i8",):
            exp = exp.astype(np.int64).astype(np.int8)  # wraps like the device
        np.testing.assert_allclose(value(ty, R), exp, rtol=1e-2 if "16" in ty else 1e-6)


# ---- atomics -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ty,M,N,S",
    [("f32", 16, 13, 16), ("f64", 8, 5, 16), ("i32", 16, 17, 8), ("i64", 16, 5, 8)]
    + [("c32", 16, 5, 16), ("c64", 4, 13, 8)],
)
def test_atomics_from_several_work_groups(ty, M, N, S):
    """Four work-groups add (and max/min) their matrix into the same C; atomic_load/store copy
    a checked window; the value returned by atomic_add is C's previous content."""
    mt = cm(ty, M, N, "acc")
    real = not ty.startswith("c")
    body = f"""        %c0 = constant 0 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : {mt}
        %g = group_id.x : index
        %gi = cast %g : {ty}
        %gm = cooperative_matrix_construct %gi : {mt}
        %ag = add %a, %gm : {mt}
        %old = cooperative_matrix_atomic_add.device %ag, %C[%c0,%c0] : {mt}
        %one = constant 1 : index
        %first = equal %g, %one : bool
        if %first {{
            cooperative_matrix_store %old, %O[%c0,%c0]
        }}
"""
    if real:
        body += f"""        %mx = cooperative_matrix_atomic_max.device %ag, %X[%c0,%c0] : {mt}
        %mn = cooperative_matrix_atomic_min.device.relaxed %ag, %Y[%c0,%c0] : {mt}
"""
    body += f"""        %l = cooperative_matrix_atomic_load.t.both_checked %A[%c0,%c0] : {cm(ty, 1 << (N - 1).bit_length(), M, "acc")}
        cooperative_matrix_atomic_store.t.both_checked.device.relaxed %l, %L[%c0,%c0]
"""
    params = f"%A: memref<{ty}x{M}x{N}>, %C: memref<{ty}x{M}x{N}>, %O: memref<{ty}x{M}x{N}>, "
    params += f"%X: memref<{ty}x{M}x{N}>, %Y: memref<{ty}x{M}x{N}>, %L: memref<{ty}x?x?>"
    A, C0 = rand(ty, (M, N)), rand(ty, (M, N))
    C, O, X, Y = C0.copy(order="F"), np.zeros_like(C0), rand(ty, (M, N)), rand(ty, (M, N))
    L = np.zeros((M + 1, N + 1), NP[ty], order="F")
    X0, Y0 = X.copy(), Y.copy()
    build(func("at", params, body, S)).kernel("at")(A, C, O, X, Y, L, num_groups=4)
    np.testing.assert_allclose(C, C0 + 4 * A + 6)
    # group 1's old value: C0 plus the contributions A + g of some subset of the other groups
    subsets = [[g for i, g in enumerate((0, 2, 3)) if mask >> i & 1] for mask in range(8)]
    olds = np.stack([C0 + len(sub) * A + sum(sub) for sub in subsets])
    for part in (np.real, np.imag):  # the parts of a complex atomic update are independent
        assert np.all(np.any(part(olds) == part(O), axis=0))
    if real:
        np.testing.assert_array_equal(X, np.maximum(X0, A + 3))
        np.testing.assert_array_equal(Y, np.minimum(Y0, A))
    np.testing.assert_array_equal(L[:M, :N], A)
    assert not L[M:].any() and not L[:, N:].any()


# ---- component-wise: arithmetic, cast, constant, construct, scale --------------------------------

BINARY = {
    "int": ["add", "sub", "mul", "div", "rem", "max", "min", "shl", "shr", "and", "or", "xor"],
    "float": ["add", "sub", "mul", "div", "rem", "max", "min"],
    "complex": ["add", "sub", "mul", "div"],
}
UNARY = {"int": ["neg", "abs", "not"], "float": ["neg", "abs"]}
UNARY["complex"] = ["neg", "conj", "abs", "re", "im"]


def np_binary(op, a, b):
    if op == "div" and a.dtype.kind in "iu":
        return (np.trunc(a / b)).astype(a.dtype)
    if op == "rem":
        return np.fmod(a, b).astype(a.dtype)
    return {
        "add": np.add,
        "sub": np.subtract,
        "mul": np.multiply,
        "div": np.divide,
        "max": np.maximum,
        "min": np.minimum,
        "shl": np.left_shift,
        "shr": np.right_shift,
        "and": np.bitwise_and,
        "or": np.bitwise_or,
        "xor": np.bitwise_xor,
    }[op](a, b)


def np_unary(op, a):
    return {
        "neg": np.negative,
        "abs": np.abs,
        "not": np.invert,
        "conj": np.conj,
        "re": np.real,
        "im": np.imag,
    }[op](a)


@pytest.mark.parametrize(
    "ty,M,N,S,use",
    [
        ("i32", 16, 13, 16, "acc"),
        ("i16", 8, 5, 16, "a"),
        ("f32", 32, 5, 8, "b"),
        ("f64", 4, 17, 8, "acc"),
        ("bf16", 16, 5, 16, "acc"),
        ("c32", 16, 5, 16, "acc"),
        ("c64", 8, 13, 8, "b"),
        ("f16", 16, 13, 16, "a"),
    ],
)
def test_arith_component_wise(ty, M, N, S, use):
    fam = "int" if ty.startswith("i") else "complex" if ty.startswith("c") else "float"
    mt = cm(ty, M, N, use)
    body = f"""        %c0 = constant 0 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : {mt}
        %b = cooperative_matrix_load %B[%c0,%c0] : {mt}
"""
    outs = []
    for op in BINARY[fam]:
        k = len(outs)
        body += f"        %r{k} = {op} %a, %b : {mt}\n"
        body += f"        cooperative_matrix_store %r{k}, %R{k}[%c0,%c0]\n"
        outs.append(("b", op, ty))
    for op in UNARY[fam]:
        k = len(outs)
        rty = (
            {"c32": "f32", "c64": "f64"}[ty]
            if fam == "complex" and op in ("abs", "re", "im")
            else ty
        )
        body += f"        %r{k} = {op} %a : {cm(rty, M, N, use)}\n"
        body += f"        cooperative_matrix_store %r{k}, %R{k}[%c0,%c0]\n"
        outs.append(("u", op, rty))
    params = f"%A: memref<{ty}x{M}x{N}>, %B: memref<{ty}x{M}x{N}>, " + ", ".join(
        f"%R{k}: memref<{t}x{M}x{N}>" for k, (_, _, t) in enumerate(outs)
    )
    A = rand(ty, (M, N), -30, 30)
    B = rand(ty, (M, N), 1, 6)  # positive: valid shift counts and divisors
    if fam == "float":
        B = F(np.where(RNG.random((M, N)) < 0.5, B, rand(ty, (M, N), -6, -1)))
    Rs = [np.zeros((M, N), NP[t], order="F") for _, _, t in outs]
    build(func("ar", params, body, S)).kernel("ar")(A, B, *Rs)
    a, b = value(ty, A), value(ty, B)
    for (kind, op, t), R in zip(outs, Rs, strict=True):
        exp = np_binary(op, a, b) if kind == "b" else np_unary(op, a)
        if ty == "bf16":
            exp = bf16_value(bf16_bits(exp))
        np.testing.assert_allclose(value(t, R), exp, rtol=1e-3 if ty == "f16" else 1e-6, err_msg=op)


@pytest.mark.parametrize(
    "src,dst,M,N,S,use",
    [
        ("i32", "i8", 32, 13, 16, "b"),  # matrix_acc -> matrix_b permutes components (K1 = 2)
        ("i32", "i8", 16, 5, 8, "a"),
        ("f32", "f16", 16, 17, 16, "a"),
        ("f32", "bf16", 32, 5, 8, "b"),
        ("i32", "f64", 8, 13, 16, "acc"),
        ("f32", "c32", 16, 5, 16, "acc"),
        ("c32", "c64", 16, 5, 16, "b"),
        ("bf16", "f32", 16, 13, 16, "acc"),
        # acc -> a / b of the same type (a result fed into another mul_add), narrowing
        ("f32", "f32", 16, 13, 16, "a"),
        ("f64", "f64", 8, 5, 8, "b"),
        ("c64", "c64", 8, 13, 8, "a"),
        ("c32", "c32", 16, 5, 16, "b"),
        ("f32", "f16", 32, 5, 16, "b"),
        ("f64", "f32", 16, 13, 8, "acc"),
        ("c64", "c32", 8, 5, 8, "b"),
    ],
)
def test_cast(src, dst, M, N, S, use):
    body = f"""        %c0 = constant 0 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : {cm(src, M, N, "acc")}
        %b = cast %a : {cm(dst, M, N, use)}
        cooperative_matrix_store %b, %B[%c0,%c0]"""
    params = f"%A: memref<{src}x{M}x{N}>, %B: memref<{dst}x{M}x{N}>"
    A = rand(src, (M, N), -60, 60)
    B = np.zeros((M, N), NP[dst], order="F")
    build(func("cast", params, body, S)).kernel("cast")(A, B)
    exp = value(src, A)
    if dst == "bf16":
        exp = bf16_value(bf16_bits(exp))
    np.testing.assert_array_equal(value(dst, B), exp.astype(value(dst, B).dtype))


@pytest.mark.parametrize(
    "ty,M,N,S",
    [("f32", 16, 13, 16), ("c64", 4, 5, 8), ("i8", 32, 24, 8), ("f64", 8, 17, 8)]
    + [("c32", 16, 5, 16), ("f16", 32, 13, 16), ("bf16", 16, 5, 8)],
)
def test_constant_construct_scale(ty, M, N, S):
    mt = cm(ty, M, N, "acc")
    body = f"""        %c0 = constant 0 : index
        %k = cooperative_matrix_construct %s : {mt}
        %z = constant {zero(ty)} : {mt}
        %t = constant {lit(ty, 3)} : {mt}
        %a = cooperative_matrix_load %A[%c0,%c0] : {mt}
        %sa = cooperative_matrix_scale %s, %a : {mt}
        %u = add %k, %t : {mt}
        %v = add %u, %sa : {mt}
        %w = add %v, %z : {mt}
        cooperative_matrix_store %w, %B[%c0,%c0]"""
    params = f"%A: memref<{ty}x{M}x{N}>, %B: memref<{ty}x{M}x{N}>, %s: {ty}"
    A = rand(ty, (M, N), -5, 5)
    B = np.zeros((M, N), NP[ty], order="F")
    s = 2.0 if ty == "bf16" else NP[ty](2 - 1j if ty.startswith("c") else 2)
    build(func("ccs", params, body, S)).kernel("ccs")(A, B, s)
    np.testing.assert_array_equal(value(ty, B), s + 3 + s * value(ty, A))  # all exact


# ---- control flow: loop-carried and if-yielded coopmatrices --------------------------------------


@pytest.mark.parametrize("S", [8, 16, 32])
def test_gemm_loop_carried_accumulator(S):
    """C = A*B accumulated over K in chunks of 8 (for with a coopmatrix iter_arg), then an if
    yields either the result or its negation; 2x2 work-groups each do one 32x13 tile."""
    M, N, Kc, Kt = 32, 13, 8, 40
    body = f"""        %gm = group_id.x : index
        %gn = group_id.y : index
        %cM = constant {M} : index
        %cN = constant {N} : index
        %m0 = mul %gm, %cM : index
        %n0 = mul %gn, %cN : index
        %c0 = constant 0 : index
        %cK = constant {Kt} : index
        %cKc = constant {Kc} : index
        %one = constant 1 : i32
        %isneg = equal %neg, %one : bool
        %c = constant 0.0 : {cm("f32", M, N, "acc")}
        %acc = for %k=%c0,%cK,%cKc init(%x=%c) -> ({cm("f32", M, N, "acc")}) {{
            %a = cooperative_matrix_load %A[%m0,%k] : {cm("f32", M, Kc, "a")}
            %b = cooperative_matrix_load %B[%k,%n0] : {cm("f32", Kc, N, "b")}
            %y = cooperative_matrix_mul_add %a, %b, %x : {cm("f32", M, N, "acc")}
            yield (%y)
        }}
        %r = if %isneg -> ({cm("f32", M, N, "acc")}) {{
            %ny = neg %acc : {cm("f32", M, N, "acc")}
            yield (%ny)
        }} else {{
            yield (%acc)
        }}
        cooperative_matrix_store %r, %C[%m0,%n0]"""
    params = "%A: memref<f32x?x?>, %B: memref<f32x?x?>, %C: memref<f32x?x?>, %neg: i32"
    A, B = rand("f32", (2 * M, Kt)), rand("f32", (Kt, 2 * N))
    prog = build(func("gemm", params, body, S))
    for neg in (0, 1):
        C = np.zeros((2 * M, 2 * N), np.float32, order="F")
        prog.kernel("gemm")(A, B, C, neg, num_groups=(2, 2))
        np.testing.assert_allclose(C, (-1) ** neg * (A @ B), rtol=1e-6)


@pytest.mark.parametrize(
    "ty,M,N,S,use",
    [
        ("f32", 16, 4, 16, "acc"),  # V = 4
        ("f64", 8, 3, 8, "acc"),  # V = 3
        ("i8", 32, 4, 16, "b"),  # V = 8 (K1 = 2)
        ("i16", 16, 16, 16, "acc"),  # V = 16
        ("f16", 16, 2, 16, "a"),  # V = 2
        ("bf16", 32, 8, 16, "b"),  # V = 16
        ("i32", 8, 5, 16, "acc"),  # V = 3, padding columns
        ("c32", 16, 4, 16, "acc"),  # V = 4 but complex: no vector form
    ],
)
def test_vector_held_values_through_control_flow(ty, M, N, S, use):
    """Matrices of 2, 3, 4, 8, 16 components cross phis as one vector (constants as constant
    composites): R = 3A summed in a loop from a zero constant; extract and insert on the loop's
    result; an if yields 2R (components of R made in its then-block) or R with component 0 set
    to W[p], plus a constant 2; R's components are needed again after the if."""
    I, J, K, K1, V = layout(M, N, S, use, ty)  # noqa: E741
    mt = cm(ty, M, N, use)
    body = f"""        %c0 = constant 0 : index
        %c3 = constant 3 : index
        %one = constant 1 : i32
        %p = subgroup_local_id : i32
        %pi = cast %p : index
        %then = equal %flag, %one : bool
        %a = cooperative_matrix_load %A[%c0,%c0] : {mt}
        %z = constant {zero(ty)} : {mt}
        %k = constant {lit(ty, 2)} : {mt}
        %r = for %i=%c0,%c3 init(%x=%z) -> ({mt}) {{
            %y = add %x, %a : {mt}
            yield (%y)
        }}
        %e = cooperative_matrix_extract %r[{V - 1}] : {ty}
        store %e, %X[%pi]
        %w = load %W[%pi] : {ty}
        %s = cooperative_matrix_insert %w, %r[0] : {mt}
        %t = if %then -> ({mt}) {{
            %d = add %r, %r : {mt}
            yield (%d)
        }} else {{
            %u = add %s, %k : {mt}
            yield (%u)
        }}
        %q = sub %t, %r : {mt}
        cooperative_matrix_store %q, %B[%c0,%c0]"""
    params = f"%A: memref<{ty}x{M}x{N}>, %X: memref<{ty}x{S}>, %W: memref<{ty}x{S}>, "
    params += f"%B: memref<{ty}x{M}x{N}>, %flag: i32"
    A = rand(ty, (M, N))
    W = (np.arange(S) % 7).astype(np.float32 if ty == "bf16" else NP[ty])
    R = 3 * value(ty, A)
    for prog in programs(func("vh", params, body, S)):
        for flag in (0, 1):
            X = np.full(S, 55, NP[ty])
            B = np.zeros((M, N), NP[ty], order="F")
            Wd = bf16_bits(W) if ty == "bf16" else W
            prog.kernel("vh")(A, X, Wd, B, flag)
            expX = np.zeros(S, R.dtype)
            expB = R.copy() if flag else np.full((M, N), 2, R.dtype)
            for p in range(S):
                r, c = element(M, N, S, use, ty, V - 1, p)
                expX[p] = R[r, c] if c < N else 0
                r, c = element(M, N, S, use, ty, 0, p)
                if c < N and not flag:
                    expB[r, c] = W[p] + 2 - R[r, c]
            np.testing.assert_array_equal(value(ty, X), expX)
            np.testing.assert_array_equal(value(ty, B), expB)


# ---- cooperative_matrix_apply (lowered by lower-coopmatrix) --------------------------------------


@pytest.mark.parametrize(
    "ty,M,N,S,use",
    [
        ("f32", 16, 13, 16, "acc"),
        ("f32", 4, 13, 16, "acc"),  # padding columns: guarded clones
        ("i32", 32, 5, 8, "b"),
        ("i8", 64, 5, 16, "b"),  # K1 = 2
        ("f64", 8, 17, 32, "a"),
        ("c32", 16, 5, 8, "acc"),
        ("c64", 8, 5, 8, "b"),
        ("f16", 16, 13, 16, "a"),
        ("bf16", 16, 5, 8, "acc"),
    ],
)
def test_apply(ty, M, N, S, use):
    """%1[i,j] = (i <= j ? 2*%0[i,j] : 0) + i - j, through an if inside the apply body."""
    mt = cm(ty, M, N, use)
    body = f"""        %c0 = constant 0 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : {mt}
        %r = cooperative_matrix_apply (%i,%j,%v)=%a -> {mt} {{
            %mask = less_than_equal %i, %j : bool
            %w = if %mask -> ({ty}) {{
                %two = constant {lit(ty, 2)} : {ty}
                %x = mul %two, %v : {ty}
                yield (%x)
            }} else {{
                %z = constant {zero(ty)} : {ty}
                yield (%z)
            }}
            %d = sub %i, %j : i32
            %dc = cast %d : {ty}
            %y = add %w, %dc : {ty}
            yield (%y)
        }}
        cooperative_matrix_store %r, %B[%c0,%c0]"""
    params = f"%A: memref<{ty}x{M}x{N}>, %B: memref<{ty}x{M}x{N}>"
    A = rand(ty, (M, N), -20, 20)
    B = np.zeros((M, N), NP[ty], order="F")
    build(func("ap", params, body, S)).kernel("ap")(A, B)
    i, j = np.indices((M, N))
    a = value(ty, A)
    exp = (np.where(i <= j, 2 * a, 0) + (i - j)).astype(a.dtype)  # exact in every type
    np.testing.assert_array_equal(value(ty, B), exp)
