"""load / store / subview / expand / fuse / size / group members for every element type: values
(including nan, inf, -0.0 and the integer limits) must move bit-exactly through strided views."""

from __future__ import annotations

import numpy as np
import pytest

from tinytc_py.runtime.opencl import DTYPES, Group

from .support import build

NP = DTYPES

KERNEL = """
func @views(%a: memref<{ty}x?x?>, %b: memref<{ty}x?x?, strided<1,?>>, %f: memref<{ty}x?>)
    attributes {{subgroup_size=4, work_group_size=[4,1]}} {{
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    %m = size %a[0] : index
    %n = size %a[1] : index
    %m1 = sub %m, %c1 : index
    ; drop the first row of a, copy it transposed into b
    %v = subview %a[1:%m1, 0:%n] : memref<{ty}x?x?,strided<1,?>>
    for %j=%c0,%n {{
        for %i=%c0,%m1 {{
            %x = load %v[%i, %j] : {ty}
            store %x, %b[%j, %i]
        }}
    }}
    ; fuse a into a vector and expand it back: f[k] = a[k mod m, k div m]
    %fa = fuse %a[0, 1] : memref<{ty}x?>
    %e = expand %f[0 -> %m x %n] : memref<{ty}x?x?>
    for %j=%c0,%n {{
        for %i=%c0,%m {{
            %x = load %a[%i, %j] : {ty}
            store %x, %e[%i, %j]
        }}
    }}
}}

func @group(%G: group<memref<{ty}x?>x?, offset: ?>, %out: memref<{ty}x?x?>)
    attributes {{subgroup_size=4, work_group_size=[4,1]}} {{
    %id = group_id.x : index
    %g = load %G[%id] : memref<{ty}x?>
    %n = size %g[0] : index
    %c0 = constant 0 : index
    for %i=%c0,%n {{
        %x = load %g[%i] : {ty}
        store %x, %out[%i, %id]
    }}
}}
"""


def special_values(ty: str, count: int) -> np.ndarray:
    dt = NP[ty]
    rng = np.random.default_rng(7)
    if ty == "bf16":
        # raw bit patterns, incl. nan (0x7fc1), inf (0x7f80), -0.0 (0x8000), subnormals
        base = np.array([0x7FC1, 0x7F80, 0xFF80, 0x8000, 0x0001, 0x3F80], np.uint16)
        rest = rng.integers(0, 0xFFFF, count, dtype=np.uint16)
    elif ty.startswith("c"):
        base = np.array([complex(np.nan, 1), complex(np.inf, -np.inf), complex(-0.0, 0.0)], dt)
        rest = (rng.random(count) + 1j * rng.random(count)).astype(dt)
    elif ty.startswith("f"):
        fi = np.finfo(dt)
        base = np.array([np.nan, np.inf, -np.inf, -0.0, fi.max, fi.tiny, fi.smallest_subnormal], dt)
        rest = rng.standard_normal(count).astype(dt)
    else:
        ii = np.iinfo(dt)
        base = np.array([ii.min, ii.max, -1, 0], dt)
        rest = rng.integers(ii.min, ii.max, count, dtype=dt)
    return np.concatenate([base, rest])[:count]


def same_bits(x: np.ndarray, y: np.ndarray) -> None:
    np.testing.assert_array_equal(
        np.ascontiguousarray(x).view(np.uint8), np.ascontiguousarray(y).view(np.uint8)
    )


@pytest.mark.parametrize("ty", list(NP))
def test_views_move_values_exactly(ty):
    m, n = 7, 5
    a = np.asfortranarray(special_values(ty, m * n).reshape((m, n), order="F"))
    ld = n + 3  # b has a leading dimension larger than its rows
    b_store = np.zeros((ld, m - 1), NP[ty], order="F")
    b = b_store[:n, :]
    f = np.zeros(m * n, NP[ty])
    build(KERNEL.format(ty=ty)).kernel("views")(a, b, f)
    same_bits(np.asfortranarray(b_store[:n]), np.asfortranarray(a[1:].T))
    same_bits(f, a.ravel(order="F"))


@pytest.mark.parametrize("ty", list(NP))
def test_group_members_with_dynamic_size_and_offset(ty):
    sizes, offset = [3, 6, 1, 4], 2
    # the runtime stores G[i] = data - offset, so the kernel's member i is exactly members[i]
    members = [special_values(ty, s) for s in sizes]
    out = np.zeros((max(sizes), len(sizes)), NP[ty], order="F")
    build(KERNEL.format(ty=ty)).kernel("group")(Group(members, offset), out, num_groups=len(sizes))
    for k, (s, mem) in enumerate(zip(sizes, members, strict=True)):
        same_bits(out[:s, k].copy(), mem)
