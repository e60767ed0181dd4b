"""Calibration: upstream tinytc v0.4.0's pvc binaries run under the emulator against NumPy.

The emulator follows the public vISA/LSC specifications, not this project's templates; running
the binaries of an independent compiler (upstream's own 2D block IO and DPAS code, tested on
real GPUs) shows that the semantics are the hardware's. Upstream is compiled through its C API
(`tinytc_core_info_intel_create_from_name("pvc")`) by a small C driver built here against an
upstream build. Needs TINYTC_UPSTREAM_SRC (the v0.4.0 source) and TINYTC_UPSTREAM_BUILD (a
CMake build of it with src/libtinytc.a); skipped otherwise. Kernel launch metadata comes from
this project's compile of the same program (same calling convention).

Where upstream's binary is invalid SPIR-V the case is an expected failure naming upstream's
bug: its f16/i8 DPAS and 2D block paths declare OpTypeVector with 32 or 64 components, and the
SPIR-V specification (OpTypeVector; Vector16 capability) allows 2, 3, 4, 8 and 16 only.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tinytc_py.errors import TinytcError

pytest.importorskip("pyopencl")
pytestmark = pytest.mark.timeout(900, method="thread")

SRC = os.environ.get("TINYTC_UPSTREAM_SRC", "")
BUILD = os.environ.get("TINYTC_UPSTREAM_BUILD", "")
LIB = Path(BUILD) / "src" / "libtinytc.a"

DRIVER = r"""
#include <tinytc/tinytc.h>
#include <stdio.h>
int main(int argc, char **argv) {
    tinytc_core_info_t info; tinytc_prog_t prg; tinytc_binary_t bin;
    if (argc != 4 || tinytc_core_info_intel_create_from_name(&info, argv[1])) return 2;
    if (tinytc_parse_file(&prg, argv[2], NULL)) return 3;
    if (tinytc_prog_compile_to_spirv_and_assemble(&bin, prg, info)) return 4;
    tinytc_bundle_format_t fmt; size_t n; const uint8_t *d;
    if (tinytc_binary_get_raw(bin, &fmt, &n, &d)) return 5;
    FILE *f = fopen(argv[3], "wb");
    if (!f || fwrite(d, 1, n, f) != n) return 6;
    return fclose(f) ? 6 : 0;
}
"""

RNG = np.random.default_rng(7)


def F(shape, dtype=np.float32):
    """Small integers / 4 (exact in every type used), column-major."""
    return np.asfortranarray(RNG.integers(-4, 4, size=shape) / 4).astype(dtype)


@dataclass
class Case:
    name: str
    src: str
    args: Callable[[], list]  # kernel arguments (arrays are changed in place)
    out: int  # index of the output argument
    want: Callable[[list], np.ndarray]  # reference from the arguments before the launch
    groups: int = 1
    upstream_bug: str = ""


def _fn(name: str, params: str, body: str, sg: int = 16) -> str:
    return f"func @{name}({params}) attributes {{subgroup_size={sg}}} {{\n{body}\n}}\n"


def _gemm(ta: str, tb: str, ty: str, M: int, K: int, N: int, dynamic: bool) -> Case:
    np_t = {"f32": np.float32, "f64": np.float64}[ty]
    sa = (K, M) if ta == "t" else (M, K)
    sb = (N, K) if tb == "t" else (K, N)

    def mr(s):
        return f"memref<{ty}x?x?>" if dynamic else f"memref<{ty}x{s[0]}x{s[1]}>"

    src = _fn(
        "k",
        f"%alpha: {ty}, %A: {mr(sa)}, %B: {mr(sb)}, %beta: {ty}, %C: {mr((M, N))}",
        f"    gemm.{ta}.{tb} %alpha, %A, %B, %beta, %C",
    )

    def want(a):
        A = a[1].T if ta == "t" else a[1]
        B = a[2].T if tb == "t" else a[2]
        return a[0] * (A.astype(np.float64) @ B) + a[3] * a[4]

    kind = "dyn" if dynamic else "static"
    return Case(
        f"gemm_{ta}{tb}_{ty}_{M}x{K}x{N}_{kind}",
        src,
        lambda: [np_t(1.5), F(sa, np_t), F(sb, np_t), np_t(0.5), F((M, N), np_t)],
        4,
        want,
    )


def _linalg() -> list[Case]:
    f = np.float32
    M, N = 32, 16
    m2 = f"memref<f32x{M}x{N}>"
    v = lambda n: f"memref<f32x{n}>"  # noqa: E731
    return [
        Case(
            "gemv_n",
            _fn(
                "k",
                f"%a: f32, %A: {m2}, %x: {v(N)}, %b: f32, %y: {v(M)}",
                "    gemv.n %a, %A, %x, %b, %y",
            ),
            lambda: [f(2), F((M, N)), F(N), f(0.5), F(M)],
            4,
            lambda a: a[0] * (a[1].astype(np.float64) @ a[2]) + a[3] * a[4],
        ),
        Case(
            "gemv_t",
            _fn(
                "k",
                f"%a: f32, %A: {m2}, %x: {v(M)}, %b: f32, %y: {v(N)}",
                "    gemv.t %a, %A, %x, %b, %y",
            ),
            lambda: [f(2), F((M, N)), F(M), f(0.5), F(N)],
            4,
            lambda a: a[0] * (a[1].T.astype(np.float64) @ a[2]) + a[3] * a[4],
        ),
        Case(
            "ger",
            _fn(
                "k",
                f"%a: f32, %x: {v(M)}, %y: {v(N)}, %b: f32, %C: {m2}",
                "    ger %a, %x, %y, %b, %C",
            ),
            lambda: [f(2), F(M), F(N), f(0.5), F((M, N))],
            4,
            lambda a: a[0] * np.outer(a[1], a[2]) + a[3] * a[4],
        ),
        Case(
            "hadamard",
            _fn(
                "k",
                f"%a: f32, %x: {v(M)}, %y: {v(M)}, %b: f32, %z: {v(M)}",
                "    hadamard %a, %x, %y, %b, %z",
            ),
            lambda: [f(2), F(M), F(M), f(0.5), F(M)],
            4,
            lambda a: a[0] * a[1] * a[2] + a[3] * a[4],
        ),
        Case(
            "axpby_n",
            _fn("k", f"%a: f32, %A: {m2}, %b: f32, %B: {m2}", "    axpby.n %a, %A, %b, %B"),
            lambda: [f(2), F((M, N)), f(0.5), F((M, N))],
            3,
            lambda a: a[0] * a[1] + a[2] * a[3],
        ),
        Case(
            "axpby_t",
            _fn(
                "k",
                f"%a: f32, %A: memref<f32x{N}x{M}>, %b: f32, %B: {m2}",
                "    axpby.t %a, %A, %b, %B",
            ),
            lambda: [f(2), F((N, M)), f(0.5), F((M, N))],
            3,
            lambda a: a[0] * a[1].T + a[2] * a[3],
        ),
        Case(
            "sum_n",
            _fn("k", f"%a: f32, %A: {m2}, %b: f32, %s: {v(M)}", "    sum.n %a, %A, %b, %s"),
            lambda: [f(2), F((M, N)), f(0.5), F(M)],
            3,
            lambda a: a[0] * a[1].sum(axis=1) + a[2] * a[3],
        ),
    ]


def _as(x: np.ndarray, ty: str) -> np.ndarray:
    """float32 values as an array of type ty (bf16: its bits; the values are exact)."""
    if ty == "bf16":
        return np.asfortranarray((x.view(np.uint32) >> 16).astype(np.uint16))
    return x.astype({"f32": np.float32, "f16": np.float16, "f64": np.float64}[ty])


def _value(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.uint16:
        return (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


def _mma(ta: str, tc: str, M: int, K: int, N: int, bug: str = "") -> Case:
    body = f"""    parallel {{
        %c0 = constant 0 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : coopmatrix<{ta}x{M}x{K},matrix_a>
        %b = cooperative_matrix_load %B[%c0,%c0] : coopmatrix<{ta}x{K}x{N},matrix_b>
        %c = cooperative_matrix_load %C[%c0,%c0] : coopmatrix<{tc}x{M}x{N},matrix_acc>
        %d = cooperative_matrix_mul_add %a, %b, %c : coopmatrix<{tc}x{M}x{N},matrix_acc>
        cooperative_matrix_store %d, %C[%c0,%c0]
    }}"""
    params = f"%A: memref<{ta}x{M}x{K}>, %B: memref<{ta}x{K}x{N}>, %C: memref<{tc}x{M}x{N}>"
    return Case(
        f"mma_{ta}_{tc}_{M}x{K}x{N}",
        _fn("k", params, body),
        lambda: [_as(F((M, K)), ta), _as(F((K, N)), ta), _as(F((M, N)), tc)],
        2,
        lambda a: _value(a[0]) @ _value(a[1]) + _value(a[2]),
        upstream_bug=bug,
    )


EDGE = _fn(
    "k",
    "%A: memref<f32x32x?>, %B: memref<f32x16x16>",
    """    parallel {
        %r = constant 16 : index
        %c = constant 8 : index
        %c0 = constant 0 : index
        %a = cooperative_matrix_load.n.both_checked %A[%r,%c] : coopmatrix<f32x16x16,matrix_acc>
        cooperative_matrix_store %a, %B[%c0,%c0]
    }""",
)


def _edge_want(a):
    out = np.zeros((16, 16))
    out[:, :12] = a[0][16:32, 8:20]
    return out


GEMM_EXAMPLE = (Path(__file__).parents[2] / "examples" / "ir" / "gemm.ir").read_text()


def _batched_want(a):
    return np.stack(
        [1.5 * a[1][:, :, i] @ a[2][:, :, i] + 0.5 * a[4][:, :, i] for i in range(3)], 2
    )


VECTOR_BUG = (
    "upstream's bug: OpTypeVector of 19, 32 or 64 components (SPIR-V allows 2, 3, 4, 8, 16)"
)


def _bug(case: Case) -> Case:
    return dataclasses.replace(case, upstream_bug=VECTOR_BUG)


CASES = (
    [_gemm(ta, tb, "f32", 32, 32, 32, False) for ta in "nt" for tb in "nt"]
    + [_gemm("n", "n", "f64", 32, 32, 32, False), _gemm("t", "t", "f64", 32, 32, 32, False)]
    + [_gemm("n", "t", "f64", 32, 32, 32, False), _gemm("t", "n", "f64", 32, 32, 32, False)]
    + [
        _bug(_gemm("n", "n", "f32", 32, 32, 32, True)),
        _bug(_gemm("t", "n", "f32", 32, 32, 32, True)),
    ]
    + [_gemm("n", "n", "f32", 16, 8, 16, False), _gemm("n", "n", "f32", 48, 16, 32, False)]
    + [_gemm("t", "t", "f32", 16, 8, 16, False), _gemm("n", "t", "f64", 16, 16, 16, False)]
    + [
        _bug(_gemm("n", "n", "f32", 37, 29, 45, True)),
        _bug(_gemm("t", "n", "f32", 37, 29, 45, True)),
    ]
    + [_bug(_gemm("n", "n", "f32", 64, 16, 48, False))]
    + _linalg()
    + [
        _mma("f32", "f32", 16, 8, 16),
        _mma("f32", "f32", 32, 16, 32, VECTOR_BUG),
        _mma("bf16", "f32", 16, 16, 16),
        _mma("f64", "f64", 16, 8, 16),
        _mma("f16", "f16", 16, 16, 16),
        _mma("f16", "f32", 32, 32, 32, VECTOR_BUG),
        Case(
            "coopmatrix_load_edge",
            EDGE,
            lambda: [F((32, 20)), np.zeros((16, 16), np.float32, order="F")],
            1,
            _edge_want,
        ),
        Case(
            "gemm_example_batched",
            GEMM_EXAMPLE,
            lambda: [
                np.float32(1.5),
                F((32, 32, 3)),
                F((32, 32, 3)),
                np.float32(0.5),
                F((32, 32, 3)),
            ],
            4,
            _batched_want,
            groups=3,
        ),
    ]
)


@pytest.fixture(scope="module")
def driver(tmp_path_factory) -> Path:
    if not SRC or not LIB.is_file():
        pytest.skip("needs TINYTC_UPSTREAM_SRC and TINYTC_UPSTREAM_BUILD (with src/libtinytc.a)")
    cc, cxx = shutil.which("gcc"), shutil.which("g++")
    if cc is None or cxx is None:
        pytest.skip("needs gcc and g++")
    d = tmp_path_factory.mktemp("upstream")
    (d / "drv.c").write_text(DRIVER)
    inc = [f"-I{SRC}/include", f"-I{BUILD}/include"]
    subprocess.run([cc, "-c", *inc, str(d / "drv.c"), "-o", str(d / "drv.o")], check=True)
    subprocess.run([cxx, str(d / "drv.o"), str(LIB), "-o", str(d / "drv")], check=True)
    return d / "drv"


def _upstream_pvc(driver: Path, src: str, tmp: Path) -> bytes:
    (tmp / "p.ir").write_text(src)
    r = subprocess.run([str(driver), "pvc", str(tmp / "p.ir"), str(tmp / "p.spv")])
    assert r.returncode == 0, f"upstream failed to compile (driver status {r.returncode})"
    return (tmp / "p.spv").read_bytes()


def test_at_least_20_programs():
    assert len([c for c in CASES if not c.upstream_bug]) >= 20


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_upstream_pvc_binary_emulated(case: Case, driver: Path, tmp_path: Path):
    from tinytc_py.compiler import binary_of
    from tinytc_py.emulate import emulate_spirv
    from tinytc_py.runtime.opencl import program
    from tinytc_py.target.core_info import CoreInfo, IntelGpuArchitecture

    data = _upstream_pvc(driver, case.src, tmp_path)
    if case.upstream_bug:
        with pytest.raises(TinytcError, match="input is invalid SPIR-V"):
            emulate_spirv(data)
        pytest.xfail(case.upstream_bug)
    ours = binary_of(case.src, CoreInfo.intel_from_arch(IntelGpuArchitecture.pvc))
    prog = program(dataclasses.replace(ours, data=emulate_spirv(data)))
    args = case.args()
    want = case.want([a.copy() if isinstance(a, np.ndarray) else a for a in args])
    prog.kernel(next(iter(ours.kernels)))(*args, num_groups=case.groups)
    np.testing.assert_allclose(args[case.out], want, rtol=1e-5, atol=1e-5)
