"""foreach (1-d, n-d, dynamic bounds, remainders), alloca in local memory with barriers, and the
cooperation between collective and SPMD regions, executed against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from tinytc_py.compiler import compile_to_spirv
from tinytc_py.errors import CompilationError, Status
from tinytc_py.ir.context import CompilerContext
from tinytc_py.runtime.opencl import DTYPES
from tinytc_py.text.dialect import parse

from .support import build
from .test_exec_memory_types import special_values

FOREACH_1D = """
func @k(%a: memref<{ty}x?>, %b: memref<{ty}x?>, %lo: index, %hi: index)
    attributes {{subgroup_size={S}, work_group_size=[{W0},{W1}]}} {{
    foreach (%i) = (%lo), (%hi) {{
        %x = load %a[%i] : {ty}
        %y = add %x, %x : {ty}
        store %y, %b[%i]
    }}
}}
"""


@pytest.mark.parametrize(
    ("S", "W0", "W1", "n", "lo"),
    [
        (4, 4, 1, 1, 0),
        (8, 16, 1, 37, 0),
        (16, 32, 2, 100, 3),
        (8, 8, 3, 8, 8),
        (32, 64, 1, 1000, 17),
    ],
)
def test_foreach_1d_with_remainders(S, W0, W1, n, lo):
    text = FOREACH_1D.format(ty="i32", S=S, W0=W0, W1=W1)
    a = np.arange(n + 5, dtype=np.int32) + 1
    b = np.zeros_like(a)
    build(text).kernel("k")(a, b, lo, n, num_groups=(1, 1, 1))
    want = np.zeros_like(a)
    want[lo:n] = 2 * a[lo:n]
    np.testing.assert_array_equal(b, want)


FOREACH_3D = """
func @k(%a: memref<f64x?x?x?>, %b: memref<f64x?x?x?>)
    attributes {{subgroup_size={S}, work_group_size=[{W0},{W1}]}} {{
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    %c2 = constant 2 : index
    %m = size %a[0] : index
    %n = size %a[1] : index
    %k = size %a[2] : index
    foreach (%i, %j, %l) = (%c1, %c0, %c0), (%m, %n, %k) {{
        %x = load %a[%i, %j, %l] : f64
        %li = cast %l : f64
        %y = mul %x, %li : f64
        store %y, %b[%i, %j, %l]
    }}
}}
"""


@pytest.mark.parametrize(("S", "W0", "W1", "shape"), [(8, 8, 1, (5, 3, 2)), (4, 8, 3, (33, 17, 3))])
def test_foreach_3d_dynamic(S, W0, W1, shape):
    text = FOREACH_3D.format(S=S, W0=W0, W1=W1)
    a = np.asfortranarray(np.random.default_rng(0).random(shape))
    b = np.zeros_like(a)
    build(text).kernel("k")(a, b, num_groups=(1, 1, 1))
    want = np.zeros_like(a)
    want[1:] = a[1:] * np.arange(shape[2])[None, None, :]
    np.testing.assert_array_equal(b, want)


LOCAL_REVERSE = """
func @k(%a: memref<f32x?x{N}>, %b: memref<f32x?x{N}>)
    attributes {{subgroup_size=8, work_group_size=[16,2]}} {{
    %gid = group_id.x : index
    %src = subview %a[%gid, 0:{N}] : memref<f32x{N},strided<?>>
    %dst = subview %b[%gid, 0:{N}] : memref<f32x{N},strided<?>>
    %tmp = alloca : memref<f32x{N},local>
    %other = alloca {{alignment=64}} : memref<i8x3,local>
    %c0 = constant 0 : index
    %cn = constant {N} : index
    foreach (%i) = (%c0), (%cn) {{
        %x = load %src[%i] : f32
        store %x, %tmp[%i]
    }}
    foreach (%i) = (%c0), (%cn) {{
        %one = constant 1 : index
        %last = sub %cn, %one : index
        %r = sub %last, %i : index
        %x = load %tmp[%r] : f32
        store %x, %dst[%i]
    }}
    %tmp2 = alloca : memref<i32x5,local>
    foreach (%i) = (%c0), (%cn) {{
        %c3 = constant 3 : index
        %is = rem %i, %c3 : index
        %v = constant 7 : i8
        store %v, %other[%is]
    }}
}}
"""


def test_alloca_and_barriers_between_foreach_loops():
    """The second loop reads what other work-items wrote into local memory: insert-barrier must
    put a barrier between the loops; the allocas share one SLM array at distinct offsets."""
    n, groups = 77, 3
    text = LOCAL_REVERSE.format(N=n)
    a = np.asfortranarray(np.random.default_rng(1).random((groups, n), dtype=np.float32))
    b = np.zeros_like(a)
    build(text).kernel("k")(a, b, num_groups=(groups, 1, 1))
    np.testing.assert_array_equal(b, a[:, ::-1])


def test_alloca_alignment_above_base_alignment_is_located():
    # The alloca is used: dead-code elimination erases an unused one before the check.
    src = """func @k(%x: f32) {
    %t = alloca {alignment=256} : memref<f32x16,local>
    %c0 = constant 0 : index
    store %x, %t[%c0]
}
"""
    with pytest.raises(CompilationError) as e:
        compile_to_spirv(parse(src, CompilerContext(), "a.ir"))
    assert e.value.status is Status.ir_insufficient_alignment
    assert (e.value.loc.begin.line, e.value.loc.begin.column) == (
        2,
        10,
    )  # the instruction starts at its mnemonic
    assert "alignment 256 exceeds" in e.value.rendered


def test_sizes_chosen_for_the_device_without_attributes():
    """work-group-size picks S and the work-group size from the CPU device's core info."""
    text = """
func @k(%a: memref<f32x?>, %b: memref<f32x?>) {
    %c0 = constant 0 : index
    %n = size %a[0] : index
    foreach (%i) = (%c0), (%n) {
        %x = load %a[%i] : f32
        %y = mul %x, %x : f32
        store %y, %b[%i]
    }
}
"""
    from tinytc_py.runtime import device
    from tinytc_py.runtime.opencl import core_info_for

    prog = build(text)
    k = prog.kernel("k")
    info = core_info_for(device.default_device())
    sgs, wgs = k.info.subgroup_size, k.info.work_group_size
    assert sgs in info.subgroup_sizes
    assert wgs[0] % sgs == 0 and wgs[0] * wgs[1] <= info.max_work_group_size(sgs)
    a = np.linspace(-3, 3, 1001, dtype=np.float32)
    b = np.zeros_like(a)
    k(a, b, num_groups=(1, 1, 1))
    np.testing.assert_array_equal(b, a * a)


@pytest.mark.parametrize("ty", ["i16", "i32", "i64"])
def test_foreach_and_for_over_integer_types(ty):
    """Loop bounds of every integer type: the loop variable keeps its type."""
    text = f"""
func @k(%b: memref<i64x?>, %lo: {ty}, %hi: {ty})
    attributes {{subgroup_size=8, work_group_size=[16,1]}} {{
    foreach (%i) = (%lo), (%hi) {{
        %one = constant 1 : {ty}
        %s = for %j=%lo,%i init(%acc=%one) -> ({ty}) {{
            %a2 = add %acc, %one : {ty}
            yield (%a2)
        }}
        %k = cast %i : index
        %v = cast %s : i64
        store %v, %b[%k]
    }}
}}
"""
    lo, hi = 3, 45
    b = np.full(50, -1, np.int64)
    build(text).kernel("k")(b, lo, hi, num_groups=(1, 1, 1))
    want = np.full(50, -1, np.int64)
    want[lo:hi] = np.arange(lo, hi) - lo + 1
    np.testing.assert_array_equal(b, want)


@pytest.mark.parametrize("ty", list(DTYPES))
def test_local_memory_round_trip_every_type(ty):
    """Values of every type go through an alloca and come back reversed, bit-exactly."""
    n = 19
    text = f"""
func @k(%a: memref<{ty}x{n}>, %b: memref<{ty}x{n}>)
    attributes {{subgroup_size=4, work_group_size=[8,1]}} {{
    %t = alloca : memref<{ty}x{n},local>
    %c0 = constant 0 : index
    %cn = constant {n} : index
    foreach (%i) = (%c0), (%cn) {{
        %x = load %a[%i] : {ty}
        store %x, %t[%i]
    }}
    foreach (%i) = (%c0), (%cn) {{
        %last = constant {n - 1} : index
        %r = sub %last, %i : index
        %x = load %t[%r] : {ty}
        store %x, %b[%i]
    }}
}}
"""
    a = special_values(ty, n)
    b = np.zeros_like(a)
    build(text).kernel("k")(a, b, num_groups=(1, 1, 1))
    np.testing.assert_array_equal(b[::-1].copy().view(np.uint8), a.view(np.uint8))
