"""The grid of a launch (`num_groups`): required when the kernel reads group_id or num_groups,
optional (one work-group) when it reads neither, type-checked, refused along axes the kernel
does not read and beyond the extents it indexes with group_id, so that a launch is never
silently half-done and an oversized grid does not crash the interpreter. Arguments by position
or by name. All kernels run on the CPU OpenCL device and are compared with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from tinytc_py import Status, TinytcError

from .launch_kernels import AXPY2, GEMM, GROUP_ADD, GUARDED, kernel, runtime_device


def _gemm_args(batch: int):
    rng = np.random.default_rng(1)
    A = np.asfortranarray(rng.standard_normal((8, 8, batch)).astype(np.float32))
    B = np.asfortranarray(rng.standard_normal((8, 8, batch)).astype(np.float32))
    C = np.zeros((8, 8, batch), np.float32, order="F")
    return A, B, C


def _want(A, B):
    return np.einsum("ikb,kjb->ijb", A, B)


def test_the_metadata_says_what_the_kernel_reads_and_writes():
    info = kernel(GEMM, "gemm").info
    assert [(p.name, p.type, p.written) for p in info.params] == [
        ("A", "memref<f32x8x8x?>", False),
        ("B", "memref<f32x8x8x?>", False),
        ("C", "memref<f32x8x8x?>", True),
    ]
    assert info.grid_axes == (True, False, False)
    assert info.grid_bounds == ((0, 0, 2), (0, 1, 2), (0, 2, 2))
    assert kernel(AXPY2, "axpy2").info.grid_axes == (False, False, False)
    assert kernel(GUARDED, "guarded").info.grid_bounds == ()  # indexed under an `if`
    group = kernel(GROUP_ADD, "group_add").info
    assert group.grid_bounds == ((0, 0, -1), (0, 1, 0))
    assert [p.written for p in group.params] == [True, False]


def test_the_grid_is_required_when_the_kernel_reads_group_id():
    A, B, C = _gemm_args(4)
    with pytest.raises(
        TypeError, match=r"kernel @gemm needs num_groups= .*group_id/num_groups of x"
    ):
        kernel(GEMM, "gemm")(A, B, C)
    assert not C.any()  # nothing ran
    kernel(GEMM, "gemm")(A, B, C, num_groups=4)
    np.testing.assert_allclose(C, _want(A, B), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ("4", "num_groups must be an int or a sequence of 1 to 3 ints, got '4'"),
        (4.0, "num_groups must be an int or a sequence of 1 to 3 ints, got 4.0"),
        (True, "num_groups must be an int or a sequence of 1 to 3 ints, got True"),
        ((4, 1, 1, 1), r"num_groups has 1 to 3 entries, got \(4, 1, 1, 1\)"),
        ((), r"num_groups has 1 to 3 entries, got \(\)"),
    ],
)
def test_a_mistyped_grid_is_a_type_error(grid, message):
    A, B, C = _gemm_args(4)
    with pytest.raises(TypeError, match="kernel @gemm: " + message):
        kernel(GEMM, "gemm")(A, B, C, num_groups=grid)


def test_a_misspelt_grid_is_a_type_error():
    A, B, C = _gemm_args(4)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'num_group' \(it takes A, B, C, num_groups, queue\)"):  # fmt: skip
        kernel(GEMM, "gemm")(A, B, C, num_group=4)


def test_numpy_integers_and_sequences_are_grids():
    A, B, C = _gemm_args(3)
    kernel(GEMM, "gemm")(A, B, C, num_groups=np.array([3, 1])[:1])
    np.testing.assert_allclose(C, _want(A, B), rtol=1e-5, atol=1e-5)
    C[...] = 0
    kernel(GEMM, "gemm")(A, B, C, num_groups=(np.int64(3), 1, 1))
    np.testing.assert_allclose(C, _want(A, B), rtol=1e-5, atol=1e-5)


def test_a_negative_grid_is_refused():
    A, B, C = _gemm_args(4)
    with pytest.raises(TinytcError, match=r"kernel @gemm: num_groups \(4, -1\) is negative") as err:
        kernel(GEMM, "gemm")(A, B, C, num_groups=(4, -1))
    assert err.value.status == Status.invalid_kernel_arguments


@pytest.mark.parametrize(
    ("runtime", "num_groups"),
    [("opencl", 2**70), ("opencl", (2**64,)), ("level_zero", 2**32), ("level_zero", 2**70)],
)
def test_a_grid_beyond_the_runtimes_counts_is_refused(runtime, num_groups):
    """A count beyond 2**32 - 1 (Level Zero's uint32 group count) is refused before the
    runtime sees it (OpenCL raised a raw std::bad_cast, Level Zero an OverflowError)."""
    out = np.zeros(4, np.float32)
    guarded = kernel(GUARDED, "guarded", runtime_device(runtime))
    with pytest.raises(TinytcError) as err:
        guarded(out, num_groups=num_groups)
    assert str(err.value) == (
        f"kernel @guarded: num_groups {num_groups!r} exceeds 4294967295 (2**32 - 1) work-groups"
        " along an axis"
    )
    assert err.value.status == Status.invalid_kernel_arguments
    guarded(out, num_groups=4)
    np.testing.assert_array_equal(out, [1, 2, 3, 4])


def test_a_kernel_without_grid_runs_in_one_work_group_by_default():
    axpy2 = kernel(AXPY2, "axpy2")
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.ones((3, 4), np.float32)
    axpy2(2.0, x, y)  # no num_groups needed
    np.testing.assert_array_equal(y, 2 * x + 1)


def test_an_oversized_grid_is_refused_before_the_launch():
    """num_groups=1000 for a batch of 4 used to segfault the CPU runtime: work-groups 4..999
    read and wrote beyond the staged arrays."""
    A, B, C = _gemm_args(4)
    with pytest.raises(TinytcError) as err:
        kernel(GEMM, "gemm")(A, B, C, num_groups=1000)
    assert str(err.value) == (
        "kernel @gemm: num_groups.x = 1000 exceeds the 4 entries in mode 2 of %A"
        " (memref<f32x8x8x?>), which the kernel indexes with group_id.x"
    )
    assert not C.any()
    kernel(GEMM, "gemm")(A, B, C, num_groups=2)  # fewer is fine: the first two entries
    np.testing.assert_allclose(C[:, :, :2], _want(A, B)[:, :, :2], rtol=1e-5, atol=1e-5)
    assert not C[:, :, 2:].any()


def test_a_group_bounds_the_grid_by_its_member_count():
    members = [np.zeros(4, np.float32) for _ in range(3)]
    a = np.arange(3, dtype=np.float32) + 1
    with pytest.raises(TinytcError, match=r"num_groups.x = 4 exceeds the 3 members of %G"):
        kernel(GROUP_ADD, "group_add")(members, np.arange(4, dtype=np.float32), num_groups=4)
    kernel(GROUP_ADD, "group_add")(members, a, num_groups=3)
    for k, m in enumerate(members):
        np.testing.assert_array_equal(m, np.full(4, k + 1, np.float32))


def test_a_guarded_kernel_takes_a_larger_grid():
    out = np.zeros(5, np.float32)
    kernel(GUARDED, "guarded")(out, num_groups=64)
    np.testing.assert_array_equal(out, np.arange(5) + 1)


def test_a_zero_grid_runs_nothing():
    A, B, C = _gemm_args(4)
    C[...] = 7
    kernel(GEMM, "gemm")(A, B, C, num_groups=0)
    assert (C == 7).all()


def test_arguments_by_position_or_by_name():
    A, B, C = _gemm_args(4)
    gemm = kernel(GEMM, "gemm")
    gemm(C=C, B=B, A=A, num_groups=4)
    np.testing.assert_allclose(C, _want(A, B), rtol=1e-5, atol=1e-5)
    C[...] = 0
    gemm(A, B, C=C, num_groups=4)
    np.testing.assert_allclose(C, _want(A, B), rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="kernel @gemm got multiple values for argument 'A'"):
        gemm(A, B, C, A=A, num_groups=4)
    with pytest.raises(TypeError, match="kernel @gemm is missing argument.s. C"):
        gemm(A, B, num_groups=4)
    with pytest.raises(TypeError, match=r"kernel @gemm takes 3 arguments \(A, B, C\), got 4"):
        gemm(A, B, C, C, num_groups=4)
