"""The recipes package on its own: generated programs compile, argument layouts follow
docs/design.md §B8, and invalid parameters are rejected."""

from __future__ import annotations

import struct

import pytest

from tinytc_py.errors import Status, TinytcError
from tinytc_py.ir.types import DYNAMIC
from tinytc_py.recipes import small_gemm_batched, tall_and_skinny
from tinytc_py.target.core_info import CoreInfo


def test_small_gemm_batched_layout():
    r = small_gemm_batched(CoreInfo.default(), "f64", "t", "n", 4, 5, 6, 6, 24, 6, 30, 4, 20)
    assert set(r.binary.kernels) == {"gemm", "gemm_beta0"}
    zero, one = bytes(8), struct.pack("<d", 1.0)
    kernel, args, groups = r.small_gemm_batched_args(9, one, (0, 1), (0, 2), zero, (0, 3))
    assert (kernel, groups) == ("gemm_beta0", 9)
    assert [a.index for a in args] == list(range(8))
    assert [a.mem is not None for a in args] == [False, True, False, True] + [
        False,
        False,
        True,
        False,
    ]
    assert r.small_gemm_batched_args(9, one, (0, 1), (0, 2), one, (0, 3))[0] == "gemm"
    with pytest.raises(TinytcError) as err:
        r.small_gemm_batched_args(9, bytes(4), (0, 1), (0, 2), one, (0, 3))
    assert err.value.status == Status.invalid_kernel_arguments
    with pytest.raises(TinytcError):
        small_gemm_batched(CoreInfo.default(), "f32", "n", "n", DYNAMIC, 1, 1, 1, 1, 1, 1, 1, 1)


@pytest.mark.parametrize("M", [DYNAMIC, 256, 200])
def test_tall_and_skinny_layout(M):
    r = tall_and_skinny(CoreInfo.default(), "f32", M=M, N=8, K=4, ldB=4, M_block_size=64)
    kernel, args, groups = r.tall_and_skinny_args(200, bytes(4), (0, 1), 200, (0, 2), 4,
                                                  bytes(4), (0, 3), 200)  # fmt: skip
    assert kernel == "gemm_beta0" and groups == 4
    dynamic_m = M == DYNAMIC
    # alpha, A, [M], ldA, B, beta, C, [M], ldC
    assert len(args) == 7 + 2 * dynamic_m
    with pytest.raises(TinytcError):
        tall_and_skinny(CoreInfo.default(), "f32", N=DYNAMIC, K=4)
