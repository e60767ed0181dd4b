"""Linear-algebra instructions (axpby, cumsum, sum, gemv, ger, hadamard, gemm) executed on the
CPU OpenCL device against NumPy.

The grid: every transpose combination; at least six shapes per operation, including sizes that
are not multiples of 16, run through kernels with dynamic (`?`) shapes, plus kernels with static
shapes; element types f32, f64, c32, c64 and the mixed f16 / bf16 -> f32 (and real -> complex)
variants; alpha/beta given at run time (beta 0 included) and as the constant 0 with C full of
NaN (C must not be read); .atomic updates (beta 0: atomic_store, beta 1: atomic_add) where
several work-groups update the same C; explicit work-group sizes with several subgroups in both
directions (the SLM paths of sum/cumsum and the subgroup distribution of gemm).

Coverage (issue 4; T = transposes, S = shapes incl. non-multiples of 16, all dynamic + static,
types f32/f64/c32/c64/f16->f32/bf16->f32 (+ f32 x c32 -> c32), A = .atomic from GROUPS=3
work-groups into the same C, beta 0 (atomic store) and 1 (atomic add)):
  axpby    T n,t        S 7 (2-d) + 7 (1-d) + 0-d    all types  A n,t x 6 types x 7 shapes
  gemv     T n,t        S 7                          all types  A n,t x 6 types x 7 shapes
  ger      (none)       S 7                          all types  A 6 types x 7 shapes
  hadamard (none)       S 7 (1-d) + 7 (2-d)          all types  A 1-d, 2-d x 6 types x 7 shapes
  sum      T n,t (2-d)  S 7 (2-d) + 9 (1-d)          all types  A n,t,1-d x 6 types
  cumsum   modes 0,1,2  S 9 (1-d) + 7 (2-d) + 6 (3-d) all types A 1-d, 2-d x 6 types x 8 shapes
  gemm     T all 4 for every type, S 8 dynamic (+5 static f32 x 4 T), A all 4 T for f32,
           one T per other type with beta 1 and another with beta 0 (JIT cost), 8 shapes each
The coopmatrix-level gemm (mul_add, checked loads, atomics) and foreach_tile are in
test_exec_coopmatrix_tiles.py.

Kernels of one instruction share one program (the JIT costs 0.1-1 s per program). Memrefs are
column-major: arrays are Fortran-ordered. References are computed in complex128; the tolerance
is relative to the magnitude of the terms (alpha*|A||B| + |beta||C| summed like the result).
"""

from __future__ import annotations

import collections
import functools

import numpy as np
import pytest

from tinytc_py.errors import CompilationError, Status
from tinytc_py.passes.registry import run_function_pass
from tinytc_py.text.dialect import parse

from .support import NP_DTYPE, bf16_bits, bf16_value, build, target

pytestmark = pytest.mark.timeout(300, method="thread")

NP = NP_DTYPE  # bf16 as raw uint16 bits
EPS = {"f16": 2e-3, "bf16": 2e-2, "f32": 5e-5, "f64": 1e-12, "c32": 5e-5, "c64": 1e-12}
# (A, B, C) element types; alpha has promote(A, B)'s type, beta C's type
TYPES3 = [
    ("f32", "f32", "f32"),
    ("f64", "f64", "f64"),
    ("c32", "c32", "c32"),
    ("c64", "c64", "c64"),
    ("f16", "f16", "f32"),
    ("bf16", "bf16", "f32"),
    ("f32", "c32", "c32"),
]
# (A, B) element types of axpby / sum / cumsum; alpha has A's type, beta B's type
TYPES2 = [
    ("f32", "f32"),
    ("f64", "f64"),
    ("c32", "c32"),
    ("c64", "c64"),
    ("f16", "f32"),
    ("bf16", "f32"),
    ("f32", "c64"),
]
ATOMIC_TYPES = ["f32", "f64", "c32", "c64"]
# (A, B) of the .atomic axpby / sum / cumsum: the atomic types and mixed f16 / bf16 -> f32
ATOMIC_TYPES2 = TYPES2[:6]
ATOMIC_TYPES3 = TYPES3[:6]  # (A, B, C) of the .atomic ger / hadamard / gemv / gemm
SHAPES = [(1, 1), (5, 3), (16, 16), (17, 33), (40, 7), (64, 64), (33, 100)]
SIZES = [1, 5, 16, 17, 40, 100, 1000]
GEMM_SHAPES = [(1, 1, 1), (5, 3, 7), (16, 16, 16), (17, 33, 9), (40, 7, 64), (64, 64, 64)]
GEMM_SHAPES += [(31, 20, 100), (100, 37, 3)]
GROUPS = 3  # work-groups of the atomic tests, all updating the same C
# explicit sizes: several subgroups along both work-group dimensions
WG_ATTRS = "attributes {subgroup_size=8, work_group_size=[16,2]}"
WG_ATTRS_ODD = "attributes {subgroup_size=4, work_group_size=[12,1]}"


def is_complex(ty: str) -> bool:
    return ty.startswith("c")


def promote(a: str, b: str) -> str:
    order = ["bf16", "f16", "f32", "f64", "c32", "c64"]
    if {a, b} == {"f64", "c32"}:
        return "c64"
    return max(a, b, key=order.index)


def alpha_of(ty: str) -> complex:
    return 1.5 - 0.5j if is_complex(ty) else 1.5


def beta_of(ty: str) -> complex:
    return 0.5 + 0.25j if is_complex(ty) else -0.75


def const(ty: str, x: float) -> str:
    """Text of a constant of type ty."""
    return f"[{x:.1f}, 0.0]" if is_complex(ty) else f"{x:.1f}"


def mr(ty: str, shape) -> str:
    """memref type text; None marks a dynamic mode."""
    dims = "".join("x" + ("?" if s is None else str(s)) for s in shape)
    return f"memref<{ty}{dims}>"


def func(name: str, params: str, body: str, attrs: str = "") -> str:
    return f"func @{name}({params}) {attrs} {{\n    {body}\n}}\n"


# ---- data and checks -----------------------------------------------------------------------------


def rand(rng: np.random.Generator, ty: str, shape) -> tuple[np.ndarray, np.ndarray]:
    """(array for the kernel, its exact values as complex128)."""
    x = rng.uniform(-1, 1, shape)
    if is_complex(ty):
        x = x + 1j * rng.uniform(-1, 1, shape)
    if ty == "bf16":
        bits = np.array(bf16_bits(x), order="F")
        return bits, bf16_value(bits).astype(np.complex128)
    arr = np.array(np.asarray(x).astype(NP[ty]), order="F")
    return arr, arr.astype(np.complex128)


def nan_like(ty: str, shape) -> np.ndarray:
    return np.full(shape, np.nan, dtype=NP[ty], order="F")


def values(ty: str, arr: np.ndarray) -> np.ndarray:
    return (bf16_value(arr) if ty == "bf16" else np.asarray(arr)).astype(np.complex128)


def check(ty: str, got: np.ndarray, want: np.ndarray, mag, what: str) -> None:
    """|got - want| <= EPS[ty] * (mag + 1) element-wise, no NaN."""
    g = values(ty, got)
    bound = EPS[ty] * (np.asarray(mag, np.float64) + 1.0)
    err = np.abs(g - want)
    bad = ~(err <= bound)
    if bad.any():
        idx = np.argwhere(bad)[:4]
        detail = ", ".join(f"{tuple(i)}: got {g[tuple(i)]} want {want[tuple(i)]}" for i in idx)
        pytest.fail(f"{what}: {int(bad.sum())} of {bad.size} wrong, e.g. {detail}")


def op_t(x: np.ndarray, t: str) -> np.ndarray:
    return x.T if t == "t" else x


def program_or_error(text: str):
    """The built program, or the CompilationError (cached so a failing program is compiled once)."""
    return _program_or_error(text, target())


@functools.cache
def _program_or_error(text: str, gpu: str | None):
    try:
        return build(text)
    except CompilationError as err:
        return err


def get(text: str):
    p = program_or_error(text)
    if isinstance(p, CompilationError):
        raise p
    return p


RNG_SEED = 2024


# ---- axpby ---------------------------------------------------------------------------------------


def _axpby_program() -> dict[str, str]:
    out: dict[str, list[str]] = collections.defaultdict(list)
    for ta, tb in TYPES2:
        s = f"{ta}_{tb}"
        sig = f"%alpha: {ta}, %A: {{A}}, %beta: {tb}, %B: {{B}}"
        for t in "nt":
            dyn = sig.format(A=mr(ta, (None, None)), B=mr(tb, (None, None)))
            out[s].append(func(f"axpby2_{t}_{s}", dyn, f"axpby.{t} %alpha, %A, %beta, %B"))
            body = f"%beta = constant {const(tb, 0)} : {tb}\n    axpby.{t} %alpha, %A, %beta, %B"
            out[s].append(func(f"axpby2z_{t}_{s}", dyn.replace(f"%beta: {tb}, ", ""), body))
        out[s].append(
            func(
                f"axpby1_{s}",
                sig.format(A=mr(ta, (None,)), B=mr(tb, (None,))),
                "axpby %alpha, %A, %beta, %B",
                WG_ATTRS,
            )
        )
        out[s].append(
            func(
                f"axpby0_{s}", sig.format(A=mr(ta, ()), B=mr(tb, ())), "axpby %alpha, %A, %beta, %B"
            )
        )
    for m, n in [(17, 33), (40, 7), (64, 64)]:
        for t in "nt":
            a_shape = (n, m) if t == "t" else (m, n)
            sig = f"%alpha: f32, %A: {mr('f32', a_shape)}, %beta: f32, %B: {mr('f32', (m, n))}"
            out["static"].append(
                func(f"axpby2s_{t}_{m}x{n}", sig, f"axpby.{t} %alpha, %A, %beta, %B", WG_ATTRS)
            )
    for ty, tb in ATOMIC_TYPES2:
        for beta in (0, 1):
            for t in "nt":
                body = f"%beta = constant {const(tb, beta)} : {tb}\n"
                body += f"    axpby.atomic.{t} %alpha, %A, %beta, %B"
                sig = f"%alpha: {ty}, %A: {mr(ty, (None, None))}, %B: {mr(tb, (None, None))}"
                name = f"axpby_atomic{beta}_{t}_{ty}"
                out[f"atomic_{ty}"].append(func(name, sig, body, WG_ATTRS))
    return {k: "\n".join(v) for k, v in out.items()}


AXPBY = _axpby_program()


@pytest.mark.parametrize(("ta", "tb"), TYPES2)
@pytest.mark.parametrize("t", "nt")
def test_axpby_2d(ta, tb, t):
    p = get(AXPBY[f"{ta}_{tb}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha, beta = alpha_of(ta), beta_of(tb)
    for m, n in SHAPES:
        A, a = rand(rng, ta, (n, m) if t == "t" else (m, n))
        B, b = rand(rng, tb, (m, n))
        mag = abs(alpha) * np.abs(op_t(a, t)) + abs(beta) * np.abs(b)
        p.kernel(f"axpby2_{t}_{ta}_{tb}")(alpha, A, beta, B)
        check(tb, B, alpha * op_t(a, t) + beta * b, mag, f"axpby.{t} {m}x{n}")
        for kernel, args in (
            (f"axpby2_{t}_{ta}_{tb}", (alpha, A, 0.0)),  # beta 0 at run time
            (f"axpby2z_{t}_{ta}_{tb}", (alpha, A)),  # constant beta 0
        ):
            B = nan_like(tb, (m, n))
            p.kernel(kernel)(*args, B)
            check(tb, B, alpha * op_t(a, t), abs(alpha) * np.abs(a.T if t == "t" else a), kernel)


@pytest.mark.parametrize(("ta", "tb"), TYPES2)
def test_axpby_1d_0d(ta, tb):
    p = get(AXPBY[f"{ta}_{tb}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha, beta = alpha_of(ta), beta_of(tb)
    for n in SIZES:
        A, a = rand(rng, ta, (n,))
        B, b = rand(rng, tb, (n,))
        p.kernel(f"axpby1_{ta}_{tb}")(alpha, A, beta, B)
        check(tb, B, alpha * a + beta * b, 3, f"axpby 1-d n={n}")
    for beta_k in (beta, 0.0):
        A, a = rand(rng, ta, ())
        B, b = rand(rng, tb, ())
        if beta_k == 0:
            B = nan_like(tb, ())
            b = np.zeros((), np.complex128)
        p.kernel(f"axpby0_{ta}_{tb}")(alpha, A, beta_k, B)
        check(tb, B, alpha * a + beta_k * b, 3, f"axpby 0-d beta={beta_k}")


@pytest.mark.parametrize("t", "nt")
def test_axpby_static(t):
    p = get(AXPBY["static"])
    rng = np.random.default_rng(RNG_SEED)
    for m, n in [(17, 33), (40, 7), (64, 64)]:
        A, a = rand(rng, "f32", (n, m) if t == "t" else (m, n))
        B, b = rand(rng, "f32", (m, n))
        p.kernel(f"axpby2s_{t}_{m}x{n}")(2.0, A, -1.0, B)
        check("f32", B, 2 * op_t(a, t) - b, 3, f"static axpby.{t} {m}x{n}")


@pytest.mark.parametrize(("ty", "tb"), ATOMIC_TYPES2)
@pytest.mark.parametrize("t", "nt")
def test_axpby_atomic(ty, tb, t):
    p = get(AXPBY[f"atomic_{ty}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha = alpha_of(ty)
    for m, n in SHAPES:
        A, a = rand(rng, ty, (n, m) if t == "t" else (m, n))
        B, b = rand(rng, tb, (m, n))
        want = alpha * op_t(a, t)
        p.kernel(f"axpby_atomic1_{t}_{ty}")(alpha, A, B, num_groups=GROUPS)
        check(tb, B, b + GROUPS * want, 3 * GROUPS, f"axpby.atomic.{t} beta=1 {m}x{n}")
        B = nan_like(tb, (m, n))
        p.kernel(f"axpby_atomic0_{t}_{ty}")(alpha, A, B, num_groups=GROUPS)
        check(tb, B, want, 3, f"axpby.atomic.{t} beta=0 {m}x{n}")


# ---- ger, hadamard, gemv ------------------------------------------------------------------------


def _with_zero_beta(out, sig, types, name: str, a, b, c, inst: str, attrs: str = "") -> None:
    """Kernel `name` with a run-time beta and `name`_z with the constant beta 0."""
    ta, tb, tc = types
    dyn = sig.format(A=mr(ta, a), B=mr(tb, b), C=mr(tc, c))
    out.append(func(name, dyn, f"{inst} %alpha, %A, %B, %beta, %C", attrs))
    dyn0 = dyn.replace(f"%beta: {tc}, ", "")
    body = f"%beta = constant {const(tc, 0)} : {tc}\n    {inst} %alpha, %A, %B, %beta, %C"
    out.append(func(name + "_z", dyn0, body, attrs))


def _a3_program() -> dict[str, str]:
    out: dict[str, list[str]] = collections.defaultdict(list)
    for ta, tb, tc in TYPES3:
        s = f"{ta}_{tb}_{tc}"
        al = promote(ta, tb)
        sig = f"%alpha: {al}, %A: {{A}}, %B: {{B}}, %beta: {tc}, %C: {{C}}"
        both = functools.partial(_with_zero_beta, out[s], sig, (ta, tb, tc))
        both(f"ger_{s}", (None,), (None,), (None, None), "ger")
        both(f"had1_{s}", (None,), (None,), (None,), "hadamard")
        both(f"had2_{s}", (None, None), (None, None), (None, None), "hadamard", WG_ATTRS)
        for t in "nt":
            both(f"gemv_{t}_{s}", (None, None), (None,), (None,), f"gemv.{t}")
    for ta, tb, tc in ATOMIC_TYPES3:
        s = f"{ta}_{tb}_{tc}"
        for beta in (0, 1):
            body = f"%beta = constant {const(tc, beta)} : {tc}\n    "
            for name, a, b, c, inst in (
                ("ger", (None,), (None,), (None, None), "ger.atomic"),
                ("had", (None, None), (None, None), (None, None), "hadamard.atomic"),
                ("had1", (None,), (None,), (None,), "hadamard.atomic"),
                ("gemvn", (None, None), (None,), (None,), "gemv.atomic.n"),
                ("gemv", (None, None), (None,), (None,), "gemv.atomic.t"),
            ):
                al = promote(ta, tb)
                sig = f"%alpha: {al}, %A: {mr(ta, a)}, %B: {mr(tb, b)}, %C: {mr(tc, c)}"
                text = body + f"{inst} %alpha, %A, %B, %beta, %C"
                out[f"atomic_{s}"].append(func(f"{name}_atomic{beta}_{s}", sig, text, WG_ATTRS))
    out["static"].append(
        func(
            "gemv_static",
            f"%alpha: f32, %A: {mr('f32', (33, 17))}, %B: {mr('f32', (17,))}, "
            f"%beta: f32, %C: {mr('f32', (33,))}",
            "gemv %alpha, %A, %B, %beta, %C",
            WG_ATTRS,
        )
    )
    out["static"].append(
        func(
            "ger_static",
            f"%alpha: f64, %A: {mr('f64', (40,))}, %B: {mr('f64', (7,))}, "
            f"%beta: f64, %C: {mr('f64', (40, 7))}",
            "ger %alpha, %A, %B, %beta, %C",
            WG_ATTRS,
        )
    )
    return {k: "\n".join(v) for k, v in out.items()}


A3 = _a3_program()


def _run_a3(p, name, tc, alpha, beta, A, B, C, want_ab, mag_ab, c, what, zero=True):
    """Runs `name` with run-time beta, beta = 0 at run time and (if `zero`) `name`_z with the
    constant beta 0 (C = NaN: it must not be read)."""
    p.kernel(name)(alpha, A, B, beta, C)
    check(tc, C, alpha * want_ab + beta * c, abs(alpha) * mag_ab + abs(beta) * np.abs(c), what)
    shape = C.shape
    C = nan_like(tc, shape)
    p.kernel(name)(alpha, A, B, 0.0, C)
    check(tc, C, alpha * want_ab, abs(alpha) * mag_ab, what + " beta=0")
    if not zero:
        return
    C = nan_like(tc, shape)
    p.kernel(name + "_z")(alpha, A, B, C)
    check(tc, C, alpha * want_ab, abs(alpha) * mag_ab, what + " constant beta=0")


@pytest.mark.parametrize(("ta", "tb", "tc"), TYPES3)
def test_ger(ta, tb, tc):
    p = get(A3[f"{ta}_{tb}_{tc}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha, beta = alpha_of(promote(ta, tb)), beta_of(tc)
    for m, n in SHAPES:
        A, a = rand(rng, ta, (m,))
        B, b = rand(rng, tb, (n,))
        C, c = rand(rng, tc, (m, n))
        ab = np.outer(a, b)
        _run_a3(
            p, f"ger_{ta}_{tb}_{tc}", tc, alpha, beta, A, B, C, ab, np.abs(ab), c, f"ger {m}x{n}"
        )


@pytest.mark.parametrize(("ta", "tb", "tc"), TYPES3)
def test_hadamard(ta, tb, tc):
    p = get(A3[f"{ta}_{tb}_{tc}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha, beta = alpha_of(promote(ta, tb)), beta_of(tc)
    for n in SIZES:
        A, a = rand(rng, ta, (n,))
        B, b = rand(rng, tb, (n,))
        C, c = rand(rng, tc, (n,))
        _run_a3(
            p,
            f"had1_{ta}_{tb}_{tc}",
            tc,
            alpha,
            beta,
            A,
            B,
            C,
            a * b,
            np.abs(a * b),
            c,
            f"hadamard n={n}",
        )
    for m, n in SHAPES:
        A, a = rand(rng, ta, (m, n))
        B, b = rand(rng, tb, (m, n))
        C, c = rand(rng, tc, (m, n))
        what = f"hadamard {m}x{n}"
        _run_a3(p, f"had2_{ta}_{tb}_{tc}", tc, alpha, beta, A, B, C, a * b, np.abs(a * b), c, what)


@pytest.mark.parametrize(("ta", "tb", "tc"), TYPES3)
@pytest.mark.parametrize("t", "nt")
def test_gemv(ta, tb, tc, t):
    p = get(A3[f"{ta}_{tb}_{tc}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha, beta = alpha_of(promote(ta, tb)), beta_of(tc)
    for m, k in SHAPES:
        A, a = rand(rng, ta, (k, m) if t == "t" else (m, k))
        B, b = rand(rng, tb, (k,))
        C, c = rand(rng, tc, (m,))
        ab = op_t(a, t) @ b
        mag = np.abs(op_t(a, t)) @ np.abs(b)
        _run_a3(
            p, f"gemv_{t}_{ta}_{tb}_{tc}", tc, alpha, beta, A, B, C, ab, mag, c, f"gemv.{t} {m}x{k}"
        )


def test_a3_static():
    p = get(A3["static"])
    rng = np.random.default_rng(RNG_SEED)
    A, a = rand(rng, "f32", (33, 17))
    B, b = rand(rng, "f32", (17,))
    C, c = rand(rng, "f32", (33,))
    p.kernel("gemv_static")(2.0, A, B, 0.5, C)
    check("f32", C, 2 * a @ b + 0.5 * c, 2 * np.abs(a) @ np.abs(b) + 1, "static gemv")
    A, a = rand(rng, "f64", (40,))
    B, b = rand(rng, "f64", (7,))
    C, c = rand(rng, "f64", (40, 7))
    p.kernel("ger_static")(2.0, A, B, 0.5, C)
    check("f64", C, 2 * np.outer(a, b) + 0.5 * c, 3, "static ger")


@pytest.mark.parametrize(("ta", "tb", "tc"), ATOMIC_TYPES3)
def test_a3_atomic(ta, tb, tc):
    """ger / hadamard (1-d, 2-d) / gemv.n / gemv.t .atomic from GROUPS work-groups."""
    p = get(A3[f"atomic_{ta}_{tb}_{tc}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha = alpha_of(promote(ta, tb))
    s = f"{ta}_{tb}_{tc}"
    for m, n in SHAPES:
        cases = []
        A, a = rand(rng, ta, (m,))
        B, b = rand(rng, tb, (n,))
        cases.append(("ger", A, B, (m, n), np.outer(a, b), np.outer(abs(a), abs(b))))
        A, a = rand(rng, ta, (m, n))
        B, b = rand(rng, tb, (m, n))
        cases.append(("had", A, B, (m, n), a * b, abs(a * b)))
        A, a = rand(rng, ta, (m * n,))
        B, b = rand(rng, tb, (m * n,))
        cases.append(("had1", A, B, (m * n,), a * b, abs(a * b)))
        A, a = rand(rng, ta, (m, n))
        B, b = rand(rng, tb, (n,))
        cases.append(("gemvn", A, B, (m,), a @ b, abs(a) @ abs(b)))
        A, a = rand(rng, ta, (n, m))
        B, b = rand(rng, tb, (n,))
        cases.append(("gemv", A, B, (m,), a.T @ b, abs(a.T) @ abs(b)))
        for name, A, B, shape, ab, mag in cases:
            C, c = rand(rng, tc, shape)
            p.kernel(f"{name}_atomic1_{s}")(alpha, A, B, C, num_groups=GROUPS)
            want, mag1 = c + GROUPS * alpha * ab, GROUPS * abs(alpha) * mag + 1
            check(tc, C, want, mag1, f"{name}.atomic beta=1 {m}x{n}")
            C = nan_like(tc, shape)
            p.kernel(f"{name}_atomic0_{s}")(alpha, A, B, C, num_groups=GROUPS)
            check(tc, C, alpha * ab, abs(alpha) * mag, f"{name}.atomic beta=0 {m}x{n}")


# ---- sum -----------------------------------------------------------------------------------------


def _sum_program() -> dict[str, str]:
    out: dict[str, list[str]] = collections.defaultdict(list)
    for ta, tb in TYPES2:
        s = f"{ta}_{tb}"
        sig = f"%alpha: {ta}, %A: {{A}}, %beta: {tb}, %B: {{B}}"
        z = f"%beta = constant {const(tb, 0)} : {tb}\n    "
        for t in "nt":
            dyn = sig.format(A=mr(ta, (None, None)), B=mr(tb, (None,)))
            out[s].append(func(f"sum2_{t}_{s}", dyn, f"sum.{t} %alpha, %A, %beta, %B"))
        dyn = sig.format(A=mr(ta, (None,)), B=mr(tb, ()))
        out[s].append(func(f"sum1_{s}", dyn, "sum %alpha, %A, %beta, %B"))
        out[s].append(func(f"sum1w_{s}", dyn, "sum %alpha, %A, %beta, %B", WG_ATTRS))
        out[s].append(func(f"sum1o_{s}", dyn, "sum %alpha, %A, %beta, %B", WG_ATTRS_ODD))
        out[s].append(
            func(
                f"sum1z_{s}",
                dyn.replace(f"%beta: {tb}, ", ""),
                z + "sum %alpha, %A, %beta, %B",
                WG_ATTRS,
            )
        )
    for ty, tb in ATOMIC_TYPES2:
        for beta in (0, 1):
            body = f"%beta = constant {const(tb, beta)} : {tb}\n    "
            sig = f"%alpha: {ty}, %A: {mr(ty, (None, None))}, %B: {mr(tb, (None,))}"
            for t in "nt":
                text = body + f"sum.atomic.{t} %alpha, %A, %beta, %B"
                out[f"atomic_{ty}"].append(func(f"sum2_atomic{beta}_{t}_{ty}", sig, text))
            sig = f"%alpha: {ty}, %A: {mr(ty, (None,))}, %B: {mr(tb, ())}"
            text = body + "sum.atomic %alpha, %A, %beta, %B"
            out[f"atomic_{ty}"].append(func(f"sum1_atomic{beta}_{ty}", sig, text, WG_ATTRS))
    sig = f"%alpha: f32, %A: {mr('f32', (40, 7))}, %beta: f32, %B: {mr('f32', (7,))}"
    out["static"].append(func("sum2_static", sig, "sum.t %alpha, %A, %beta, %B", WG_ATTRS))
    sig = f"%alpha: f32, %A: {mr('f32', (100,))}, %beta: f32, %B: {mr('f32', ())}"
    out["static"].append(func("sum1_static", sig, "sum %alpha, %A, %beta, %B", WG_ATTRS))
    return {k: "\n".join(v) for k, v in out.items()}


SUM = _sum_program()


@pytest.mark.parametrize(("ta", "tb"), TYPES2)
@pytest.mark.parametrize("t", "nt")
def test_sum_2d(ta, tb, t):
    p = get(SUM[f"{ta}_{tb}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha, beta = alpha_of(ta), beta_of(tb)
    for m, n in SHAPES:
        A, a = rand(rng, ta, (n, m) if t == "t" else (m, n))
        B, b = rand(rng, tb, (m,))
        want = op_t(a, t).sum(axis=1)
        mag = np.abs(op_t(a, t)).sum(axis=1)
        p.kernel(f"sum2_{t}_{ta}_{tb}")(alpha, A, beta, B)
        check(tb, B, alpha * want + beta * b, abs(alpha) * mag + 1, f"sum.{t} {m}x{n}")
        B = nan_like(tb, (m,))
        p.kernel(f"sum2_{t}_{ta}_{tb}")(alpha, A, 0.0, B)
        check(tb, B, alpha * want, abs(alpha) * mag, f"sum.{t} {m}x{n} beta=0")


@pytest.mark.parametrize(("ta", "tb"), TYPES2)
def test_sum_1d(ta, tb):
    p = get(SUM[f"{ta}_{tb}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha, beta = alpha_of(ta), beta_of(tb)
    s = f"{ta}_{tb}"
    for n in SIZES + [0, 4321]:
        A, a = rand(rng, ta, (n,))
        mag = abs(alpha) * np.abs(a).sum() + 1
        for kernel in (f"sum1_{s}", f"sum1w_{s}", f"sum1o_{s}"):
            B, b = rand(rng, tb, ())
            p.kernel(kernel)(alpha, A, beta, B)
            check(tb, B, alpha * a.sum() + beta * b, mag, f"{kernel} n={n}")
            B = nan_like(tb, ())
            p.kernel(kernel)(alpha, A, 0.0, B)
            check(tb, B, alpha * a.sum(), mag, f"{kernel} n={n} beta=0")
        B = nan_like(tb, ())
        p.kernel(f"sum1z_{s}")(alpha, A, B)
        check(tb, B, alpha * a.sum(), mag, f"sum n={n} constant beta=0")


def test_sum_static():
    p = get(SUM["static"])
    rng = np.random.default_rng(RNG_SEED)
    A, a = rand(rng, "f32", (40, 7))
    B, b = rand(rng, "f32", (7,))
    p.kernel("sum2_static")(2.0, A, 0.5, B)
    check("f32", B, 2 * a.sum(axis=0) + 0.5 * b, 100, "static sum.t")
    A, a = rand(rng, "f32", (100,))
    B, b = rand(rng, "f32", ())
    p.kernel("sum1_static")(2.0, A, 0.5, B)
    check("f32", B, 2 * a.sum() + 0.5 * b, 250, "static sum to scalar")


@pytest.mark.parametrize(("ty", "tb"), ATOMIC_TYPES2)
def test_sum_atomic(ty, tb):
    p = get(SUM[f"atomic_{ty}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha = alpha_of(ty)
    for m, n in SHAPES:
        for t in "nt":
            A, a = rand(rng, ty, (n, m) if t == "t" else (m, n))
            B, b = rand(rng, tb, (m,))
            want = alpha * op_t(a, t).sum(axis=1)
            mag = GROUPS * abs(alpha) * np.abs(op_t(a, t)).sum(axis=1) + 1
            p.kernel(f"sum2_atomic1_{t}_{ty}")(alpha, A, B, num_groups=GROUPS)
            check(tb, B, b + GROUPS * want, mag, f"sum.atomic.{t} beta=1 {m}x{n}")
            B = nan_like(tb, (m,))
            p.kernel(f"sum2_atomic0_{t}_{ty}")(alpha, A, B, num_groups=GROUPS)
            check(tb, B, want, mag, f"sum.atomic.{t} beta=0 {m}x{n}")
    for n in SIZES:
        A, a = rand(rng, ty, (n,))
        B, b = rand(rng, tb, ())
        mag = GROUPS * abs(alpha) * np.abs(a).sum() + 1
        p.kernel(f"sum1_atomic1_{ty}")(alpha, A, B, num_groups=GROUPS)
        check(tb, B, b + GROUPS * alpha * a.sum(), mag, f"sum.atomic beta=1 n={n}")
        B = nan_like(tb, ())
        p.kernel(f"sum1_atomic0_{ty}")(alpha, A, B, num_groups=GROUPS)
        check(tb, B, alpha * a.sum(), mag, f"sum.atomic beta=0 n={n}")


# ---- cumsum --------------------------------------------------------------------------------------

CUMSUM_ND = [((None, None), 0), ((None, None), 1), ((None, None, None), 0)]
CUMSUM_ND += [((None, None, None), 1), ((None, None, None), 2)]


def _cumsum_program() -> dict[str, str]:
    out: dict[str, list[str]] = collections.defaultdict(list)
    for ta, tb in TYPES2:
        s = f"{ta}_{tb}"
        sig = f"%alpha: {ta}, %A: {{A}}, %beta: {tb}, %B: {{B}}"
        dyn = sig.format(A=mr(ta, (None,)), B=mr(tb, (None,)))
        out[s].append(func(f"cumsum1_{s}", dyn, "cumsum %alpha, %A, 0, %beta, %B"))
        out[s].append(func(f"cumsum1w_{s}", dyn, "cumsum %alpha, %A, 0, %beta, %B", WG_ATTRS))
        out[s].append(func(f"cumsum1o_{s}", dyn, "cumsum %alpha, %A, 0, %beta, %B", WG_ATTRS_ODD))
        z = f"%beta = constant {const(tb, 0)} : {tb}\n    cumsum %alpha, %A, 0, %beta, %B"
        out[s].append(func(f"cumsum1z_{s}", dyn.replace(f"%beta: {tb}, ", ""), z, WG_ATTRS))
        for shape, mode in CUMSUM_ND:
            d = len(shape)
            dyn = sig.format(A=mr(ta, shape), B=mr(tb, shape))
            text = f"cumsum %alpha, %A, {mode}, %beta, %B"
            out[s].append(func(f"cumsum{d}_{mode}_{s}", dyn, text, WG_ATTRS))
    for ty, tb in ATOMIC_TYPES2:
        for beta in (0, 1):
            body = f"%beta = constant {const(tb, beta)} : {tb}\n    "
            for shape, mode in [((None,), 0), ((None, None), 0), ((None, None), 1)]:
                sig = f"%alpha: {ty}, %A: {mr(ty, shape)}, %B: {mr(tb, shape)}"
                text = body + f"cumsum.atomic %alpha, %A, {mode}, %beta, %B"
                out[f"atomic_{ty}"].append(
                    func(f"cumsum{len(shape)}_{mode}_atomic{beta}_{ty}", sig, text, WG_ATTRS)
                )
    for shape, mode in [((40, 7), 0), ((40, 7), 1), ((5, 17, 3), 1), ((100,), 0)]:
        sig = f"%alpha: f32, %A: {mr('f32', shape)}, %beta: f32, %B: {mr('f32', shape)}"
        name = "cumsum_static_" + "x".join(map(str, shape)) + f"_{mode}"
        out["static"].append(func(name, sig, f"cumsum %alpha, %A, {mode}, %beta, %B", WG_ATTRS))
    return {k: "\n".join(v) for k, v in out.items()}


CUMSUM = _cumsum_program()


def _cumsum_mag(a: np.ndarray, mode: int) -> np.ndarray:
    return np.cumsum(np.abs(a), axis=mode)


@pytest.mark.parametrize(("ta", "tb"), TYPES2)
def test_cumsum_1d(ta, tb):
    p = get(CUMSUM[f"{ta}_{tb}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha, beta = alpha_of(ta), beta_of(tb)
    s = f"{ta}_{tb}"
    for n in SIZES + [0, 2345]:
        A, a = rand(rng, ta, (n,))
        want, mag = np.cumsum(a), abs(alpha) * _cumsum_mag(a, 0)
        for kernel in (f"cumsum1_{s}", f"cumsum1w_{s}", f"cumsum1o_{s}"):
            B, b = rand(rng, tb, (n,))
            p.kernel(kernel)(alpha, A, beta, B)
            check(tb, B, alpha * want + beta * b, mag + 1, f"{kernel} n={n}")
            B = nan_like(tb, (n,))
            p.kernel(kernel)(alpha, A, 0.0, B)
            check(tb, B, alpha * want, mag, f"{kernel} n={n} beta=0")
        B = nan_like(tb, (n,))
        p.kernel(f"cumsum1z_{s}")(alpha, A, B)
        check(tb, B, alpha * want, mag, f"cumsum n={n} constant beta=0")


@pytest.mark.parametrize(("ta", "tb"), TYPES2)
@pytest.mark.parametrize(("order", "mode"), [(len(s), m) for s, m in CUMSUM_ND])
def test_cumsum_nd(ta, tb, order, mode):
    p = get(CUMSUM[f"{ta}_{tb}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha, beta = alpha_of(ta), beta_of(tb)
    shapes = (
        SHAPES
        if order == 2
        else [(1, 1, 1), (5, 3, 2), (17, 4, 3), (16, 2, 9), (3, 20, 5), (40, 1, 2)]
    )
    for shape in shapes:
        A, a = rand(rng, ta, shape)
        B, b = rand(rng, tb, shape)
        want, mag = np.cumsum(a, axis=mode), abs(alpha) * _cumsum_mag(a, mode)
        kernel = f"cumsum{order}_{mode}_{ta}_{tb}"
        p.kernel(kernel)(alpha, A, beta, B)
        check(tb, B, alpha * want + beta * b, mag + 1, f"{kernel} {shape}")
        B = nan_like(tb, shape)
        p.kernel(kernel)(alpha, A, 0.0, B)
        check(tb, B, alpha * want, mag, f"{kernel} {shape} beta=0")


def test_cumsum_static():
    p = get(CUMSUM["static"])
    rng = np.random.default_rng(RNG_SEED)
    for shape, mode in [((40, 7), 0), ((40, 7), 1), ((5, 17, 3), 1), ((100,), 0)]:
        A, a = rand(rng, "f32", shape)
        B, b = rand(rng, "f32", shape)
        name = "cumsum_static_" + "x".join(map(str, shape)) + f"_{mode}"
        p.kernel(name)(2.0, A, 0.5, B)
        check("f32", B, 2 * np.cumsum(a, axis=mode) + 0.5 * b, 2 * _cumsum_mag(a, mode) + 1, name)


@pytest.mark.parametrize(("ty", "tb"), ATOMIC_TYPES2)
def test_cumsum_atomic(ty, tb):
    p = get(CUMSUM[f"atomic_{ty}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha = alpha_of(ty)
    shapes = [((1,), 0), ((40,), 0), ((100,), 0), ((17, 5), 0), ((17, 5), 1), ((3, 40), 1)]
    shapes += [((33, 16), 0), ((1, 1), 1)]
    for shape, mode in shapes:
        A, a = rand(rng, ty, shape)
        B, b = rand(rng, tb, shape)
        want, mag = np.cumsum(a, axis=mode), GROUPS * abs(alpha) * _cumsum_mag(a, mode) + 1
        kernel = f"cumsum{len(shape)}_{mode}_atomic"
        p.kernel(f"{kernel}1_{ty}")(alpha, A, B, num_groups=GROUPS)
        check(tb, B, b + GROUPS * alpha * want, mag, f"{kernel} beta=1 {shape}")
        B = nan_like(tb, shape)
        p.kernel(f"{kernel}0_{ty}")(alpha, A, B, num_groups=GROUPS)
        check(tb, B, alpha * want, mag, f"{kernel} beta=0 {shape}")


# ---- gemm ----------------------------------------------------------------------------------------

TRANSPOSES = [("n", "n"), ("n", "t"), ("t", "n"), ("t", "t")]
GEMM_STATIC = [(5, 3, 7), (17, 33, 9), (40, 7, 64), (64, 64, 64), (31, 20, 100)]
# Every transpose combination for every type, with dynamic shapes (one program per type).
GEMM_DYNAMIC = {ty: TRANSPOSES for ty in TYPES3}
GEMM_ZERO_BETA = {(("f32", "f32", "f32"), ("n", "n")), (("c64", "c64", "c64"), ("t", "t"))}
GEMM_ZERO_BETA |= {(("f16", "f16", "f32"), ("t", "n"))}
GEMM_DEFAULT_WGS = {("f32", "f32", "f32"), ("f16", "f16", "f32")}
# .atomic: (A, B, C types), transposes, beta; GROUPS work-groups update the same C. Every
# transpose combination with f32 and every type with beta 1 (atomic add) and 0 (atomic store);
# a few kernels per type (a bf16 gemm kernel costs ~2 s of JIT, an f32 one ~0.8 s)
GEMM_ATOMIC = [(TYPES3[0], t, 1) for t in TRANSPOSES] + [(TYPES3[0], ("n", "n"), 0)]
GEMM_ATOMIC += [
    (TYPES3[1], ("t", "t"), 1),
    (TYPES3[1], ("n", "t"), 0),
    (TYPES3[2], ("n", "t"), 1),
    (TYPES3[2], ("t", "n"), 0),
    (TYPES3[3], ("t", "n"), 1),
    (TYPES3[3], ("t", "t"), 0),
    (TYPES3[4], ("t", "t"), 1),
    (TYPES3[4], ("n", "n"), 0),
    (TYPES3[5], ("t", "n"), 1),
    (TYPES3[5], ("n", "t"), 0),
]


def _gemm_shapes(m, n, k, ta, tb):
    return ((k, m) if ta == "t" else (m, k)), ((n, k) if tb == "t" else (k, n))


def _gemm_program() -> dict[str, str]:
    out: dict[str, list[str]] = collections.defaultdict(list)
    dyn2 = (None, None)
    for (ta, tb, tc), transposes in GEMM_DYNAMIC.items():
        s = f"{ta}_{tb}_{tc}"
        al = promote(ta, tb)
        sig = (
            f"%alpha: {al}, %A: {mr(ta, dyn2)}, %B: {mr(tb, dyn2)}, %beta: {tc}, %C: {mr(tc, dyn2)}"
        )
        z = f"%beta = constant {const(tc, 0)} : {tc}\n    "
        for t1, t2 in transposes:
            inst = f"gemm.{t1}.{t2} %alpha, %A, %B, %beta, %C"
            out[s].append(func(f"gemm_{t1}{t2}_{s}", sig, inst, WG_ATTRS))
            if ((ta, tb, tc), (t1, t2)) in GEMM_ZERO_BETA:
                sig0 = sig.replace(f"%beta: {tc}, ", "")
                out[s].append(func(f"gemm_{t1}{t2}_{s}_z", sig0, z + inst, WG_ATTRS))
        if (ta, tb, tc) in GEMM_DEFAULT_WGS:
            out[s].append(func(f"gemm_default_{s}", sig, "gemm %alpha, %A, %B, %beta, %C"))
    for m, n, k in GEMM_STATIC:
        for t1, t2 in TRANSPOSES:
            sa, sb = _gemm_shapes(m, n, k, t1, t2)
            sig = f"%alpha: f32, %A: {mr('f32', sa)}, %B: {mr('f32', sb)}, "
            sig += f"%beta: f32, %C: {mr('f32', (m, n))}"
            inst = f"gemm.{t1}.{t2} %alpha, %A, %B, %beta, %C"
            attrs = "" if (t1, t2) == ("n", "n") else WG_ATTRS  # .n.n: the default sizes
            out[f"static_{m}x{n}x{k}"].append(func(f"gemms_{t1}{t2}_{m}x{n}x{k}", sig, inst, attrs))
    for (ta, tb, tc), (t1, t2), beta in GEMM_ATOMIC:
        s = f"{ta}_{tb}_{tc}"
        body = f"%beta = constant {const(tc, beta)} : {tc}\n"
        body += f"    gemm.atomic.{t1}.{t2} %alpha, %A, %B, %beta, %C"
        sig = f"%alpha: {promote(ta, tb)}, %A: {mr(ta, dyn2)}, %B: {mr(tb, dyn2)}, "
        sig += f"%C: {mr(tc, dyn2)}"
        name = f"gemm_atomic{beta}_{t1}{t2}_{s}"
        out[f"atomic_{s}"].append(func(name, sig, body, WG_ATTRS))
    dyn3 = mr("f32", (None, None, None))
    batched = f"""func @gemm_batched(%alpha: f32, %A: {dyn3}, %B: {dyn3}, %beta: f32, %C: {dyn3}) {{
    %g = group_id.x : index
    %m = size %C[0] : index
    %n = size %C[1] : index
    %k = size %A[1] : index
    %a = subview %A[0:%m, 0:%k, %g] : {mr("f32", (None, None))}
    %b = subview %B[0:%k, 0:%n, %g] : {mr("f32", (None, None))}
    %c = subview %C[0:%m, 0:%n, %g] : {mr("f32", (None, None))}
    gemm %alpha, %a, %b, %beta, %c
}}
"""
    out["batched"].append(batched)
    return {k: "\n".join(v) for k, v in out.items()}


GEMM = _gemm_program()


def _gemm_case(rng, ta, tb, tc, t1, t2, m, n, k):
    A, a = rand(rng, ta, _gemm_shapes(m, n, k, t1, t2)[0])
    B, b = rand(rng, tb, _gemm_shapes(m, n, k, t1, t2)[1])
    ab = op_t(a, t1) @ op_t(b, t2)
    mag = np.abs(op_t(a, t1)) @ np.abs(op_t(b, t2))
    return A, B, ab, mag


@pytest.mark.parametrize(
    ("ta", "tb", "tc", "t1", "t2"), [(*ty, *t) for ty, ts in GEMM_DYNAMIC.items() for t in ts]
)
def test_gemm(ta, tb, tc, t1, t2):
    p = get(GEMM[f"{ta}_{tb}_{tc}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha, beta = alpha_of(promote(ta, tb)), beta_of(tc)
    name = f"gemm_{t1}{t2}_{ta}_{tb}_{tc}"
    zero = ((ta, tb, tc), (t1, t2)) in GEMM_ZERO_BETA
    for m, n, k in GEMM_SHAPES:
        A, B, ab, mag = _gemm_case(rng, ta, tb, tc, t1, t2, m, n, k)
        C, c = rand(rng, tc, (m, n))
        _run_a3(p, name, tc, alpha, beta, A, B, C, ab, mag, c, f"{name} {m}x{n}x{k}", zero)
    if (ta, tb, tc) in GEMM_DEFAULT_WGS and (t1, t2) == ("n", "n"):
        name = f"gemm_default_{ta}_{tb}_{tc}"
        for m, n, k in GEMM_SHAPES:
            A, B, ab, mag = _gemm_case(rng, ta, tb, tc, "n", "n", m, n, k)
            C, c = rand(rng, tc, (m, n))
            p.kernel(name)(alpha, A, B, beta, C)
            check(tc, C, alpha * ab + beta * c, abs(alpha) * mag + 1, f"{name} {m}x{n}x{k}")


@pytest.mark.parametrize(("m", "n", "k"), GEMM_STATIC)
def test_gemm_static(m, n, k):
    p = get(GEMM[f"static_{m}x{n}x{k}"])
    rng = np.random.default_rng(RNG_SEED)
    for t1, t2 in TRANSPOSES:
        A, B, ab, mag = _gemm_case(rng, "f32", "f32", "f32", t1, t2, m, n, k)
        C, c = rand(rng, "f32", (m, n))
        name = f"gemms_{t1}{t2}_{m}x{n}x{k}"
        p.kernel(name)(1.5, A, B, -0.5, C)
        check("f32", C, 1.5 * ab - 0.5 * c, 1.5 * mag + 1, name)


@pytest.mark.parametrize(
    ("ta", "tb", "tc", "t1", "t2", "beta"), [(*ty, *t, beta) for ty, t, beta in GEMM_ATOMIC]
)
def test_gemm_atomic(ta, tb, tc, t1, t2, beta):
    """GROUPS work-groups each add alpha*op1(A)op2(B) into the same C (beta 1: atomic add;
    beta 0: atomic store, C full of NaN beforehand)."""
    s = f"{ta}_{tb}_{tc}"
    p = get(GEMM[f"atomic_{s}"])
    rng = np.random.default_rng(RNG_SEED)
    alpha = alpha_of(promote(ta, tb))
    name = f"gemm_atomic{beta}_{t1}{t2}_{s}"
    for m, n, k in GEMM_SHAPES:
        A, B, ab, mag = _gemm_case(rng, ta, tb, tc, t1, t2, m, n, k)
        if beta:
            C, c = rand(rng, tc, (m, n))
            p.kernel(name)(alpha, A, B, C, num_groups=GROUPS)
            want = c + GROUPS * alpha * ab
            check(tc, C, want, GROUPS * abs(alpha) * mag + 1, f"{name} {m}x{n}x{k}")
        else:
            C = nan_like(tc, (m, n))
            p.kernel(name)(alpha, A, B, C, num_groups=GROUPS)
            check(tc, C, alpha * ab, abs(alpha) * mag, f"{name} {m}x{n}x{k}")


def test_gemm_batched():
    p = get(GEMM["batched"])
    rng = np.random.default_rng(RNG_SEED)
    m, n, k, batch = 23, 18, 11, 5
    A, a = rand(rng, "f32", (m, k, batch))
    B, b = rand(rng, "f32", (k, n, batch))
    C, c = rand(rng, "f32", (m, n, batch))
    p.kernel("gemm_batched")(2.0, A, B, 0.5, C, num_groups=batch)
    want = 2 * np.einsum("ikb,kjb->ijb", a, b) + 0.5 * c
    check("f32", C, want, 2 * np.einsum("ikb,kjb->ijb", np.abs(a), np.abs(b)) + 1, "batched gemm")


# ---- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize("inst", ["axpby.atomic", "gemm.atomic"])
def test_atomic_beta_other_than_0_or_1(inst):
    """The verifier only admits a constant beta of 0 or 1 for .atomic; lower-linalg checks it
    again (ir_invalid_beta) for IR whose constant was changed after verification."""
    operands = "%a, %A, %b, %B" if inst.startswith("axpby") else "%a, %A, %A, %b, %B"
    src = f"""func @k(%a: f32, %A: memref<f32x8x8>, %B: memref<f32x8x8>) {{
    %b = constant 1.0 : f32
    {inst} {operands}
}}
"""
    prog = parse(src)
    beta = next(i for i in prog.funcs[0].body.insts if i.name == "constant")
    beta.props["value"] = 2.0
    with pytest.raises(CompilationError) as e:
        run_function_pass("lower-linalg", prog)
    assert e.value.status is Status.ir_invalid_beta
    assert [i.name for i in prog.funcs[0].body.insts] == ["constant", inst.split(".")[0]]
