"""The Python Level Zero runtime (tinytc_py.runtime.level_zero) through the real loader and our
CPU driver: kernels with memref and group arguments, both recipes, shared USM arrays, and the
error paths, each checked against NumPy. `test_same_tests_under_validation_layer` reruns this
file in a fresh process with the loader's validation layer on (the loader reads its
environment once, at the first zeInit)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tinytc_py.binary import Binary
from tinytc_py.compiler import compile_to_spirv
from tinytc_py.errors import Status, TinytcError
from tinytc_py.recipes import small_gemm_batched, tall_and_skinny
from tinytc_py.target.core_info import CoreInfo, SpirvFeature
from tinytc_py.text.dialect import parse

pytestmark = pytest.mark.timeout(300, method="thread")

VALIDATION = {"ZE_ENABLE_VALIDATION_LAYER": "1", "ZE_ENABLE_PARAMETER_VALIDATION": "1"}


@pytest.fixture(scope="module")
def ze(ze_driver):
    """The runtime module, initialised on our CPU driver."""
    os.environ.setdefault("ZE_ENABLE_ALT_DRIVERS", str(ze_driver))
    from tinytc_py.runtime import level_zero

    level_zero.init()
    return level_zero


GROUP_KERNEL = """
func @scale(%G: group<memref<f64x?x3>x?, offset: ?>, %alpha: f64, %out: memref<f64x?x?>) {
    %i = group_id.x : index
    %g = load %G[%i] : memref<f64x?x3>
    %n = size %g[0] : index
    %o = subview %out[0:%n, %i] : memref<f64x?>
    %one = constant 1.0 : f64
    %t = alloca : memref<f64x64, local>
    %zero = constant 0.0 : f64
    %ts = subview %t[0:%n] : memref<f64x?, local>
    sum.n %one, %g, %zero, %ts
    axpby.n %alpha, %ts, %zero, %o
}
"""


def test_device_and_core_info(ze):
    dev = ze.default_device()
    info = dev.core_info
    assert dev.name
    assert info.subgroup_sizes and min(info.subgroup_sizes) >= 4
    assert {SpirvFeature.float64, SpirvFeature.groups, SpirvFeature.subgroup_dispatch} <= (
        info.spirv_features
    )
    # every offered subgroup size can launch (sizes with a maximum of 0 are dropped)
    assert all(info.max_work_group_size(s) >= s for s in info.subgroup_sizes)


def test_kernel_with_memref_and_group_arguments(ze):
    rng = np.random.default_rng(3)
    rows = [5, 17, 40, 64]
    members = [np.asfortranarray(rng.standard_normal((n, 3))) for n in rows]
    out = np.full((64, len(rows)), -7.0, order="F")
    kernel = ze.program(GROUP_KERNEL).kernel("scale")
    kernel(ze.Group(members, offset=0), 2.5, out, num_groups=len(rows))
    for i, (n, m) in enumerate(zip(rows, members, strict=True)):
        np.testing.assert_allclose(out[:n, i], 2.5 * m.sum(axis=1), rtol=1e-13)
        assert (out[n:, i] == -7.0).all()


def test_group_offset_and_shared_arrays_in_place(ze):
    """A dynamic group offset (member data starts 2 elements after its pointer) and an output
    in shared USM, which the kernel writes in place."""
    ctx, dev = ze.default_context(), ze.default_device()
    members = [np.asfortranarray(np.arange(3.0 * n).reshape(n, 3)) for n in (4, 9)]
    out = ctx.shared_array((64, 2), np.float64, dev)
    ze.program(GROUP_KERNEL).kernel("scale")(ze.Group(members, offset=2), 1.0, out, num_groups=2)
    for i, m in enumerate(members):
        np.testing.assert_allclose(out[: m.shape[0], i], m.sum(axis=1))
    assert isinstance(out, ze.SharedArray) and out.usm is not None


def _shared(ctx, dev, arr):
    out = ctx.shared_array(arr.shape, arr.dtype, dev)
    out[...] = arr
    return out


def _submit_and_wait(ze, handler, ctx, dev) -> None:
    """Submits the recipe on a new immediate command list and waits on its event."""
    with (
        ze.CommandList.immediate(ctx, dev) as lst,
        ze.EventPool.create(ctx) as pool,
        pool.event() as done,
    ):
        handler.submit(lst, signal=done)
        done.wait()


def _address(arr) -> int:
    return arr.__array_interface__["data"][0]


@pytest.mark.parametrize(("ty", "beta"), [("f32", 0.0), ("f64", 0.5)])
def test_small_gemm_batched_recipe(ze, ty, beta):
    ctx, dev = ze.default_context(), ze.default_device()
    M, N, K, howmany = 13, 7, 9, 11
    dt = np.dtype(np.float32 if ty == "f32" else np.float64)
    rng = np.random.default_rng(5)
    A = _shared(ctx, dev, np.asfortranarray(rng.standard_normal((K, M, howmany)).astype(dt)))
    B = _shared(ctx, dev, np.asfortranarray(rng.standard_normal((K, N, howmany)).astype(dt)))
    C0 = np.asfortranarray(rng.standard_normal((M, N, howmany)).astype(dt))
    C = _shared(ctx, dev, C0)
    r = small_gemm_batched(dev.core_info, ty, "t", "n", M, N, K, K, K * M, K, K * N, M, M * N)
    handler = ze.RecipeHandler(r, ctx, dev)
    alpha = dt.type(1.5).tobytes()
    kernel, args, groups = r.small_gemm_batched_args(
        howmany, alpha, (1, _address(A)), (1, _address(B)), dt.type(beta).tobytes(),
        (1, _address(C)),
    )  # fmt: skip
    assert kernel == ("gemm_beta0" if beta == 0 else "gemm")
    handler.set(kernel, args, groups)
    _submit_and_wait(ze, handler, ctx, dev)
    want = 1.5 * np.einsum("kib,kjb->ijb", A.astype(np.float64), B) + beta * C0
    np.testing.assert_allclose(C, want, rtol=1e-4 if ty == "f32" else 1e-12, atol=1e-4)
    handler.close()


def test_tall_and_skinny_recipe(ze):
    ctx, dev = ze.default_context(), ze.default_device()
    M, N, K = 300, 5, 4
    rng = np.random.default_rng(6)
    A = _shared(ctx, dev, np.asfortranarray(rng.standard_normal((M, K))))
    B = _shared(ctx, dev, np.asfortranarray(rng.standard_normal((K, N))))
    C = _shared(ctx, dev, np.full((M, N), np.nan, order="F"))
    r = tall_and_skinny(dev.core_info, "f64", N=N, K=K, M_block_size=64)
    handler = ze.RecipeHandler(r, ctx, dev)
    one, zero = np.float64(1).tobytes(), np.float64(0).tobytes()
    kernel, args, groups = r.tall_and_skinny_args(
        M, one, (1, _address(A)), M, (1, _address(B)), K, zero, (1, _address(C)), M
    )
    assert groups == 5
    handler.set(kernel, args, groups)
    _submit_and_wait(ze, handler, ctx, dev)
    np.testing.assert_allclose(C, A @ B, rtol=1e-12)  # beta = 0: the NaNs were not read


def test_recipe_rejects_buffers_and_unset_arguments(ze):
    ctx, dev = ze.default_context(), ze.default_device()
    r = small_gemm_batched(dev.core_info, "f32", "n", "n", 4, 4, 4, 4, 16, 4, 16, 4, 16)
    handler = ze.RecipeHandler(r, ctx, dev)
    with pytest.raises(TinytcError) as err:
        handler.submit(ze.CommandList.immediate(ctx, dev))
    assert err.value.status == Status.invalid_kernel_arguments
    one = np.float32(1).tobytes()
    kernel, args, groups = r.small_gemm_batched_args(1, one, (0, 1), (1, 2), one, (1, 3))
    with pytest.raises(TinytcError) as err:
        handler.set(kernel, args, groups)
    assert err.value.status == Status.invalid_arguments
    assert "USM" in str(err.value)
    handler.close()


def test_module_build_failure_reports_the_build_log(ze):
    """f16 atomic add: emitted for a core info that claims it; the CPU runtime cannot link it."""
    src = """func @k(%a: memref<f16x4>, %x: f16) {
    %c0 = constant 0 : index
    %y = atomic_add %x, %a[%c0] : f16
}
"""
    info = CoreInfo.generic(2048, 1024, (8, 16))
    for f in ("float16", "groups", "subgroup_dispatch", "atomic_float16_add_global"):
        info.set_spirv_feature(SpirvFeature[f])
    binary = compile_to_spirv(parse(src), info)
    logs: list[str] = []
    with pytest.raises(ze.ZeError) as err:
        ze.Module.create(ze.default_context(), ze.default_device(), binary, logs.append)
    assert "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE" in str(err.value)
    assert err.value.status == Status.compute_runtime_error
    assert len(logs) == 1 and "Level Zero module failed" in logs[0]
    assert len(logs[0].splitlines()) > 1  # the log itself follows the headline


def test_invalid_binary_and_arguments(ze):
    junk = Binary(bytes(range(16)))
    with pytest.raises(ze.ZeError) as err:
        ze.Module.create(ze.default_context(), ze.default_device(), junk)
    assert "ZE_RESULT_" in str(err.value)
    kernel = ze.program(GROUP_KERNEL).kernel("scale")
    with pytest.raises(TypeError, match="kernel @scale is missing argument"):
        kernel(1.0, num_groups=1)
    with pytest.raises(TinytcError) as err:
        kernel(ze.Group([np.zeros((4, 2))]), 1.0, np.zeros((64, 1), order="F"), num_groups=1)
    assert err.value.status == Status.invalid_kernel_arguments
    assert "shape" in str(err.value)
    with pytest.raises(ze.ZeError) as err:
        ze.program(GROUP_KERNEL).module.kernel("no_such_kernel")
    assert "INVALID_KERNEL_NAME" in str(err.value)


@pytest.mark.skipif(
    os.environ.get("ZE_ENABLE_VALIDATION_LAYER") == "1", reason="already under validation"
)
def test_same_tests_under_validation_layer(ze_driver):
    env = {**os.environ, **VALIDATION, "ZE_ENABLE_ALT_DRIVERS": str(ze_driver)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__],
        capture_output=True, text=True, env=env, timeout=280,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert " passed" in result.stdout and "failed" not in result.stdout


def test_python_example_finds_the_cpu_driver(ze_driver):
    """examples/python/level_zero.py with no Level Zero variable set: the runtime selects our
    CPU driver by itself (TINYTC_ZE_CPU_DRIVER names the test's build of it)."""
    example = Path(__file__).resolve().parents[2] / "examples" / "python" / "level_zero.py"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZE_")}
    env["TINYTC_ZE_CPU_DRIVER"] = str(ze_driver)
    result = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, env=env, timeout=280
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == "OK"
    assert "small_gemm_batched: 50 x 16x16x16" in result.stdout


def test_borrowed_handles_are_not_destroyed(ze):
    """A wrapper of a host's handle (Context.borrow) forgets it on close; the owner's wrapper
    destroys it, and a destroyed context is reported by result name."""
    dev = ze.default_device()
    owned = ze.Context.create(dev.driver)
    with ze.Context.borrow(ze.ze_api.address(owned.handle)) as borrowed:
        assert borrowed.owned is False
    ptr = owned.alloc_shared(64, dev)  # still alive after the borrowed wrapper closed
    owned.free(ptr)
    owned.close()
    assert owned.handle is None
    with pytest.raises(ze.ZeError) as err:
        ze.ze_api.call("zeContextDestroy", ze.ze_api.ffi.NULL)
    assert "ZE_RESULT_ERROR_INVALID_NULL_HANDLE" in str(err.value)


def test_bounds_checked_kernel_reports_the_oversized_grid(ze):
    """Bounds-checked mode on Level Zero: the report record travels as the last argument in
    shared USM; the launch raises the located error after the in-bounds groups ran."""
    from tinytc_py.errors import OutOfBoundsError
    from tinytc_py.ir.context import CompilerContext
    from tinytc_py.ir.enums import OptFlag

    text = """func @first(%G: group<memref<f64x?x3>x?>, %out: memref<f64x?>) {
    %i = group_id.x : index
    %g = load %G[%i] : memref<f64x?x3>
    %c0 = constant 0 : index
    %c2 = constant 2 : index
    %x = load %g[%c0, %c2] : f64
    store %x, %out[%i]
}"""
    ctx = CompilerContext()
    ctx.set_optimization_flag(OptFlag.bounds_checks, 1)
    kernel = ze.program(parse(text, ctx, "group.ir")).kernel("first")
    members = [np.asfortranarray(np.arange(3.0 * n).reshape(n, 3)) for n in (4, 9)]
    out = np.full(3, -7.0)
    with pytest.raises(OutOfBoundsError) as info:
        kernel(members, out, num_groups=3)
    assert str(info.value).startswith(
        "kernel first: group.ir:3.10-38: load: index 2 of %G is out of bounds [0, 2) "
        "in work-group (2, 0, 0)"
    )
    np.testing.assert_array_equal(out, [2.0, 2.0, 0.0])  # the skipped loads give 0


def test_bounds_checked_collectives_after_a_bad_group_load(ze):
    """The member loaded out of bounds is invalid: the sum on it is skipped (the axpby from the
    unwritten local memory to column 2 is in bounds and runs), the first report (the group
    load) wins, and work-groups 0 and 1 are correct. (The report
    writes of a collective region get no barriers: with barriers inside the one reporting
    work-item's branch, the Level Zero CPU driver's 512-wide work-groups lost the record.)"""
    from tinytc_py.errors import OutOfBoundsError
    from tinytc_py.ir.context import CompilerContext
    from tinytc_py.ir.enums import OptFlag

    ctx = CompilerContext()
    ctx.set_optimization_flag(OptFlag.bounds_checks, 1)
    kernel = ze.program(parse(GROUP_KERNEL, ctx, "group.ir")).kernel("scale")
    members = [np.asfortranarray(np.arange(3.0 * n).reshape(n, 3)) for n in (4, 9)]
    out = np.full((64, 3), -7.0, order="F")
    with pytest.raises(OutOfBoundsError) as info:
        kernel(ze.Group(members, offset=0), 2.0, out, num_groups=3)
    assert str(info.value).startswith(
        "kernel scale: group.ir:4.10-38: load: index 2 of %G is out of bounds [0, 2) "
        "in work-group (2, 0, 0)"
    )
    for i, m in enumerate(members):
        np.testing.assert_allclose(out[: m.shape[0], i], 2.0 * m.sum(axis=1))
    assert (out[4:, 2] == -7.0).all()  # %n of the clamped member 0 is 4


NONTEMPORAL_GEMM = """\
func @gemm(%A: memref<f64x64x64x?>, %B: memref<f64x64x64x?>, %C: memref<f64x64x64x?>) {
    %gid = group_id.x : index
    %a = subview %A[0:64,0:64,%gid] : memref<f64x64x64>
    %b = subview %B[0:64,0:64,%gid] : memref<f64x64x64>
    %c = subview %C[0:64,0:64,%gid] : memref<f64x64x64>
    gemm.n.n 1.0, %a, %b, 0.0, %c
}
"""


def test_usm_memref_below_the_alignment_of_nontemporal_stores(ze):
    """A batched f64 gemm of beta 0 compiled for AVX2 stores C nontemporal: a Memref of a USM
    pointer 8 bytes past the 128-byte alignment is the invalid-argument error naming C (the
    stores would fault); at the aligned pointer the kernel computes what NumPy does."""
    from tinytc_py import options as lib_options

    ctx, dev = ze.default_context(), ze.default_device()
    info = lib_options.core_info_for_device("cpu-avx2")
    kernel = ze.program(NONTEMPORAL_GEMM, core_info=info).kernel("gemm")
    assert kernel.info.params[2].nontemporal_alignment == 128
    batch = 4
    rng = np.random.default_rng(9)
    a, b = (np.asfortranarray(rng.standard_normal((64, 64, batch))) for _ in range(2))
    out = ctx.shared_array((64 * 64 * batch + 16,), np.float64, dev)
    base = out.__array_interface__["data"][0]
    assert base % 128 == 0
    strides = (1, 64, 64 * 64)
    with pytest.raises(TinytcError, match=r"parameter %C: .* not aligned to the param") as e:
        kernel(a, b, ze.Memref(base + 8, (64, 64, batch), strides), num_groups=(batch, 1, 1))
    assert e.value.status is Status.invalid_kernel_arguments
    kernel(a, b, ze.Memref(base, (64, 64, batch), strides), num_groups=(batch, 1, 1))
    c = np.asarray(out)[: 64 * 64 * batch].reshape((64, 64, batch), order="F")
    np.testing.assert_allclose(c, np.einsum("ikb,kjb->ijb", a, b), rtol=1e-12, atol=1e-10)
