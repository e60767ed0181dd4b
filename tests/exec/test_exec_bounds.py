"""Bounds-checked mode (flags=["bounds-checks"], docs/bounds-checks.rst) executed on the CPU
OpenCL device: every checked instruction kind, out of bounds, raises OutOfBoundsError located
at the instruction with the index, the bound and the work-group, and leaves memory outside the
bounds untouched; in-bounds kernels give the results of default mode."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("pyopencl")

import tinytc_py  # noqa: E402
from tinytc_py.errors import OutOfBoundsError, TinytcError  # noqa: E402
from tinytc_py.runtime.device import default_device  # noqa: E402

try:
    default_device()
except RuntimeError:  # pragma: no cover - the CI installs the CPU runtime
    pytest.skip("no SPIR-V capable OpenCL device", allow_module_level=True)

_built: dict[tuple[str, bool], tinytc_py.Program] = {}


def program(name: str, text: str, checked: bool = True) -> tinytc_py.Program:
    """`text` parsed as file `name` and compiled (spirv-val runs on every module), once."""
    key = (text, checked)
    if key not in _built:
        prog = tinytc_py.parse(text, name=name)
        _built[key] = tinytc_py.compile(prog, flags=["bounds-checks"] if checked else [])
    return _built[key]


def violation(kernel, *args, num_groups) -> str:
    with pytest.raises(OutOfBoundsError) as info:
        kernel(*args, num_groups=num_groups)
    return str(info.value)


def expect(message: str, loc: str, what: str, group: str = "") -> None:
    """The message's first line is `kernel K: file:loc: what in work-group (group)`."""
    first = message.splitlines()[0]
    pattern = rf"kernel \w+: {re.escape(loc)}[\d.-]*: {re.escape(what)} in work-group \({group}"
    assert re.match(pattern, first), first


SCALAR = """\
func @load(%A: memref<f32x?>, %B: memref<f32x?>) {
  %g = group_id.x : index
  %x = load %A[%g] : f32
  store %x, %B[%g]
}
func @load2d(%A: memref<f32x2x?>, %B: memref<f32x?>) {
  %g = group_id.x : index
  %c1 = constant 1 : index
  %x = load %A[%c1, %g] : f32
  store %x, %B[%g]
}
func @atomics(%A: memref<i32x?>, %B: memref<i32x?>, %C: memref<i32x?>) {
  %g = group_id.x : index
  %one = constant 1 : i32
  %x = atomic_load.device %A[%g] : i32
  atomic_store.device %x, %B[%g]
  %old = atomic_add.device %one, %C[%g] : i32
}
func @group(%G: group<memref<f32x4>x?>, %B: memref<f32x?>) {
  %g = group_id.x : index
  %c3 = constant 3 : index
  %m = load %G[%g] : memref<f32x4>
  %x = load %m[%c3] : f32
  store %x, %B[%g]
}
func @view(%B: memref<f32x8>) {
  %g = group_id.x : index
  %W = subview %B[0:4] : memref<f32x4>
  %v = subview %W[%g:2] : memref<f32x2>
  %c1 = constant 1 : index
  %x = cast %g : f32
  store %x, %v[%c1]
}
"""


def test_load_out_of_bounds():
    k = program("scalar.ir", SCALAR).kernel("load")
    A = np.arange(1, 5, dtype=np.float32)
    B = np.full(8, -1, dtype=np.float32)
    msg = violation(k, A, B, num_groups=5)
    expect(msg, "scalar.ir:3.8", "load: index 4 in mode 0 of %A is out of bounds [0, 4)", "4, 0, 0")
    assert "%x = load %A[%g] : f32" in msg  # the source line follows
    np.testing.assert_array_equal(B[:4], A)  # the in-bounds work-groups' results
    assert B[4] == 0 and (B[5:] == -1).all()  # the skipped load gives 0


def test_load_mode_1_out_of_bounds():
    k = program("scalar.ir", SCALAR).kernel("load2d")
    A = np.arange(6, dtype=np.float32).reshape(2, 3, order="F")
    B = np.zeros(8, dtype=np.float32)
    msg = violation(k, A, B, num_groups=4)
    expect(msg, "scalar.ir:9.8", "load: index 3 in mode 1 of %A is out of bounds [0, 3)", "3, 0, 0")
    np.testing.assert_array_equal(B[:3], A[1])


def test_store_out_of_bounds_touches_no_memory():
    k = program("scalar.ir", SCALAR).kernel("load")
    A = np.arange(1, 9, dtype=np.float32)
    B = np.zeros(6, dtype=np.float32)
    msg = violation(k, A, B, num_groups=7)
    expect(
        msg, "scalar.ir:4.3", "store: index 6 in mode 0 of %B is out of bounds [0, 6)", "6, 0, 0"
    )
    np.testing.assert_array_equal(B, A[:6])


@pytest.mark.parametrize(
    ("sizes", "line", "what"),
    [
        ((4, 8, 8), "15.8", "atomic_load: index 4 in mode 0 of %A is out of bounds [0, 4)"),
        ((8, 4, 8), "16.3", "atomic_store: index 4 in mode 0 of %B is out of bounds [0, 4)"),
        ((8, 8, 4), "17.10", "atomic_add: index 4 in mode 0 of %C is out of bounds [0, 4)"),
    ],
)
def test_atomics_out_of_bounds(sizes, line, what):
    k = program("scalar.ir", SCALAR).kernel("atomics")
    A = np.arange(10, 10 + sizes[0], dtype=np.int32)
    B = np.zeros(sizes[1], dtype=np.int32)
    C = np.zeros(sizes[2], dtype=np.int32)
    expect(violation(k, A, B, C, num_groups=5), f"scalar.ir:{line}", what, "4, 0, 0")
    np.testing.assert_array_equal(B[:4], A[:4])
    assert C[0] > 0 and (C[:4] == C[0]).all()  # each work-item of the group added 1
    assert (C[5:] == 0).all()


def test_group_member_out_of_bounds():
    k = program("scalar.ir", SCALAR).kernel("group")
    members = [np.full(4, i + 1, dtype=np.float32) for i in range(3)]
    B = np.zeros(5, dtype=np.float32)
    msg = violation(k, members, B, num_groups=4)
    expect(msg, "scalar.ir:22.8", "load: index 3 of %G is out of bounds [0, 3)", "3, 0, 0")
    np.testing.assert_array_equal(B, [1, 2, 3, 0, 0])


def test_subview_out_of_bounds_touches_no_memory():
    k = program("scalar.ir", SCALAR).kernel("view")
    B = np.zeros(8, dtype=np.float32)
    msg = violation(k, B, num_groups=4)  # %v of group 3 is W[3:5], W has 4 elements
    expect(
        msg, "scalar.ir:29.8", "subview: index 4 in mode 0 of %W is out of bounds [0, 4)", "3, 0, 0"
    )
    # groups 0..2 store g to W[g + 1]; nothing reaches B[4:] through the bad view
    np.testing.assert_array_equal(B, [0, 0, 1, 2, 0, 0, 0, 0])


COOP = """\
func @copy(%A: memref<f32x?x8>, %B: memref<f32x?x8>) attributes {subgroup_size=8, work_group_size=[8,1]} {
  parallel {
    %g = group_id.x : index
    %c0 = constant 0 : index
    %c8 = constant 8 : index
    %r = mul %g, %c8 : index
    %m = cooperative_matrix_load.n %A[%r, %c0] : coopmatrix<f32x8x8,matrix_acc>
    cooperative_matrix_store.n %m, %B[%r, %c0]
  }
}
func @copy_checked(%A: memref<f32x?x8>, %B: memref<f32x?x8>) attributes {subgroup_size=8, work_group_size=[8,1]} {
  parallel {
    %g = group_id.x : index
    %c0 = constant 0 : index
    %c8 = constant 8 : index
    %r = mul %g, %c8 : index
    %m = cooperative_matrix_load.n.rows_checked %A[%r, %c0] : coopmatrix<f32x8x8,matrix_acc>
    %old = cooperative_matrix_atomic_add.n %m, %B[%r, %c0] : coopmatrix<f32x8x8,matrix_acc>
  }
}
"""


def _matrix(rows: int) -> np.ndarray:
    return np.asfortranarray(np.arange(rows * 8, dtype=np.float32).reshape(rows, 8) + 1)


def test_coopmatrix_load_out_of_bounds():
    k = program("coop.ir", COOP).kernel("copy")
    A, B = _matrix(16), np.zeros((24, 8), np.float32, order="F")
    msg = violation(k, A, B, num_groups=3)
    expect(
        msg,
        "coop.ir:7.10",
        "cooperative_matrix_load: index 23 in mode 0 of %A is out of bounds [0, 16)",
        "2, 0, 0",
    )
    np.testing.assert_array_equal(B[:16], A)
    assert (B[16:] == 0).all()  # the skipped load gives a zero matrix


def test_coopmatrix_store_out_of_bounds():
    k = program("coop.ir", COOP).kernel("copy")
    A, B = _matrix(24), np.zeros((16, 8), np.float32, order="F")
    msg = violation(k, A, B, num_groups=3)
    expect(
        msg,
        "coop.ir:8.5",
        "cooperative_matrix_store: index 23 in mode 0 of %B is out of bounds [0, 16)",
        "2, 0, 0",
    )
    np.testing.assert_array_equal(B, A[:16])


def test_coopmatrix_checked_mode_is_no_violation_but_atomic_is_checked():
    k = program("coop.ir", COOP).kernel("copy_checked")
    A, B = _matrix(20), np.zeros((24, 8), np.float32, order="F")
    k(A, B, num_groups=3)  # rows 20..23 of the last block read 0 (.rows_checked)
    np.testing.assert_array_equal(B[:20], A)
    assert (B[20:] == 0).all()
    B = np.zeros((20, 8), np.float32, order="F")
    msg = violation(k, A, B, num_groups=3)
    expect(
        msg,
        "coop.ir:18.12",
        "cooperative_matrix_atomic_add: index 23 in mode 0 of %B is out of bounds [0, 20)",
        "2, 0, 0",
    )
    np.testing.assert_array_equal(B[:16], A[:16])
    assert (B[16:] == 0).all()


LINALG = """\
func @gemm(%A: memref<f32x?x?>, %B: memref<f32x?x?>, %C: memref<f32x?x?>) {
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  gemm.n.n %one, %A, %B, %zero, %C
}
func @axpby(%A: memref<f32x?>, %B: memref<f32x?>) {
  %one = constant 1.0 : f32
  axpby.n %one, %A, %one, %B
}
func @expand(%A: memref<f32x?>, %n: index, %B: memref<f32x4x?>) {
  %one = constant 1.0 : f32
  %e = expand %A[0 -> 4 x %n] : memref<f32x4x?>
  axpby.n %one, %e, %one, %B
}
"""


def test_gemm_shape_mismatch():
    k = program("linalg.ir", LINALG).kernel("gemm")
    A = np.ones((4, 3), np.float32, order="F")
    B = np.ones((2, 5), np.float32, order="F")
    C = np.full((4, 5), 7, np.float32, order="F")
    msg = violation(k, A, B, C, num_groups=1)
    expect(
        msg,
        "linalg.ir:4.3",
        "gemm: size 2 of mode 0 of %B does not match size 3 of mode 1 of %A",
        "0, 0, 0",
    )
    assert (C == 7).all()


def test_axpby_and_expand_shape_mismatch():
    prog = program("linalg.ir", LINALG)
    A, B = np.ones(4, np.float32), np.ones(5, np.float32)
    msg = violation(prog.kernel("axpby"), A, B, num_groups=1)
    expect(
        msg, "linalg.ir:8.3", "axpby: size 5 of mode 0 of %B does not match size 4 of mode 0 of %A"
    )
    assert (B == 1).all()
    A, B = np.ones(8, np.float32), np.ones((4, 3), np.float32, order="F")
    msg = violation(prog.kernel("expand"), A, 3, B, num_groups=1)
    expect(
        msg,
        "linalg.ir:12.8",
        "expand: the expand shape's product 12 differs from the size 8 of mode 0 of %A",
    )
    assert (B == 1).all()  # the axpby on the invalid view did not run
    prog.kernel("expand")(A, 2, B[:, :2].copy(order="F"), num_groups=1)  # 4 x 2 = 8 is fine


BATCHED = """\
func @bgemm(%A: memref<f32x8x8x?>, %B: memref<f32x8x8x?>, %C: memref<f32x8x8x?>) {
  %g = group_id.x : index
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  %a = subview %A[0:8, 0:8, %g] : memref<f32x8x8>
  %b = subview %B[0:8, 0:8, %g] : memref<f32x8x8>
  %c = subview %C[0:8, 0:8, %g] : memref<f32x8x8>
  gemm.n.n %one, %a, %b, %zero, %c
}
func @axpy(%alpha: f32, %x: memref<f32x?>, %y: memref<f32x?>) {
  %c0 = constant 0 : index
  %n = size %x[0] : index
  foreach (%i) = (%c0), (%n) {
    %xi = load %x[%i] : f32
    %yi = load %y[%i] : f32
    %ax = mul %alpha, %xi : f32
    %r = add %ax, %yi : f32
    store %r, %y[%i]
  }
}
"""


def _batch(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.asfortranarray(rng.standard_normal((8, 8, n)).astype(np.float32))


def test_in_bounds_kernels_give_the_default_mode_results():
    A, B = _batch(3, 1), _batch(3, 2)
    x = np.arange(100, dtype=np.float32)
    outs = []
    for checked in (False, True):
        prog = program("batched.ir", BATCHED, checked)
        C = np.zeros((8, 8, 3), np.float32, order="F")
        prog.kernel("bgemm")(A, B, C, num_groups=3)
        y = np.ones(100, dtype=np.float32)
        prog.kernel("axpy")(np.float32(2), x, y, num_groups=1)
        outs.append((C, y))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
    np.testing.assert_allclose(outs[1][0], np.einsum("ikb,kjb->ijb", A, B), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(outs[1][1], 2 * x + 1)


def test_oversized_grid_raises_and_keeps_in_bounds_results():
    prog = program("batched.ir", BATCHED)
    A, B = _batch(3, 3), _batch(3, 4)
    C = np.zeros((8, 8, 3), np.float32, order="F")
    msg = violation(prog.kernel("bgemm"), A, B, C, num_groups=5)
    pattern = r"kernel bgemm: batched.ir:5.8-49: subview: index ([34]) in mode 2 of %A is out of"
    pattern += r" bounds \[0, 3\) in work-group \(\1, 0, 0\)"  # group 3 or 4, whichever was first
    assert re.match(pattern, msg), msg
    np.testing.assert_allclose(C, np.einsum("ikb,kjb->ijb", A, B), rtol=1e-5, atol=1e-5)


def test_argument_count_excludes_the_report():
    k = program("batched.ir", BATCHED).kernel("axpy")
    with pytest.raises(TinytcError, match="axpy takes 3 arguments, got 2"):
        k(np.float32(1), np.ones(4, np.float32), num_groups=1)


def test_recipes_in_bounds_checked_mode():
    rng = np.random.default_rng(5)
    A = np.asfortranarray(rng.standard_normal((4, 3, 6)))
    B = np.asfortranarray(rng.standard_normal((5, 3, 6)))  # transposed
    C = np.zeros((4, 5, 6), order="F")
    tinytc_py.small_gemm_batched(1.0, A, B, 0.0, C, transB="t", flags=("bounds-checks",))
    np.testing.assert_allclose(C, np.einsum("ikb,jkb->ijb", A, B), rtol=1e-12)
    A = np.asfortranarray(rng.standard_normal((301, 4)))  # a partial last block
    B = np.asfortranarray(rng.standard_normal((4, 2)))
    C = np.ones((301, 2), order="F")
    tinytc_py.tall_and_skinny(2.0, A, B, 1.0, C, flags=("bounds-checks",))
    np.testing.assert_allclose(C, 2 * A @ B + 1, rtol=1e-12)
    # the flag reached the recipe's compilation: its kernels take the report record
    from tinytc_py.recipes.arrays import _tall_and_skinny_program

    device = tinytc_py.devices()[0]
    built, _ = _tall_and_skinny_program(device, ("bounds-checks",), "f64", 2, 4)
    assert built.binary.kernel("gemm").bounds_checks is not None


SHAPES = """\
func @gemm_tt(%A: memref<f64x?x?>, %B: memref<f64x?x?>, %C: memref<f64x?x?>) {
  %one = constant 1.0 : f64
  %zero = constant 0.0 : f64
  gemm.t.t %one, %A, %B, %zero, %C
}
func @gemv_t(%A: memref<f64x?x?>, %b: memref<f64x?>, %c: memref<f64x?>) {
  %one = constant 1.0 : f64
  %zero = constant 0.0 : f64
  gemv.t %one, %A, %b, %zero, %c
}
func @ger(%a: memref<f64x?>, %b: memref<f64x?>, %C: memref<f64x?x?>) {
  %one = constant 1.0 : f64
  %zero = constant 0.0 : f64
  ger %one, %a, %b, %zero, %C
}
func @hadamard(%a: memref<f64x?x?>, %b: memref<f64x?x?>, %c: memref<f64x?x?>) {
  %one = constant 1.0 : f64
  %zero = constant 0.0 : f64
  hadamard %one, %a, %b, %zero, %c
}
func @sum_t(%A: memref<f64x?x?>, %b: memref<f64x?>) {
  %one = constant 1.0 : f64
  %zero = constant 0.0 : f64
  sum.t %one, %A, %zero, %b
}
func @cumsum(%A: memref<f64x?x?>, %B: memref<f64x?x?>) {
  %one = constant 1.0 : f64
  %zero = constant 0.0 : f64
  cumsum %one, %A, 1, %zero, %B
}
func @axpby_t(%A: memref<f64x?x?>, %B: memref<f64x?x?>) {
  %one = constant 1.0 : f64
  %zero = constant 0.0 : f64
  axpby.t %one, %A, %zero, %B
}
"""


def test_linalg_with_agreeing_dynamic_shapes_runs_unreported():
    """Each shape relation the checks derive (transposes included) holds for valid operands:
    non-square dynamic shapes run without a report and give NumPy's results."""
    prog = program("shapes.ir", SHAPES)
    rng = np.random.default_rng(11)

    def mat(*shape):
        return np.asfortranarray(rng.standard_normal(shape))

    A, B, C = mat(5, 3), mat(7, 5), np.zeros((3, 7), order="F")  # op(A) 3x5, op(B) 5x7
    prog.kernel("gemm_tt")(A, B, C, num_groups=1)
    np.testing.assert_allclose(C, A.T @ B.T, rtol=1e-12)
    b, c = mat(5), np.zeros(3)
    prog.kernel("gemv_t")(A, b, c, num_groups=1)
    np.testing.assert_allclose(c, A.T @ b, rtol=1e-12)
    a, b, C = mat(4), mat(6), np.zeros((4, 6), order="F")
    prog.kernel("ger")(a, b, C, num_groups=1)
    np.testing.assert_allclose(C, np.outer(a, b), rtol=1e-12)
    a, b, c = mat(4, 6), mat(4, 6), np.zeros((4, 6), order="F")
    prog.kernel("hadamard")(a, b, c, num_groups=1)
    np.testing.assert_allclose(c, a * b, rtol=1e-12)
    b = np.zeros(3)
    prog.kernel("sum_t")(A, b, num_groups=1)
    np.testing.assert_allclose(b, A.sum(axis=0), rtol=1e-12)
    Bc = np.zeros((5, 3), order="F")
    prog.kernel("cumsum")(A, Bc, num_groups=1)
    np.testing.assert_allclose(Bc, np.cumsum(A, axis=1), rtol=1e-12)
    Bt = np.zeros((3, 5), order="F")
    prog.kernel("axpby_t")(A, Bt, num_groups=1)
    np.testing.assert_allclose(Bt, A.T, rtol=1e-12)
    msg = violation(prog.kernel("gemv_t"), A, mat(3), np.zeros(3), num_groups=1)
    expect(
        msg, "shapes.ir:9.3", "gemv: size 3 of mode 0 of %b does not match size 5 of mode 0 of %A"
    )
