"""The subgroup shuffle extension (docs/extensions.md) on every number type and subgroup sizes
8, 16 and 32, against NumPy index arithmetic.

One work-group of one subgroup per launch; lane l reads x[l] and stores four results: shuffle
from lane S-1-l (a varying lane), xor with a uniform mask, up and down by a uniform delta. Lanes
whose source lies outside the subgroup get an undefined value (as in SPIR-V) and are not
compared. Shuffles move bits, so bf16 is compared through its bits.
"""

from __future__ import annotations

import numpy as np
import pytest

from .support import NP_DTYPE, NUMBER_TYPES, build, device_subgroup_sizes

SIZES = (8, 16, 32)
OPS = ("subgroup_shuffle", "subgroup_shuffle_xor", "subgroup_shuffle_up", "subgroup_shuffle_down")


def kernel(ty: str, S: int) -> str:
    stores = "\n".join(
        f"        %c{k} = constant {k} : index\n        store %r{k}, %o[%i, %c{k}]"
        for k in range(len(OPS))
    )
    return f"""
func @k(%x: memref<{ty}x{S}>, %o: memref<{ty}x{S}x4>, %m: i32, %d: i32)
    attributes {{subgroup_size={S}, work_group_size=[{S},1]}} {{
    parallel {{
        %l = subgroup_local_id : i32
        %i = cast %l : index
        %a = load %x[%i] : {ty}
        %last = constant {S - 1} : i32
        %rev = sub %last, %l : i32
        %r0 = subgroup_shuffle %a, %rev : {ty}
        %r1 = subgroup_shuffle_xor %a, %m : {ty}
        %r2 = subgroup_shuffle_up %a, %d : {ty}
        %r3 = subgroup_shuffle_down %a, %d : {ty}
{stores}
    }}
}}
"""


def values(ty: str, S: int) -> np.ndarray:
    rng = np.random.default_rng(S)
    if ty.startswith("c"):
        return (rng.integers(-99, 99, S) + 1j * rng.integers(-99, 99, S)).astype(NP_DTYPE[ty])
    if ty == "bf16":
        return rng.integers(0, 2**16, S).astype(np.uint16)  # any bits, even NaN patterns
    if ty in ("f16", "f32", "f64"):
        return (rng.standard_normal(S) * 100).astype(NP_DTYPE[ty])
    info = np.iinfo(NP_DTYPE[ty])
    return rng.integers(info.min, info.max, S, endpoint=True).astype(NP_DTYPE[ty])


@pytest.mark.parametrize("S", SIZES)
@pytest.mark.parametrize("ty", NUMBER_TYPES)
def test_shuffles(ty, S):
    if S not in device_subgroup_sizes():
        pytest.skip(f"the device has no subgroup size {S}")
    x = values(ty, S)
    out = np.zeros((S, 4), x.dtype, order="F")
    mask, delta = 5, 3
    build(kernel(ty, S)).kernel("k")(x, out, mask, delta, num_groups=(1, 1, 1))
    lane = np.arange(S)
    np.testing.assert_array_equal(out[:, 0], x[S - 1 - lane], err_msg="shuffle")
    np.testing.assert_array_equal(out[:, 1], x[lane ^ mask], err_msg="shuffle_xor")
    np.testing.assert_array_equal(out[delta:, 2], x[:-delta], err_msg="shuffle_up")
    np.testing.assert_array_equal(out[:-delta, 3], x[delta:], err_msg="shuffle_down")
