"""The select and bitcast extensions (docs/extensions.md) on every number type and on
cooperative matrices, against NumPy (`np.where` and `ndarray.view`).

bitcast results are compared bit for bit (random bit patterns, NaNs included), so a conversion
instead of a reinterpretation cannot pass.
"""

from __future__ import annotations

import numpy as np
import pytest

from .support import NP_DTYPE, NUMBER_TYPES, build, run_ops

RNG = np.random.default_rng(77)
N = 40

# (source, result) pairs of the same width
BITCASTS = [
    ("f32", "i32"),
    ("i32", "f32"),
    ("f64", "i64"),
    ("i64", "f64"),
    ("index", "f64"),
    ("f64", "index"),
    ("c32", "f64"),
    ("c32", "i64"),
    ("i64", "c32"),
    ("f16", "i16"),
    ("i16", "f16"),
    ("bf16", "i16"),
    ("i16", "bf16"),
    ("bf16", "f16"),
    ("f16", "bf16"),
    ("i8", "i8"),
]


def random_bits(ty: str, n: int) -> np.ndarray:
    """n values of type ty with uniformly random bit patterns (bf16: its bits)."""
    raw = RNG.integers(0, 256, n * np.dtype(NP_DTYPE[ty]).itemsize, dtype=np.uint8)
    return raw.view(NP_DTYPE[ty])


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


@pytest.mark.parametrize("ty", NUMBER_TYPES)
def test_select_scalars(ty):
    x, y = random_bits(ty, N), random_bits(ty, N)
    pre = [
        "%two = constant 2 : index",
        "%par = rem %i, %two : index",
        "%zero = constant 0 : index",
        "%even = equal %par, %zero : bool",
    ]
    out = run_ops(ty, ["select %even, %x, %y"], [x, y], pre=pre)
    want = np.where(np.arange(N) % 2 == 0, x, y)
    np.testing.assert_array_equal(bits(out[:, 0]), bits(want))


@pytest.mark.parametrize(("src", "dst"), BITCASTS)
def test_bitcast_scalars(src, dst):
    x = random_bits(src, N)
    out = run_ops(src, ["bitcast %x"], [x], rty=dst)
    np.testing.assert_array_equal(bits(out[:, 0]), bits(x))


def coop_kernel(ty: str, to: str) -> str:
    cm = f"coopmatrix<{ty}x16x8, matrix_acc>"
    return f"""
func @k(%A: memref<{ty}x16x8>, %B: memref<{ty}x16x8>, %C: memref<{ty}x16x8>,
        %D: memref<{to}x16x8>, %flag: i32) attributes {{subgroup_size=16}} {{
    parallel {{
        %z = constant 0 : index
        %one = constant 1 : i32
        %c = equal %flag, %one : bool
        %a = cooperative_matrix_load %A[%z, %z] : {cm}
        %b = cooperative_matrix_load %B[%z, %z] : {cm}
        %s = select %c, %a, %b : {cm}
        cooperative_matrix_store %s, %C[%z, %z]
        %t = bitcast %a : coopmatrix<{to}x16x8, matrix_acc>
        cooperative_matrix_store %t, %D[%z, %z]
    }}
}}
"""


@pytest.mark.parametrize(("ty", "to"), [("f32", "i32"), ("f64", "i64"), ("bf16", "f16")])
@pytest.mark.parametrize("flag", [0, 1])
def test_select_bitcast_coopmatrix(ty, to, flag):
    A = np.asfortranarray(random_bits(ty, 128).reshape(16, 8))
    B = np.asfortranarray(random_bits(ty, 128).reshape(16, 8))
    C = np.zeros((16, 8), NP_DTYPE[ty], order="F")
    D = np.zeros((16, 8), NP_DTYPE[to], order="F")
    build(coop_kernel(ty, to)).kernel("k")(A, B, C, D, flag, num_groups=(1, 1, 1))
    np.testing.assert_array_equal(bits(C.T), bits((A if flag else B).T))
    np.testing.assert_array_equal(bits(D.T), bits(A.T))
