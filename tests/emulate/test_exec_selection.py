"""Chosen execution tests of tests/exec run for pvc and bmg through tinytc-emulate in every run.

`TINYTC_EMULATE=pvc` (or bmg) runs all of tests/exec so (about 6 minutes per GPU on 2 cores);
this selection keeps the default suite's share under a minute and still takes every GPU-only
path the compiler has: 2D block loads and stores (cooperative-matrix loads/stores of f32,
f64, i8, bf16 with odd column counts; checked loads and stores at the edges, incl. the atomic
store), DPAS products (f16, bf16, i8 operands with f32, i32, f16 and bf16 accumulators, and
the f32 fallback), atomics from several work-groups, a loop-carried accumulator, and the
linalg GEMM (static 17x33x9 in all four transposes, batched with odd sizes) and GEMV, and the
extensions (subgroup shuffles, work-group collectives, the softmax example). Each
case is the unchanged test function of tests/exec; `emulating` makes its programs build for
the GPU (support.py).
"""

from __future__ import annotations

import pytest

from exec import support  # noqa: I001
from exec import test_exec_coopmatrix as cm
from exec import test_exec_linalg as la
from exec import test_exec_shuffle as sh
from exec import test_exec_work_group as wg

pytest.importorskip("pyopencl")
pytestmark = pytest.mark.timeout(600, method="thread")

SELECTION = [
    (cm.test_load_store_transposes, ("f32", 16, 13, 16)),
    (cm.test_load_store_transposes, ("f64", 16, 17, 16)),
    (cm.test_load_store_transposes, ("i8", 32, 17, 16)),
    (cm.test_load_store_transposes, ("bf16", 16, 5, 16)),
    (cm.test_checked_load_store_at_edges, ("f32", 16, 13, 16, "acc", "")),
    (cm.test_checked_load_store_at_edges, ("f16", 32, 5, 16, "b", "")),
    (cm.test_checked_load_store_at_edges, ("f32", 8, 5, 8, "acc", "atomic_")),
    (cm.test_mul_add, ("f32", "f32", "f32", "f32", 16, 8, 5, 16)),
    (cm.test_mul_add, ("f16", "f16", "f32", "f32", 16, 16, 17, 16)),
    (cm.test_mul_add, ("i8", "i8", "i32", "i32", 32, 32, 13, 16)),
    (cm.test_mul_add, ("bf16", "bf16", "bf16", "bf16", 16, 8, 5, 16)),
    (cm.test_mul_add, ("f16", "f16", "f16", "f16", 16, 8, 13, 16)),
    (cm.test_atomics_from_several_work_groups, ("f32", 16, 13, 16)),
    (cm.test_gemm_loop_carried_accumulator, (16,)),
    (la.test_gemm_static, (17, 33, 9)),
    (la.test_gemm_batched, ()),
    (la.test_gemv, ("f32", "f32", "f32", "t")),
    (sh.test_shuffles, ("f16", 16)),
    (wg.test_work_group_collectives, ("f64", 16, (64, 1))),
    (wg.test_softmax_examples, ("softmax.ir", 100)),
]


def _id(case) -> str:
    fn, args = case
    return "-".join([fn.__name__, *map(str, args)]).rstrip("-")


@pytest.mark.parametrize("device", ["pvc", "bmg"])
@pytest.mark.parametrize("case", SELECTION, ids=[_id(c) for c in SELECTION])
def test_gpu_path(case, device):
    fn, args = case
    with support.emulating(device):
        fn(*args)
