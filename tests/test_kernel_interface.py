"""The launch facts the compiler records per kernel (analysis/kernel_interface.py): which memref
and group parameters it writes (through views too, atomics and BLAS results included, local
scratch memory excluded), which grid axes it reads, and which parameter modes a group_id
indexes unconditionally. Compiled for a target, no device needed."""

from __future__ import annotations

import tinytc_py

SOURCE = """
func @k(%a: memref<f32x8x?>, %b: memref<f32x8x?>, %c: memref<f32x?>, %d: memref<f32x?>,
        %e: memref<i32x1>, %g: group<memref<f32x8>x?>, %h: group<memref<f32x8>x4>, %s: f32) {
    %j = group_id.y : index
    %n = num_groups.z : index
    %c0 = constant 0 : index
    %av = subview %a[0:8, %j] : memref<f32x8>
    %bv = subview %b[0:8, %j] : memref<f32x8>
    %b2 = expand %bv[0 -> 2 x 4] : memref<f32x2x4>
    %b3 = fuse %b2[0, 1] : memref<f32x8>
    axpby.n %s, %av, %s, %b3
    %t = alloca : memref<f32x8, local>
    store %s, %t[%c0]
    %x = load %c[%j] : f32
    %one = constant 1 : i32
    %old = atomic_add %one, %e[%c0] : i32
    %gm = load %g[%j] : memref<f32x8>
    store %x, %gm[%c0]
    %hm = load %h[%c0] : memref<f32x8>
    %y = load %hm[%c0] : f32
    %inside = less_than %j, %n : bool
    if %inside {
        store %y, %d[%j]
    }
}
"""


def test_written_parameters_grid_axes_and_bounds():
    info = tinytc_py.compile(SOURCE, target="pvc").binary.kernel("k")
    written = {p.name: p.written for p in info.params if p.kind != "scalar"}
    assert written == {
        "a": False,
        "b": True,
        "c": False,
        "d": True,
        "e": True,
        "g": True,
        "h": False,
    }
    assert info.grid_axes == (False, True, True)
    # %a, %b mode 1 (subview index), %c mode 0 (load), %g's member count; not %d (under `if`)
    assert info.grid_bounds == ((1, 0, 1), (1, 1, 1), (1, 2, 0), (1, 5, -1))
    assert [p.alignment for p in info.params] == [128] * 7 + [0]
    assert [p.type for p in info.params][5] == "group<memref<f32x8>x?>"
