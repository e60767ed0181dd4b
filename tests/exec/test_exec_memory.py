"""Memrefs with static/dynamic shapes and strides, subview/expand/fuse/size, groups, associated.

Arrays are column-major (Fortran order): memref element (i, j) is at i*stride0 + j*stride1.
"""

from __future__ import annotations

import numpy as np
import pytest

from tinytc_py.runtime.opencl import Group

from .support import build

pytestmark = pytest.mark.timeout(120, method="thread")


def test_dynamic_memref_subview_column():
    """B[:, j] = 2 * A[off:off+m, j] for a dynamic ?x? A, with subviews of dynamic size."""
    src = """
func @sub(%A: memref<f32x?x?>, %B: memref<f32x?x?>, %off: index)
    attributes {subgroup_size=4, work_group_size=[4,1]} {
    %j = group_id.x : index
    %m = size %B[0] : index
    %a = subview %A[%off:%m, %j] : memref<f32x?>
    %b = subview %B[0:%m, %j] : memref<f32x?>
    %two = constant 2.0 : f32
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    for %i=%c0,%m {
        %x = load %a[%i] : f32
        %y = mul %two, %x : f32
        store %y, %b[%i]
    }
}
"""
    rng = np.random.default_rng(0)
    A = np.asfortranarray(rng.random((20, 6), dtype=np.float32))
    B = np.zeros((9, 6), dtype=np.float32, order="F")
    build(src).kernel("sub")(A, B, 5, num_groups=6)
    np.testing.assert_array_equal(B, 2 * A[5:14])


def test_c_order_array_is_passed_in_fortran_order():
    """A C-ordered NumPy array does not fit stride [1,?]; the runtime passes a Fortran copy."""
    src = """
func @tr(%A: memref<i32x?x?>, %B: memref<i32x?x?>)
    attributes {subgroup_size=4, work_group_size=[4,1]} {
    %j = group_id.x : index
    %i = group_id.y : index
    %x = load %A[%i, %j] : i32
    store %x, %B[%j, %i]
}
"""
    A = np.arange(12, dtype=np.int32).reshape(3, 4)  # C order
    B = np.zeros((4, 3), dtype=np.int32)
    build(src).kernel("tr")(A, B, num_groups=(4, 3))
    np.testing.assert_array_equal(B, A.T)


def test_static_strided_memref_and_expand_fuse():
    """A static strided<1,10> 8x4 memref (a view into a 10x4 array), expand and fuse."""
    src = """
func @ef(%A: memref<f64x8x4,strided<1,10>>, %C: memref<f64x32>, %D: memref<f64x2x4x4>)
    attributes {subgroup_size=4, work_group_size=[4,1]} {
    %k = group_id.x : index
    %e = expand %A[0 -> 2 x 4] : memref<f64x2x4x4,strided<1,2,10>>
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    %c2 = constant 2 : index
    %c4 = constant 4 : index
    for %j=%c0,%c4 {
        for %i1=%c0,%c4 {
            for %i0=%c0,%c2 {
                %x = load %e[%i0, %i1, %j] : f64
                store %x, %D[%i0, %i1, %j]
            }
        }
    }
    %col = subview %A[0:8, %k] : memref<f64x8>
    %v = expand %col[0 -> 2 x 4] : memref<f64x2x4>
    %f = fuse %v[0, 1] : memref<f64x8>
    %base = mul %k, %c4 : index
    %c8 = constant 8 : index
    %b2 = mul %base, %c2 : index
    for %i=%c0,%c8 {
        %x = load %f[%i] : f64
        %o = add %b2, %i : index
        store %x, %C[%o]
    }
}
"""
    big = np.asfortranarray(np.arange(40, dtype=np.float64).reshape(10, 4, order="F"))
    view = big[:8, :]  # strides (1, 10) elements
    C = np.zeros(32)
    D = np.zeros((2, 4, 4), order="F")
    build(src).kernel("ef")(view, C, D, num_groups=4)
    np.testing.assert_array_equal(C, view.flatten(order="F"))
    np.testing.assert_array_equal(D, view.reshape(2, 4, 4, order="F"))


def test_dynamic_expand_and_fuse():
    src = """
func @dyn(%A: memref<i32x?x?>, %out: memref<i32x?>, %p: index)
    attributes {subgroup_size=4, work_group_size=[4,1]} {
    %e = expand %A[0 -> %p x 2] : memref<i32x?x2x?>
    %f = fuse %e[1, 2] : memref<i32x?x?,strided<1,?>>
    %n0 = size %f[0] : index
    %n1 = size %f[1] : index
    %c0 = constant 0 : index
    for %j=%c0,%n1 {
        for %i=%c0,%n0 {
            %x = load %f[%i, %j] : i32
            %t = mul %j, %n0 : index
            %o = add %t, %i : index
            store %x, %out[%o]
        }
    }
}
"""
    A = np.asfortranarray(np.arange(6 * 5, dtype=np.int32).reshape(6, 5, order="F"))
    out = np.zeros(30, dtype=np.int32)
    build(src).kernel("dyn")(A, out, 3, num_groups=1)
    # expand mode 0 (6) into 3x2, fuse modes (2, 5) -> 3 x 10 with stride (1, 3)
    np.testing.assert_array_equal(out, A.reshape(3, 10, order="F").flatten(order="F"))


def test_scalar_memref_and_associated():
    src = """
func @zero_d(%a: memref<f32>, %b: memref<f32x?>)
    attributes {subgroup_size=4, work_group_size=[4,1]} {
    %x = load %a[] : f32
    %has = associated %b : bool
    if %has {
        %c0 = constant 0 : index
        store %x, %b[%c0]
    }
    %one = constant 1.0 : f32
    %y = add %x, %one : f32
    store %y, %a[]
}
"""
    a = np.array(41.0, dtype=np.float32)
    b = np.zeros(3, dtype=np.float32)
    build(src).kernel("zero_d")(a, b)
    assert a[()] == 42.0 and b[0] == 41.0


GROUP_SRC = """
func @grp(%G: group<memref<f32x?x3>x?, offset: ?>, %out: memref<f32x?x3>, %sizes: memref<index x ?>)
    attributes {subgroup_size=4, work_group_size=[4,1]} {
    %id = group_id.x : index
    %m = load %G[%id] : memref<f32x?x3>
    %n = size %m[0] : index
    %gs = size %G[0] : index
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    %c3 = constant 3 : index
    store %n, %sizes[%id]
    %last = sub %gs, %c1 : index
    %is_last = equal %id, %last : bool
    if %is_last {
        store %gs, %sizes[%gs]
    }
    for %j=%c0,%c3 {
        %acc0 = constant 0.0 : f32
        %s = for %i=%c0,%n init(%acc=%acc0) -> (f32) {
            %x = load %m[%i, %j] : f32
            %a2 = add %acc, %x : f32
            yield (%a2)
        }
        store %s, %out[%id, %j]
        %z = constant -1.0 : f32
        store %z, %m[%c0, %j]
    }
}
"""


@pytest.mark.parametrize("offset", [0, 3])
def test_group_dynamic_size_and_offset(offset):
    """Member i is G[i] + offset with its own dynamic shape; stores reach the members."""
    rng = np.random.default_rng(1)
    members = [np.asfortranarray(rng.random((2 + i, 3), dtype=np.float32)) for i in range(4)]
    before = [m.copy() for m in members]
    out = np.zeros((4, 3), dtype=np.float32, order="F")
    sizes = np.zeros(5, dtype=np.int64)
    build(GROUP_SRC).kernel("grp")(Group(members, offset), out, sizes, num_groups=4)
    for i, (m, b) in enumerate(zip(members, before, strict=False)):
        np.testing.assert_allclose(out[i], b.sum(axis=0), rtol=1e-6)
        np.testing.assert_array_equal(m[0], -1.0)
        np.testing.assert_array_equal(m[1:], b[1:])
    np.testing.assert_array_equal(sizes, [2, 3, 4, 5, 4])


def test_group_static():
    src = """
func @gs(%G: group<memref<i64x4>x3>, %out: memref<i64x3>)
    attributes {subgroup_size=4, work_group_size=[4,1]} {
    %id = group_id.x : index
    %m = load %G[%id] : memref<i64x4>
    %c2 = constant 2 : index
    %x = load %m[%c2] : i64
    %gs = size %G[0] : index
    %gl = cast %gs : i64
    %y = mul %x, %gl : i64
    store %y, %out[%id]
}
"""
    members = [np.arange(4, dtype=np.int64) * (i + 1) for i in range(3)]
    out = np.zeros(3, dtype=np.int64)
    build(src).kernel("gs")(members, out, num_groups=3)
    np.testing.assert_array_equal(out, [6, 12, 18])
