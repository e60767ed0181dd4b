"""atomic_load / atomic_store / atomic_add / atomic_max / atomic_min on global and local memory,
with several work-groups updating the same elements, for every type with SPIR-V atomics."""

from __future__ import annotations

import numpy as np
import pytest

from tinytc_py.compiler import compile_to_spirv
from tinytc_py.errors import CompilationError, Status
from tinytc_py.ir.context import CompilerContext
from tinytc_py.runtime.opencl import DTYPES
from tinytc_py.target.core_info import CoreInfo, IntelGpuArchitecture
from tinytc_py.text.dialect import parse

from .support import build

S = 8
GROUPS = 6
NP = {t: d for t, d in DTYPES.items() if t not in ("i8", "i16", "bf16")}  # no atomics


def global_kernel(ty: str) -> str:
    """Work-item (g, p) adds v[p] to acc[0], and (reals only) max/mins v[p] + g into acc[1]/[2];
    it records the value atomic_add returned in old[p, g]."""
    minmax = (
        ""
        if ty.startswith("c")
        else f"""
        %g_t = cast %g : {ty}
        %w = add %x, %g_t : {ty}
        %m1 = atomic_max %w, %acc[%c1] : {ty}
        %m2 = atomic_min.device.relaxed %w, %acc[%c2] : {ty}"""
    )
    return f"""
func @k(%v: memref<{ty}x{S}>, %acc: memref<{ty}x3>, %old: memref<{ty}x{S}x{GROUPS}>)
    attributes {{subgroup_size={S}, work_group_size=[{S},1]}} {{
    %gid = group_id.x : index
    parallel {{
        %c0 = constant 0 : index
        %c1 = constant 1 : index
        %c2 = constant 2 : index
        %l = subgroup_local_id : i32
        %p = cast %l : index
        %g = cast %gid : i32
        %x = load %v[%p] : {ty}
        %o = atomic_add.work_group.relaxed %x, %acc[%c0] : {ty}
        store %o, %old[%p, %gid]{minmax}
    }}
}}
"""


@pytest.mark.parametrize("ty", [t for t in NP if t != "f16"])
def test_global_atomics_from_several_work_groups(ty):
    dt = NP[ty]
    rng = np.random.default_rng(3)
    if ty.startswith("c"):
        v = (rng.integers(-4, 5, S) + 1j * rng.integers(-4, 5, S)).astype(dt)
    else:
        v = rng.integers(1, 9, S).astype(dt)
    acc = np.zeros(3, dt)
    acc[1] = -100
    acc[2] = 100
    old = np.zeros((S, GROUPS), dt, order="F")
    build(global_kernel(ty)).kernel("k")(v, acc, old, num_groups=(GROUPS, 1, 1))
    assert acc[0] == GROUPS * v.sum()
    if not ty.startswith("c"):
        assert acc[1] == v.max() + GROUPS - 1
        assert acc[2] == v.min()
        # every returned old value is a distinct partial sum below the total
        olds = np.sort(old.ravel().astype(np.float64))
        assert len(np.unique(olds)) == S * GROUPS
        assert olds[0] == 0 and olds[-1] < acc[0]


def zero(ty: str) -> str:
    return "[0.0, 0.0]" if ty.startswith("c") else "0.0" if ty.startswith("f") else "0"


def local_kernel(ty: str) -> str:
    """A local accumulator: lane p atomically stores, adds and loads in SLM, then lane 0 writes
    the total out. (The CPU runtime has no f16 atomic add: its core info lacks the feature.)"""
    add = "" if ty == "f16" else f"        %o = atomic_add %x, %t[%c0] : {ty}"
    minmax = (
        ""
        if ty.startswith("c")
        else f"""
        %mx = atomic_max %x, %t[%c1] : {ty}
        %mn = atomic_min %x, %t[%c2] : {ty}"""
    )
    return f"""
func @k(%v: memref<{ty}x{S}>, %out: memref<{ty}x3>)
    attributes {{subgroup_size={S}, work_group_size=[{S},1]}} {{
    %t = alloca : memref<{ty}x3,local>
    parallel {{
        %c0 = constant 0 : index
        %c1 = constant 1 : index
        %c2 = constant 2 : index
        %l = subgroup_local_id : i32
        %p = cast %l : index
        %x = load %v[%p] : {ty}
        %first = load %v[%c0] : {ty}
        %zero = constant 0 : i32
        %is0 = equal %l, %zero : bool
        if %is0 {{
            atomic_store.work_group.release %first, %t[%c1]
            atomic_store %first, %t[%c2]
            %z = constant {zero(ty)} : {ty}
            atomic_store %z, %t[%c0]
        }}
    }}
    barrier.local
    parallel {{
        %c0 = constant 0 : index
        %c1 = constant 1 : index
        %c2 = constant 2 : index
        %l = subgroup_local_id : i32
        %p = cast %l : index
        %x = load %v[%p] : {ty}
{add}{minmax}
    }}
    barrier.local
    parallel {{
        %c0 = constant 0 : index
        %c1 = constant 1 : index
        %c2 = constant 2 : index
        %s = atomic_load.work_group.acquire %t[%c0] : {ty}
        %a = atomic_load %t[%c1] : {ty}
        %b = atomic_load %t[%c2] : {ty}
        store %s, %out[%c0]
        store %a, %out[%c1]
        store %b, %out[%c2]
    }}
}}
"""


@pytest.mark.parametrize("ty", list(NP))
def test_local_atomics(ty):
    dt = NP[ty]
    rng = np.random.default_rng(4)
    if ty.startswith("c"):
        v = (rng.integers(-4, 5, S) + 1j * rng.integers(-4, 5, S)).astype(dt)
    else:
        v = rng.integers(-9, 9, S).astype(dt)
    out = np.zeros(3, dt)
    build(local_kernel(ty)).kernel("k")(v, out, num_groups=(1, 1, 1))
    assert out[0] == (0 if ty == "f16" else v.sum())
    if not ty.startswith("c"):
        assert out[1] == v.max()
        assert out[2] == v.min()
    else:
        assert out[1] == v[0] and out[2] == v[0]


@pytest.mark.parametrize("ty", ["i8", "i16", "bf16"])
def test_no_atomics_on_small_types(ty):
    src = f"""func @k(%a: memref<{ty}x4>) {{
    %c0 = constant 0 : index
    %x = atomic_load %a[%c0] : {ty}
}}
"""
    ctx = CompilerContext()
    with pytest.raises(CompilationError) as e:
        compile_to_spirv(parse(src, ctx, "k.ir"))
    assert e.value.status is Status.spirv_unsupported_atomic_data_type
    assert (e.value.loc.begin.line, e.value.loc.begin.column) == (
        3,
        10,
    )  # the instruction starts at its mnemonic
    assert "no SPIR-V atomic" in e.value.rendered


def test_float_atomic_feature_missing_is_located():
    """PVC has no f16 atomic add (docs/design.md §B7.2): a located error, not invalid SPIR-V."""
    src = """func @k(%a: memref<f16x4>, %x: f16) {
    %c0 = constant 0 : index
    %y = atomic_add %x, %a[%c0] : f16
}
"""
    ctx = CompilerContext()
    info = CoreInfo.intel_from_arch(IntelGpuArchitecture.pvc)
    with pytest.raises(CompilationError) as e:
        compile_to_spirv(parse(src, ctx, "k.ir"), info)
    assert e.value.status is Status.spirv_required_feature_unavailable
    assert e.value.loc.begin.line == 3
    assert "atomic_float16_add_global" in e.value.rendered


def test_f16_global_load_store_min_max():
    """f16 atomic load/store go through the containing 32-bit word: neighbours are untouched."""
    src = f"""
func @k(%v: memref<f16x{S}>, %out: memref<f16x6>)
    attributes {{subgroup_size={S}, work_group_size=[{S},1]}} {{
    %gid = group_id.x : index
    parallel {{
        %c0 = constant 0 : index
        %c1 = constant 1 : index
        %c3 = constant 3 : index
        %c4 = constant 4 : index
        %l = subgroup_local_id : i32
        %p = cast %l : index
        %x = load %v[%p] : f16
        %y = atomic_max %x, %out[%c0] : f16
        %z = atomic_min %x, %out[%c1] : f16
        %a = atomic_load %v[%c3] : f16
        atomic_store %a, %out[%c3]
        %b = atomic_load %v[%c4] : f16
        atomic_store %b, %out[%c4]
    }}
}}
"""
    v = np.array([1.5, -2.0, 3.25, 0.5, -7.0, 100.0, 0.125, 2.0], np.float16)
    out = np.array([-9, 9, 11, 12, 13, 14], np.float16)
    build(src).kernel("k")(v, out, num_groups=(GROUPS, 1, 1))
    np.testing.assert_array_equal(out, np.array([100.0, -7.0, 11, 0.5, -7.0, 14], np.float16))


@pytest.mark.parametrize("ty", ["f32", "f64", "c32", "c64"])
def test_global_float_load_store(ty):
    """Global float atomic loads/stores are float atomics (only local doubles move their bits
    as integers): each work-item copies one element through atomic_load and atomic_store."""
    src = f"""
func @k(%v: memref<{ty}x{S}>, %out: memref<{ty}x{S}>)
    attributes {{subgroup_size={S}, work_group_size=[{S},1]}} {{
    parallel {{
        %l = subgroup_local_id : i32
        %p = cast %l : index
        %x = atomic_load.device.acquire %v[%p] : {ty}
        atomic_store.device.release %x, %out[%p]
    }}
}}
"""
    dt = NP[ty]
    rng = np.random.default_rng(5)
    v = rng.standard_normal(S).astype(dt)
    if ty.startswith("c"):
        v = v + 1j * rng.standard_normal(S).astype(dt)
    out = np.zeros(S, dt)
    build(src).kernel("k")(v, out, num_groups=(1, 1, 1))
    np.testing.assert_array_equal(out, v)
