"""The global-data extension (docs/extensions.md): constant tables of every number type read
by kernels, one table shared by two kernels of a program, and a table as a GEMM operand,
against NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

from tinytc_py.text.printer import format_constant

from .support import NP_DTYPE, NUMBER_TYPES, bf16_bits, build

M, N = 4, 3


def table(ty: str) -> tuple[list, np.ndarray]:
    """Initializer values (column-major) and the array the kernel must produce."""
    k = range(M * N)
    if ty.startswith("c"):
        vals = [(0.5 * i - 2, 3.0 - i) for i in k]
        arr = np.array([complex(*v) for v in vals], NP_DTYPE[ty])
    elif ty in ("bf16", "f16", "f32", "f64"):
        vals = [0.25 * i - 1.5 for i in k]
        arr = bf16_bits(np.float32(vals)) if ty == "bf16" else np.array(vals, NP_DTYPE[ty])
    else:
        info = np.iinfo(NP_DTYPE[ty])
        # the language's integer constants start at -2^63 + 1
        vals = [max(int(info.min), -(2**63) + 1), int(info.max)] + [7 * i - 30 for i in k[2:]]
        arr = np.array(vals, NP_DTYPE[ty])
    return vals, arr.reshape((M, N), order="F")


def program_text(ty: str, vals: list) -> str:
    init = ", ".join(format_constant(v) for v in vals)
    mt = f"memref<{ty}x{M}x{N}>"
    copy = f"""
    %t = global_ref @tab : {mt}
    parallel {{
        %l = subgroup_local_id : i32
        %li = cast %l : index
        %n = constant {M * N} : index
        %inb = less_than %li, %n : bool
        if %inb {{
            %m = constant {M} : index
            %r = rem %li, %m : index
            %c = div %li, %m : index
            %v = load %t[%r, %c] : {ty}
            store %v, %o[%r, %c]
        }}
    }}"""
    attrs = "attributes {subgroup_size=16, work_group_size=[16,1]}"
    return (
        f"global @tab : {mt} = dense<[{init}]>\n"
        f"func @first(%o: {mt}) {attrs} {{{copy}\n}}\n"
        f"func @second(%o: {mt}) {attrs} {{{copy}\n}}\n"
    )


@pytest.mark.parametrize("ty", NUMBER_TYPES)
def test_global_table(ty):
    vals, want = table(ty)
    prog = build(program_text(ty, vals))
    for kernel in ("first", "second"):
        out = np.zeros((M, N), want.dtype, order="F")
        prog.kernel(kernel)(out, num_groups=(1, 1, 1))
        np.testing.assert_array_equal(out, want, err_msg=kernel)


GEMM = """
global @w : memref<f32x8x4> = dense<[{init}]>
func @g(%B: memref<f32x4x?>, %C: memref<f32x8x?>) {{
    %W = global_ref @w : memref<f32x8x4>
    %one = constant 1.0 : f32
    %zero = constant 0.0 : f32
    gemm.n.n %one, %W, %B, %zero, %C
}}
"""


def test_global_as_gemm_operand():
    w = (np.arange(32, dtype=np.float32) - 10) / 4
    text = GEMM.format(init=", ".join(format_constant(float(v)) for v in w))
    W = w.reshape((8, 4), order="F")
    B = np.asfortranarray(np.arange(4 * 5, dtype=np.float32).reshape(4, 5) / 8)
    C = np.zeros((8, 5), np.float32, order="F")
    build(text).kernel("g")(B, C, num_groups=(1, 1, 1))
    np.testing.assert_allclose(C, W @ B, rtol=1e-6)


def weights(shape: tuple[int, ...]) -> tuple[str, np.ndarray]:
    """A dense initializer for an f32 table of `shape` and the table (column-major)."""
    w = (np.arange(int(np.prod(shape)), dtype=np.float32) - 7) / 4
    return ", ".join(format_constant(float(v)) for v in w), w.reshape(shape, order="F")


def test_global_ref_inside_foreach():
    """lower-foreach rebuilds the body, global_ref included, with a PassBuilder; the global is
    looked up in the real program by the SPIR-V conversion (before PassBuilder the lowering
    checked it against an empty program and failed with "no global named @w")."""
    init, w = weights((37,))
    text = f"""global @w : memref<f32x37> = dense<[{init}]>
func @k(%a: memref<f32x37>, %b: memref<f32x37>)
    attributes {{subgroup_size=16, work_group_size=[32,1]}} {{
    %c0 = constant 0 : index
    %n = constant 37 : index
    foreach (%i) = (%c0), (%n) {{
        %W = global_ref @w : memref<f32x37>
        %x = load %W[%i] : f32
        %y = load %a[%i] : f32
        %z = add %x, %y : f32
        store %z, %b[%i]
    }}
}}
"""
    a = np.arange(37, dtype=np.float32) * 3
    b = np.zeros(37, np.float32)
    build(text).kernel("k")(a, b, num_groups=(1, 1, 1))
    np.testing.assert_array_equal(b, w + a)


def test_global_ref_inside_cooperative_matrix_apply():
    """The same for lower-coopmatrix, which clones an apply body per component."""
    M, N = 16, 8
    init, w = weights((M, N))
    mt = f"coopmatrix<f32x{M}x{N},matrix_acc>"
    text = f"""global @w : memref<f32x{M}x{N}> = dense<[{init}]>
func @k(%A: memref<f32x{M}x{N}>, %B: memref<f32x{M}x{N}>)
    attributes {{subgroup_size=16, work_group_size=[16,1]}} {{
    parallel {{
        %c0 = constant 0 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : {mt}
        %r = cooperative_matrix_apply (%i,%j,%v)=%a -> {mt} {{
            %W = global_ref @w : memref<f32x{M}x{N}>
            %ii = cast %i : index
            %jj = cast %j : index
            %x = load %W[%ii, %jj] : f32
            %y = mul %x, %v : f32
            yield (%y)
        }}
        cooperative_matrix_store %r, %B[%c0,%c0]
    }}
}}
"""
    A = np.asfortranarray(np.arange(M * N, dtype=np.float32).reshape(M, N) - 50)
    B = np.zeros((M, N), np.float32, order="F")
    build(text).kernel("k")(A, B, num_groups=(1, 1, 1))
    np.testing.assert_array_equal(B, w * A)
