"""for loops with loop-carried values, if with results, nesting, parallel, builtins."""

from __future__ import annotations

import numpy as np
import pytest

from .support import build

pytestmark = pytest.mark.timeout(120, method="thread")


def test_for_fibonacci_loop_carried():
    """The reference's example: two loop-carried values, i32 loop range."""
    src = """
func @fib(%out: memref<i64x?>)
    attributes {subgroup_size=4, work_group_size=[4,1]} {
    %gid = group_id.x : index
    %from = constant 0 : i32
    %to = cast %gid : i32
    %f0 = constant 0 : i64
    %f1 = constant 1 : i64
    %a, %b = for %n=%from,%to init(%x=%f0,%y=%f1) -> (i64,i64) {
        %z = add %x, %y : i64
        yield (%y, %z)
    }
    store %a, %out[%gid]
}
"""
    out = np.full(20, -1, dtype=np.int64)
    build(src).kernel("fib")(out, num_groups=20)
    fib = [0, 1]
    while len(fib) < 20:
        fib.append(fib[-1] + fib[-2])
    np.testing.assert_array_equal(out, fib)


def test_for_step_and_column_sum():
    """Sum of every second row of column gid of a dynamic matrix: step, size, loads."""
    src = """
func @colsum(%A: memref<f64x?x?>, %s: memref<f64x?>)
    attributes {subgroup_size=4, work_group_size=[4,1]} {
    %j = group_id.x : index
    %m = size %A[0] : index
    %c0 = constant 0 : index
    %c2 = constant 2 : index
    %z = constant 0.0 : f64
    %sum = for %i=%c0,%m,%c2 init(%acc=%z) -> (f64) {
        %v = load %A[%i, %j] : f64
        %acc2 = add %acc, %v : f64
        yield (%acc2)
    } attributes {unroll=2}
    store %sum, %s[%j]
}
"""
    A = np.asfortranarray(np.random.default_rng(0).random((13, 7)))
    s = np.zeros(7)
    build(src).kernel("colsum")(A, s, num_groups=7)
    np.testing.assert_allclose(s, A[::2].sum(axis=0))


def test_nested_if_in_for_with_results():
    """Collatz steps: an if with results inside a loop, a yield from the merge block."""
    src = """
func @collatz(%out: memref<i32x?>)
    attributes {subgroup_size=4, work_group_size=[4,1]} {
    %gid = group_id.x : index
    %g = cast %gid : i32
    %one = constant 1 : i32
    %start = add %g, %one : i32
    %two = constant 2 : i32
    %three = constant 3 : i32
    %c0 = constant 0 : i32
    %c100 = constant 200 : i32
    %x, %steps = for %k=%c0,%c100 init(%v=%start,%cnt=%c0) -> (i32, i32) {
        %done = equal %v, %one : bool
        %nv, %nc = if %done -> (i32, i32) {
            yield (%v, %cnt)
        } else {
            %r = rem %v, %two : i32
            %even = equal %r, %c0 : bool
            %w = if %even -> (i32) {
                %h = div %v, %two : i32
                yield (%h)
            } else {
                %t = mul %v, %three : i32
                %t1 = add %t, %one : i32
                yield (%t1)
            }
            %c1 = add %cnt, %one : i32
            yield (%w, %c1)
        }
        yield (%nv, %nc)
    }
    store %steps, %out[%gid]
}
"""

    def steps(n):
        c = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            c += 1
        return c

    out = np.zeros(30, dtype=np.int32)
    build(src).kernel("collatz")(out, num_groups=30)
    np.testing.assert_array_equal(out, [steps(n) for n in range(1, 31)])


def test_if_without_else_and_bool_logic():
    """Result-less ifs, one spelled with the empty result list `-> ()` upstream accepts."""
    src = """
func @clip(%a: memref<f32x?>, %lo: f32, %hi: f32)
    attributes {subgroup_size=4, work_group_size=[4,1]} {
    %gid = group_id.x : index
    %x = load %a[%gid] : f32
    %below = less_than %x, %lo : bool
    %above = greater_than %x, %hi : bool
    %out = or %below, %above : bool
    %inside = not %out : bool
    %both = and %inside, %below : bool
    %never = xor %both, %both : bool
    if %never {
        store %lo, %a[%gid]
    }
    if %below {
        store %lo, %a[%gid]
    }
    if %above -> () {
        store %hi, %a[%gid]
    } else {
        yield ()
    }
}
"""
    a = np.linspace(-2, 2, 11).astype(np.float32)
    want = np.clip(a, -1, 1)
    build(src).kernel("clip")(a, -1.0, 1.0, num_groups=11)
    np.testing.assert_array_equal(a, want)


def test_builtins():
    """group_id / num_groups in three dimensions, subgroup builtins inside parallel."""
    src = """
func @ids(%g: memref<indexx8x?>, %s: memref<i32x6x?>)
    attributes {subgroup_size=8, work_group_size=[16,2]} {
    %gx = group_id.x : index
    %gy = group_id.y : index
    %gz = group_id.z : index
    %nx = num_groups.x : index
    %ny = num_groups.y : index
    %nz = num_groups.z : index
    %t0 = mul %gz, %ny : index
    %t1 = add %t0, %gy : index
    %t2 = mul %t1, %nx : index
    %lin = add %t2, %gx : index
    %v = [%gx, %gy, %gz, %nx, %ny, %nz]
    %c0 = constant 0 : index
    store %gx, %g[%c0, %lin]
    %c1 = constant 1 : index
    store %gy, %g[%c1, %lin]
    %c2 = constant 2 : index
    store %gz, %g[%c2, %lin]
    %c3 = constant 3 : index
    store %nx, %g[%c3, %lin]
    %c4 = constant 4 : index
    store %ny, %g[%c4, %lin]
    %c5 = constant 5 : index
    store %nz, %g[%c5, %lin]
    parallel {
        %sx = subgroup_id.x : i32
        %sy = subgroup_id.y : i32
        %sz = subgroup_id.z : i32
        %sl = subgroup_linear_id : i32
        %ss = subgroup_size : i32
        %ns = num_subgroups.x : i32
        %nsy = num_subgroups.y : i32
        %lid = subgroup_local_id : i32
        %nsz = num_subgroups.z : i32
        %nsg = mul %ns, %nsy : i32
        %nsg3 = mul %nsg, %nsz : i32
        %base = cast %lin : i32
        %b1 = mul %base, %nsg3 : i32
        %row = add %b1, %sl : i32
        %col = cast %row : index
        %zero = constant 0 : i32
        %first = equal %lid, %zero : bool
        if %first {
            store %sx, %s[%c0, %col]
            store %sy, %s[%c1, %col]
            store %sz, %s[%c2, %col]
            store %sl, %s[%c3, %col]
            store %ss, %s[%c4, %col]
            store %nsg3, %s[%c5, %col]
        }
    }
}
"""
    src = src.replace("    %v = [%gx, %gy, %gz, %nx, %ny, %nz]\n", "")
    ng = (3, 2, 2)
    total = 12
    g = np.zeros((8, total), dtype=np.int64, order="F")
    s = np.full((6, total * 4), -1, dtype=np.int32, order="F")
    kernel = build(src).kernel("ids")
    # 8 lanes, so 2 x 2 subgroups; 16 where the device has no subgroup size 8 (the emulated
    # GPUs: support.build widens the kernel), so 1 x 2
    sgs = kernel.info.subgroup_size
    per_x = 16 // sgs
    kernel(g, s, num_groups=ng)
    lin = 0
    for z in range(2):
        for y in range(2):
            for x in range(3):
                np.testing.assert_array_equal(g[:6, lin], [x, y, z, 3, 2, 2])
                for sl in range(2 * per_x):
                    col = lin * 2 * per_x + sl
                    want = [sl % per_x, sl // per_x, 0, sl, sgs, 2 * per_x]
                    np.testing.assert_array_equal(s[:, col], want)
                lin += 1
