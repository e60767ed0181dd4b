"""Kernels the launch tests run (subgroup size pinned to 8, so the tests do not depend on the
subgroup sizes the host CPU's ISA gives the CPU device), built once per device."""

from __future__ import annotations

import functools

import pytest

import tinytc_py
from available_devices import devices

ATTRS = "attributes {subgroup_size=8, work_group_size=[8,1]}"

# Batched GEMM, one work-group per batch entry: reads the grid's x axis, and group_id.x
# indexes mode 2 of A, B and C directly.
GEMM = f"""
func @gemm(%A: memref<f32x8x8x?>, %B: memref<f32x8x8x?>, %C: memref<f32x8x8x?>) {ATTRS} {{
    %k = group_id.x : index
    %a = subview %A[0:8, 0:8, %k] : memref<f32x8x8>
    %b = subview %B[0:8, 0:8, %k] : memref<f32x8x8>
    %c = subview %C[0:8, 0:8, %k] : memref<f32x8x8>
    gemm.n.n 1.0, %a, %b, 0.0, %c
}}
"""

# y = a * x + y over a matrix of any size and strides, in one work-group (no grid).
AXPY2 = f"""
func @axpy2(%a: f32, %x: memref<f32x?x?,strided<?,?>>, %y: memref<f32x?x?,strided<?,?>>) {ATTRS} {{
    %m = size %x[0] : index
    %n = size %x[1] : index
    %c0 = constant 0 : index
    foreach (%i, %j) = (%c0, %c0), (%m, %n) {{
        %xi = load %x[%i, %j] : f32
        %yi = load %y[%i, %j] : f32
        %ax = mul %a, %xi : f32
        %r = add %ax, %yi : f32
        store %r, %y[%i, %j]
    }}
}}
"""

# out[k] = k + 1 for every work-group k < size(out), guarded: any grid is fine.
GUARDED = f"""
func @guarded(%out: memref<f32x?>) {ATTRS} {{
    %k = group_id.x : index
    %n = size %out[0] : index
    %inside = less_than %k, %n : bool
    if %inside {{
        %v = cast %k : f32
        %one = constant 1.0 : f32
        %w = add %v, %one : f32
        store %w, %out[%k]
    }}
}}
"""

# Every member k of the group gets a[k] added to each entry; group_id.x indexes the group.
GROUP_ADD = f"""
func @group_add(%G: group<memref<f32x4>x?>, %a: memref<f32x?>) {ATTRS} {{
    %k = group_id.x : index
    %g = load %G[%k] : memref<f32x4>
    %ak = load %a[%k] : f32
    %c0 = constant 0 : index
    %c4 = constant 4 : index
    foreach (%i) = (%c0), (%c4) {{
        %v = load %g[%i] : f32
        %w = add %v, %ak : f32
        store %w, %g[%i]
    }}
}}
"""


def opencl_device():
    found = [d for d in devices() if d.runtime == "opencl"]
    if not found:
        pytest.skip("no OpenCL device")
    return found[0]


def runtime_device(runtime: str):
    """The first device of `runtime` ("opencl" or "level_zero"), or skip."""
    found = [d for d in devices() if d.runtime == runtime]
    if not found:
        pytest.skip(f"no {runtime} device")
    return found[0]


@functools.cache
def kernel(text: str, name: str, device=None):
    """The kernel `name` of `text` on `device` (default: the first OpenCL device)."""
    return tinytc_py.compile(text, device=device or opencl_device()).kernel(name)
