"""foreach_tile, and a gemm written with cooperative-matrix instructions inside foreach_tile, on
the CPU OpenCL device against NumPy.

The coopmatrix gemm (`_cmm_kernel`) is C := alpha op1(A) op2(B) + beta C over dynamic m x n x k:
foreach_tile over C's tiles (remainder tiles included), a K loop of checked transposed /
non-transposed loads of matrix_a / matrix_b, mul_add into a loop-carried matrix_acc,
cooperative_matrix_scale, then a checked (remainder tiles) or unchecked (full tiles) store; the
atomic kernel instead atomically adds (or stores) into C from GROUPS work-groups, checked.

Coverage (issue 4):
  coopmatrix gemm  all 4 transposes x f32 f64 c32 c64 f16->f32 bf16->f32 f32xc32->c32
                   x 8 dynamic shapes (1..100, mostly not multiples of 16 or of the tile),
                   beta at run time (0 included)
  atomic gemm      one transpose combination per type (each combination at least once) x
                   f32 f64 c32 c64 f16->f32 bf16->f32 x 8 shapes, atomic add and atomic store
  foreach_tile     2-d (6 types, 7 shapes, offsets != 0), 1-d, 3-d; every tile must run once
                   with the right offset and size (tile size codes written at tile origins)
Tolerances and data come from test_exec_linalg (one program per type).
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

from .support import build
from .test_exec_linalg import (
    GEMM_SHAPES,
    GROUPS,
    NP,
    RNG_SEED,
    TRANSPOSES,
    TYPES3,
    alpha_of,
    beta_of,
    check,
    const,
    get,
    nan_like,
    op_t,
    rand,
)

pytestmark = pytest.mark.timeout(300, method="thread")

# (A, B, C) -> (subgroup size, tile rows, tile cols, K chunk); small tiles: the JIT time of a
# coopmatrix kernel grows quickly with the tile (a bf16 kernel with a 16-row matrix_b: ~4 s)
CMM_TILES = {
    ("f32", "f32", "f32"): (16, 16, 8, 8),
    ("f64", "f64", "f64"): (8, 16, 4, 8),
    ("c32", "c32", "c32"): (16, 16, 4, 4),
    ("c64", "c64", "c64"): (8, 8, 4, 4),
    ("f16", "f16", "f32"): (16, 16, 4, 8),
    ("bf16", "bf16", "f32"): (8, 8, 4, 8),
    ("f32", "c32", "c32"): (32, 32, 4, 8),
}
# the transposes of the .atomic kernel of each type but f32 x c32 (atomic updates cost JIT time)
CMM_ATOMIC = dict(zip(TYPES3[:6], TRANSPOSES + TRANSPOSES[:2], strict=True))
assert set(CMM_TILES) == set(TYPES3)


def cm(ty: str, M: int, N: int, use: str) -> str:
    return f"coopmatrix<{ty}x{M}x{N},matrix_{use}>"


_CMM = """
func @{name}(%alpha: {tc}, %A: memref<{ta}x?x?>, %B: memref<{tb}x?x?>, %beta: {tc},
             %C: memref<{tc}x?x?>, %mode: i32)
    attributes {{subgroup_size={S}, work_group_size=[{S2},2]}} {{
    %c0 = constant 0 : index
    %m = size %C[0] : index
    %n = size %C[1] : index
    %k = size %A[{k_mode}] : index
    %one = constant 1 : i32
    %is_store = equal %mode, %one : bool
    foreach_tile (%i,%j)=(%c0,%c0),(%m,%n) as (%ti,%tj)<=({TM},{TN}) {{
        %kc = constant {KC} : index
        %z = constant {zero} : {tc}
        %acc0 = cooperative_matrix_construct %z : {acc}
        %acc = for %l=%c0,%k,%kc init(%x=%acc0) -> ({acc}) {{
            %a = cooperative_matrix_load.{t1}.both_checked %A[{a_pos}] : {a_t}
            %b = cooperative_matrix_load.{t2}.both_checked %B[{b_pos}] : {b_t}
            %y = cooperative_matrix_mul_add %a, %b, %x : {acc}
            yield (%y)
        }}
        %r = cooperative_matrix_scale %alpha, %acc : {acc}
{tail}
    }}
}}
"""


def _cmm_kernel(ta: str, tb: str, tc: str, t1: str, t2: str, atomic: bool = False) -> str:
    """C := alpha op1(A) op2(B) + beta C, or with `atomic` (%beta ignored): %mode 0 atomically
    adds alpha op1(A) op2(B) to C, %mode 1 atomically stores it."""
    S, TM, TN, KC = CMM_TILES[(ta, tb, tc)]
    acc = cm(tc, TM, TN, "acc")
    if atomic:
        tail = f"""        if %is_store {{
            cooperative_matrix_atomic_store.both_checked.device %r, %C[%i,%j]
        }} else {{
            %old = cooperative_matrix_atomic_add.both_checked.device %r, %C[%i,%j] : {acc}
        }}"""
    else:
        tail = f"""        %c = cooperative_matrix_load.both_checked %C[%i,%j] : {acc}
        %bc = cooperative_matrix_scale %beta, %c : {acc}
        %d = add %r, %bc : {acc}
        %ctm = constant {TM} : index
        %ctn = constant {TN} : index
        %full_m = equal %ti, %ctm : bool
        %full_n = equal %tj, %ctn : bool
        %full = and %full_m, %full_n : bool
        if %full {{
            cooperative_matrix_store %d, %C[%i,%j]
        }} else {{
            cooperative_matrix_store.both_checked %d, %C[%i,%j]
        }}"""
    return _CMM.format(
        name=f"cmm{'_atomic' if atomic else ''}_{t1}{t2}",
        ta=ta,
        tb=tb,
        tc=tc,
        S=S,
        S2=2 * S,
        TM=TM,
        TN=TN,
        KC=KC,
        zero=const(tc, 0),
        acc=acc,
        k_mode=0 if t1 == "t" else 1,
        a_pos="%l,%i" if t1 == "t" else "%i,%l",
        b_pos="%j,%l" if t2 == "t" else "%l,%j",
        a_t=cm(ta, TM, KC, "a"),
        b_t=cm(tb, KC, TN, "b"),
        t1=t1,
        t2=t2,
        tail=tail,
    )


def _cmm_programs() -> dict[str, str]:
    out: dict[str, list[str]] = collections.defaultdict(list)
    for ta, tb, tc in TYPES3:
        for t1, t2 in TRANSPOSES:
            out[f"{ta}_{tb}_{tc}"].append(_cmm_kernel(ta, tb, tc, t1, t2))
        if (ta, tb, tc) in CMM_ATOMIC:
            out[f"{ta}_{tb}_{tc}"].append(_cmm_kernel(ta, tb, tc, *CMM_ATOMIC[(ta, tb, tc)], True))
    return {k: "\n".join(v) for k, v in out.items()}


CMM = _cmm_programs()


def _cmm_case(rng, ta, tb, t1, t2, m, n, k):
    A, a = rand(rng, ta, (k, m) if t1 == "t" else (m, k))
    B, b = rand(rng, tb, (n, k) if t2 == "t" else (k, n))
    return A, B, op_t(a, t1) @ op_t(b, t2), np.abs(op_t(a, t1)) @ np.abs(op_t(b, t2))


@pytest.mark.parametrize(("ta", "tb", "tc"), TYPES3)
@pytest.mark.parametrize(("t1", "t2"), TRANSPOSES)
def test_coopmatrix_gemm(ta, tb, tc, t1, t2):
    """C = alpha op1(A) op2(B) + beta C, beta given at run time (0 included)."""
    p = get(CMM[f"{ta}_{tb}_{tc}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha, beta = alpha_of(tc), beta_of(tc)
    for m, n, k in GEMM_SHAPES:
        A, B, ab, mag = _cmm_case(rng, ta, tb, t1, t2, m, n, k)
        for bt in (beta, 0.0):
            C, c = rand(rng, tc, (m, n))
            p.kernel(f"cmm_{t1}{t2}")(alpha, A, B, bt, C, 0)
            want = alpha * ab + bt * c
            what = f"cmm.{t1}.{t2} {ta}x{tb}->{tc} {m}x{n}x{k} beta={bt}"
            check(tc, C, want, abs(alpha) * mag + abs(bt) * np.abs(c), what)


@pytest.mark.parametrize(
    ("ta", "tb", "tc", "t1", "t2"), [(*ty, *t) for ty, t in CMM_ATOMIC.items()]
)
def test_coopmatrix_gemm_atomic(ta, tb, tc, t1, t2):
    """GROUPS work-groups atomically add alpha op1(A) op2(B) into the same C (checked atomic
    add), or atomically store it over NaN (checked atomic store)."""
    p = get(CMM[f"{ta}_{tb}_{tc}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha = alpha_of(tc)
    kernel = p.kernel(f"cmm_atomic_{t1}{t2}")
    for m, n, k in GEMM_SHAPES:
        A, B, ab, mag = _cmm_case(rng, ta, tb, t1, t2, m, n, k)
        what = f"cmm.atomic.{t1}.{t2} {ta}x{tb}->{tc} {m}x{n}x{k}"
        C, c = rand(rng, tc, (m, n))
        kernel(alpha, A, B, 0.0, C, 0, num_groups=GROUPS)
        mag1 = GROUPS * abs(alpha) * mag + 1
        check(tc, C, c + GROUPS * alpha * ab, mag1, f"{what} atomic add x{GROUPS}")
        C = nan_like(tc, (m, n))
        kernel(alpha, A, B, 0.0, C, 1, num_groups=GROUPS)
        check(tc, C, alpha * ab, abs(alpha) * mag, f"{what} atomic store x{GROUPS}")


# ---- foreach_tile --------------------------------------------------------------------------------

FT_TYPES = ["f32", "f64", "c32", "c64", "f16", "bf16"]
FT_TILE = (16, 5)  # tile shape of the 2-d kernels (subgroup size 8, 2x2 subgroups)


def _foreach_tile_program() -> str:
    out = []
    TM, TN = FT_TILE
    for ty in FT_TYPES:
        mt = cm(ty, TM, TN, "acc")
        out.append(f"""
func @tile2_{ty}(%A: memref<{ty}x?x?>, %B: memref<{ty}x?x?>, %T: memref<i32x?x?>, %lo0: index,
                 %lo1: index) attributes {{subgroup_size=8, work_group_size=[16,2]}} {{
    %m = size %A[0] : index
    %n = size %A[1] : index
    foreach_tile (%i,%j)=(%lo0,%lo1),(%m,%n) as (%ti,%tj)<=({TM},{TN}) {{
        %ctm = constant {TM} : index
        %ctn = constant {TN} : index
        %rem_m = less_than %ti, %ctm : bool
        %rem_n = less_than %tj, %ctn : bool
        %rem = or %rem_m, %rem_n : bool
        if %rem {{
            %t = cooperative_matrix_load.both_checked %A[%i,%j] : {mt}
            cooperative_matrix_store.both_checked %t, %B[%i,%j]
        }} else {{
            %t = cooperative_matrix_load %A[%i,%j] : {mt}
            cooperative_matrix_store %t, %B[%i,%j]
        }}
        %c100 = constant 100 : index
        %code0 = mul %ti, %c100 : index
        %code1 = add %code0, %tj : index
        %code = cast %code1 : i32
        store %code, %T[%i,%j]
    }}
}}
""")
    # 1-d and 3-d (dims >= 2 become loops): element copies by the lanes of a subgroup
    out.append("""
func @tile1(%A: memref<f32x?>, %B: memref<f32x?>, %T: memref<i32x?>, %lo: index)
    attributes {subgroup_size=8, work_group_size=[24,1]} {
    %n = size %A[0] : index
    foreach_tile (%i)=(%lo),(%n) as (%t)<=(16) {
        %c0 = constant 0 : index
        %c8 = constant 8 : index
        %p = subgroup_local_id : i32
        %pi = cast %p : index
        for %r=%c0,%t,%c8 {
            %rr = add %r, %pi : index
            %inb = less_than %rr, %t : bool
            if %inb {
                %x = add %i, %rr : index
                %v = load %A[%x] : f32
                store %v, %B[%x]
            }
        }
        %code = cast %t : i32
        store %code, %T[%i]
    }
}

func @tile3(%A: memref<f64x?x?x?>, %B: memref<f64x?x?x?>, %T: memref<i32x?x?x?>, %lo0: index,
            %lo1: index, %lo2: index) attributes {subgroup_size=8, work_group_size=[16,3]} {
    %m = size %A[0] : index
    %n = size %A[1] : index
    %o = size %A[2] : index
    foreach_tile (%i,%j,%l)=(%lo0,%lo1,%lo2),(%m,%n,%o) as (%ti,%tj,%tl)<=(8,3,2) {
        %c0 = constant 0 : index
        %p = subgroup_local_id : i32
        %pi = cast %p : index
        %inb = less_than %pi, %ti : bool
        if %inb {
            %x = add %i, %pi : index
            for %jj=%c0,%tj {
                for %ll=%c0,%tl {
                    %y = add %j, %jj : index
                    %z = add %l, %ll : index
                    %v = load %A[%x,%y,%z] : f64
                    store %v, %B[%x,%y,%z]
                }
            }
        }
        %c100 = constant 100 : index
        %c10000 = constant 10000 : index
        %e0 = mul %ti, %c10000 : index
        %e1 = mul %tj, %c100 : index
        %e2 = add %e0, %e1 : index
        %e3 = add %e2, %tl : index
        %code = cast %e3 : i32
        store %code, %T[%i,%j,%l]
    }
}
""")
    return "\n".join(out)


FOREACH_TILE = _foreach_tile_program()


def _tile_codes(shape, lo, tile) -> np.ndarray:
    """The expected codes in an array one larger than `shape` in every mode: at every tile
    origin the tile sizes (base 100), else 0."""
    T = np.zeros([n + 1 for n in shape], np.int32)
    starts = [range(lo_d, n_d, t_d) for lo_d, n_d, t_d in zip(lo, shape, tile, strict=True)]
    for origin in np.array(np.meshgrid(*starts, indexing="ij")).reshape(len(shape), -1).T:
        sizes = [min(t, n - o) for t, n, o in zip(tile, shape, origin, strict=True)]
        T[tuple(origin)] = sum(s * 100**e for e, s in enumerate(reversed(sizes)))
    return T


def _run_tile2(p, ty, rng, m, n, lo):
    """tile2_`ty` over [lo0, m) x [lo1, n); the code array has a padding row and column (an
    offending extra tile lands there instead of outside the buffer)."""
    A, _ = rand(rng, ty, (m, n))
    B = np.zeros((m, n), NP[ty], order="F")
    T = np.zeros((m + 1, n + 1), np.int32, order="F")
    p.kernel(f"tile2_{ty}")(A, B, T, *lo)
    want = np.zeros_like(B)
    want[lo[0] :, lo[1] :] = A[lo[0] :, lo[1] :]
    np.testing.assert_array_equal(B, want, err_msg=f"copy {m}x{n} from {lo}")
    np.testing.assert_array_equal(T, _tile_codes((m, n), lo, FT_TILE), f"tiles {m}x{n} from {lo}")


def _run_tile1(p, rng, n, lo):
    A, _ = rand(rng, "f32", (n,))
    B = np.zeros(n, np.float32)
    T = np.zeros(n + 1, np.int32)
    p.kernel("tile1")(A, B, T, lo)
    want = np.zeros_like(B)
    want[lo:] = A[lo:]
    np.testing.assert_array_equal(B, want, err_msg=f"1-d copy n={n} from {lo}")
    np.testing.assert_array_equal(T, _tile_codes((n,), (lo,), (16,)), f"1-d tiles n={n} from {lo}")


def _run_tile3(p, rng, shape, lo):
    A, _ = rand(rng, "f64", shape)
    B = np.zeros(shape, np.float64, order="F")
    T = np.zeros([n + 1 for n in shape], np.int32, order="F")
    p.kernel("tile3")(A, B, T, *lo)
    want = np.zeros_like(B)
    region = tuple(slice(lo_d, None) for lo_d in lo)
    want[region] = A[region]
    np.testing.assert_array_equal(B, want, err_msg=f"3-d copy {shape} from {lo}")
    np.testing.assert_array_equal(T, _tile_codes(shape, lo, (8, 3, 2)), f"3-d tiles {shape}")


# (to - from) not a multiple of the tile shape in modes 0 and 1 (see the test after these)
TILE2_CASES = [((1, 1), (0, 0)), ((17, 33), (0, 0)), ((40, 7), (3, 1)), ((64, 64), (1, 1))]
TILE2_CASES += [((100, 37), (5, 0)), ((33, 100), (16, 9)), ((20, 12), (0, 0))]


@pytest.mark.parametrize("ty", FT_TYPES)
def test_foreach_tile_2d(ty):
    """Tiles of 16x5 over [lo0, m) x [lo1, n) (dynamic): remainder tiles take the checked
    coopmatrix path, the others the unchecked one; every tile writes its size code at its
    origin, so each tile must run exactly once with the right offset and size."""
    p = build(FOREACH_TILE)
    rng = np.random.default_rng(RNG_SEED)
    for (m, n), lo in TILE2_CASES:
        _run_tile2(p, ty, rng, m, n, lo)


def test_foreach_tile_1d_3d():
    p = build(FOREACH_TILE)
    rng = np.random.default_rng(RNG_SEED)
    for n, lo in [(1, 0), (17, 0), (40, 3), (100, 7), (1000, 0), (7, 5)]:
        _run_tile1(p, rng, n, lo)
    for shape, lo in [
        ((1, 1, 1), (0, 0, 0)),
        ((17, 4, 3), (0, 0, 0)),
        ((9, 7, 5), (0, 2, 1)),
        ((30, 10, 7), (3, 0, 2)),
        ((5, 2, 9), (0, 1, 0)),
        ((12, 8, 4), (1, 0, 0)),
    ]:
        _run_tile3(p, rng, shape, lo)


def test_foreach_tile_extent_multiple_of_tile_runs_no_empty_tile():
    """(to - from) a multiple of the tile shape (dynamic), or 0: no tile of size 0 may run.
    Fails (lower_foreach.tile_loop_by_sgs runs the remainder block when the dynamic remainder
    is 0: an extra tile of size 0 one tile past the end)."""
    p = build(FOREACH_TILE)
    rng = np.random.default_rng(RNG_SEED)
    for (m, n), lo in [((16, 5), (0, 0)), ((64, 63), (0, 3)), ((17, 11), (1, 1)), ((8, 8), (8, 8))]:
        _run_tile2(p, "f32", rng, m, n, lo)
    for n, lo in [(16, 0), (35, 3), (5, 5)]:
        _run_tile1(p, rng, n, lo)
    _run_tile3(p, rng, (8, 3, 2), (0, 0, 0))
