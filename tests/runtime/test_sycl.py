"""SYCL queues from Python (tinytc_py.runtime.sycl, dpctl) on the CPU OpenCL device: kernels and
both recipes run on a `dpctl.SyclQueue` with dpnp / dpnp.tensor arrays, which the kernels write
in place (the pointer passed is the array's, the result is read from the array itself);
NumPy arguments are staged; the error paths name the argument. Results are compared with
NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import tinytc_py
from tinytc_py.errors import Status, TinytcError

# Imported first: it points the ICD loader at the CPU runtime before dpctl lists devices.
sycl = pytest.importorskip("tinytc_py.runtime.sycl")
dpctl = pytest.importorskip("dpctl")
dpnp = pytest.importorskip("dpnp")
dpt = pytest.importorskip("dpnp.tensor")

pytestmark = pytest.mark.timeout(300, method="thread")

AXPY = """
func @axpy(%alpha: f32, %x: memref<f32x?>, %y: memref<f32x?, strided<?>>) {
    %n = size %x[0] : index
    %c0 = constant 0 : index
    foreach (%i) = (%c0), (%n) {
        %xi = load %x[%i] : f32
        %yi = load %y[%i] : f32
        %a = mul %alpha, %xi : f32
        %r = add %a, %yi : f32
        store %r, %y[%i]
    }
}
"""

# One scalar of each size the runtime passes differently (1, 4, 8 and 16 bytes), stored.
SCALARS = """
func @scalars(%a: i8, %b: f32, %c: c32, %d: c64, %x: memref<i8x1>, %y: memref<f32x1>,
              %z: memref<c32x1>, %w: memref<c64x1>) {
    %c0 = constant 0 : index
    store %a, %x[%c0]
    store %b, %y[%c0]
    store %c, %z[%c0]
    store %d, %w[%c0]
}
"""

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


@pytest.fixture(scope="module")
def queue():
    try:
        return dpctl.SyclQueue("opencl:cpu")
    except dpctl.SyclQueueCreationError:
        pytest.skip("no SYCL CPU device (intel-opencl-rt missing?)")


@pytest.fixture(scope="module")
def axpy(queue):
    return tinytc_py.compile(AXPY, device=queue).kernel("axpy")


def _pointer(a) -> int:
    return a.__sycl_usm_array_interface__["data"][0]


@pytest.fixture
def passed(monkeypatch):
    """The kernel arguments the runtime hands to dpctl: (first index, values) per parameter."""
    seen: list[tuple[int, list]] = []
    real_set = sycl._ArgBinder.set

    def record(self, first, values):
        real_set(self, first, values)
        seen.append((first, list(self.values[first : first + len(values)])))

    monkeypatch.setattr(sycl._ArgBinder, "set", record)
    return seen


def test_devices_lists_the_sycl_cpu_device(queue):
    found = tinytc_py.devices()
    sycl_devices = [d for d in found if d.runtime == "sycl"]
    assert sycl_devices, found
    dev = sycl_devices[0]
    assert isinstance(dev.handle, dpctl.SyclQueue)
    assert dev.handle.sycl_device.backend == dpctl.backend_type.opencl
    assert dev.name == queue.sycl_device.name.strip()
    # the queue the user holds is the same device (same context and SYCL device)
    assert tinytc_py.api._as_device(queue) == dev
    # the core info is the OpenCL device's: SPIR-V is compiled the same way
    cl_dev = next(d for d in found if d.runtime == "opencl" and d.name == dev.name)
    assert dev.core_info.subgroup_sizes == cl_dev.core_info.subgroup_sizes
    assert dev.core_info.spirv_features == cl_dev.core_info.spirv_features
    assert found[0].runtime == "opencl"  # the default device stays first


@pytest.mark.parametrize("kind", ["dpnp", "dpnp.tensor"])
def test_usm_arrays_are_written_in_place(queue, axpy, passed, kind):
    rng = np.random.default_rng(1)
    x_host = rng.standard_normal(37).astype(np.float32)
    y_host = rng.standard_normal(37).astype(np.float32)
    make = dpnp.asarray if kind == "dpnp" else dpt.asarray
    x, y = make(x_host, sycl_queue=queue), make(y_host, sycl_queue=queue)
    before = _pointer(y)
    axpy(2.0, x, y, num_groups=1)
    np.testing.assert_allclose(dpnp.asnumpy(y), 2.0 * x_host + y_host, rtol=1e-6)
    assert _pointer(y) == before
    # no copy: the memory passed for x and y is the arrays' own allocation
    (_, alpha), (_, x_args), (_, y_args) = passed
    assert int(x_args[0]._pointer) == _pointer(x)
    assert int(y_args[0]._pointer) == _pointer(y)
    assert [v.value for v in x_args[1:]] == [37]  # size
    assert [v.value for v in y_args[1:]] == [37, 1]  # size, stride


def test_strided_view_is_written_through_to_its_parent(queue, axpy):
    """y[1::3] of a dpnp array: a view with an offset and stride 3, passed as pointer plus
    dynamic stride; the kernel's writes land in the parent allocation."""
    parent_host = np.arange(30, dtype=np.float32)
    parent = dpnp.asarray(parent_host, sycl_queue=queue)
    view = parent[1::3]
    x = dpnp.ones(10, dtype=np.float32, sycl_queue=queue)
    axpy(-1.0, x, view, num_groups=1)
    expected = parent_host.copy()
    expected[1::3] -= 1.0
    np.testing.assert_array_equal(dpnp.asnumpy(parent), expected)


def test_two_dimensional_grid(queue):
    """num_groups (3, 2): SYCL lists ranges slowest dimension first, so the runtime reverses
    them; each group stores its (x, y) id at out[x, y]."""
    kernel = tinytc_py.compile(
        """
        func @ids(%out: memref<i64x3x2>) {
            %x = group_id.x : index
            %y = group_id.y : index
            %c10 = constant 10 : index
            %t = mul %y, %c10 : index
            %v = add %t, %x : index
            %w = cast %v : i64
            store %w, %out[%x, %y]
        }
        """,
        device=queue,
    ).kernel("ids")
    out = dpnp.full((3, 2), -1, dtype=np.int64, order="F", sycl_queue=queue)
    kernel(out, num_groups=(3, 2))
    np.testing.assert_array_equal(dpnp.asnumpy(out), [[0, 10], [1, 11], [2, 12]])


def test_numpy_arguments_are_staged_and_copied_back(axpy):
    x = np.arange(8, dtype=np.float32)
    y = np.ones(8, dtype=np.float32)
    axpy(3.0, x, y, num_groups=1)
    np.testing.assert_array_equal(y, 3.0 * np.arange(8) + 1.0)


def test_memref_of_a_usm_pointer(queue, axpy):
    """Memref(pointer, shape, strides): memory the caller allocated with dpctl, a 3 x 4 column
    major matrix whose row 1 is the y operand (stride 3)."""
    mem = dpctl.memory.MemoryUSMShared(12 * 4, queue=queue)
    data = np.frombuffer(mem, dtype=np.float32)
    data[...] = np.arange(12)
    row = sycl.Memref(mem._pointer + 4, (4,), (3,))
    axpy(0.5, np.full(4, 2.0, np.float32), row, num_groups=1)
    np.testing.assert_array_equal(data, np.arange(12) + np.isin(np.arange(12), [1, 4, 7, 10]))
    host = np.ones(4, np.float32)
    err = _error(lambda: axpy(0.5, host, sycl.Memref(host.ctypes.data, (4,), (1,)), num_groups=1))
    assert (
        "kernel @axpy, parameter %y: expected memref<f32x?,strided<?>>: not a valid USM array"
        in str(err)
    )
    for bad in (1 << 70, 0):  # not a pointer at all
        err = _error(lambda b=bad: axpy(0.5, host, sycl.Memref(b, (4,), (1,)), num_groups=1))
        assert str(err) == (
            "kernel @axpy, parameter %y: expected memref<f32x?,strided<?>>, got a"
            f" tinytc_py.Memref of the USM pointer {bad:#x}"
        )


def test_local_memref_parameter_is_refused(queue):
    kernel = tinytc_py.compile("func @k(%L: memref<f32x8, local>) {}", device=queue).kernel("k")
    err = _error(lambda: kernel(np.zeros(8, np.float32), num_groups=1))
    assert (
        "kernel @k, parameter %L: expected memref<f32x8,local>: local memref parameters take no SYCL argument"
        in str(err)
    )


def test_scalars_of_every_size(queue):
    kernel = tinytc_py.compile(SCALARS, device=queue).kernel("scalars")
    outs = [dpt.zeros(1, dtype=t, sycl_queue=queue) for t in (np.int8, np.float32, "c8", "c16")]
    kernel(-5, 1.5, 2 - 3j, -0.25 + 4.5j, *outs, num_groups=1)
    got = [dpt.asnumpy(o)[0] for o in outs]
    assert got == [-5, 1.5, 2 - 3j, -0.25 + 4.5j]


@pytest.mark.parametrize("offset", [0, 2])
def test_group_of_usm_arrays_in_place(queue, offset):
    rng = np.random.default_rng(4)
    rows = [5, 17, 40]
    host = [np.asfortranarray(rng.standard_normal((n, 3))) for n in rows]
    members = [dpnp.asarray(m, order="F", sycl_queue=queue) for m in host]
    out = dpnp.full((64, len(rows)), -7.0, order="F", sycl_queue=queue)
    kernel = tinytc_py.compile(GROUP_KERNEL, device=queue).kernel("scale")
    kernel(sycl.Group(members, offset=offset), 2.5, out, num_groups=len(rows))
    result = dpnp.asnumpy(out)
    for i, (n, m) in enumerate(zip(rows, host, strict=True)):
        np.testing.assert_allclose(result[:n, i], 2.5 * m.sum(axis=1), rtol=1e-13)
        assert (result[n:, i] == -7.0).all()


def test_group_of_numpy_arrays_is_staged(queue):
    members = [np.asfortranarray(np.arange(3.0 * n).reshape(n, 3)) for n in (4, 9)]
    out = np.zeros((64, 2), order="F")
    kernel = tinytc_py.compile(GROUP_KERNEL, device=queue).kernel("scale")
    kernel(sycl.Group(members, offset=1), 1.0, out, num_groups=2)
    for i, m in enumerate(members):
        np.testing.assert_allclose(out[: m.shape[0], i], m.sum(axis=1))


def test_small_gemm_batched_recipe_on_dpnp_tensor_arrays(queue):
    rng = np.random.default_rng(2)
    A = np.asfortranarray(rng.standard_normal((5, 3, 7)).astype(np.float32))
    B = np.asfortranarray(rng.standard_normal((3, 4, 7)).astype(np.float32))
    C = np.asfortranarray(rng.standard_normal((5, 4, 7)).astype(np.float32))
    dA, dB, dC = (dpt.asarray(a, order="F", sycl_queue=queue) for a in (A, B, C))
    before = _pointer(dC)
    out = tinytc_py.small_gemm_batched(1.5, dA, dB, 0.5, dC)  # runs on the arrays' queue
    assert out is dC and _pointer(dC) == before
    expected = 1.5 * np.einsum("mkn,kjn->mjn", A, B) + 0.5 * C
    np.testing.assert_allclose(dpt.asnumpy(dC), expected, rtol=1e-5, atol=1e-5)


def test_tall_and_skinny_recipe_on_dpnp_arrays(queue):
    rng = np.random.default_rng(5)
    A = np.asfortranarray(rng.standard_normal((1000, 4)))
    B = np.asfortranarray(rng.standard_normal((4, 3)))
    C = np.asfortranarray(rng.standard_normal((1000, 3)))
    dA, dB, dC = (dpnp.asarray(a, order="F", sycl_queue=queue) for a in (A, B, C))
    tinytc_py.tall_and_skinny(2.0, dA, dB, -1.0, dC)
    np.testing.assert_allclose(dpnp.asnumpy(dC), 2.0 * A @ B - C, rtol=1e-12, atol=1e-12)


def _error(call) -> TinytcError:
    with pytest.raises(TinytcError) as info:
        call()
    return info.value


def test_array_from_another_context_is_refused(queue, axpy):
    other = dpctl.SyclQueue(dpctl.SyclContext([queue.sycl_device]), queue.sycl_device)
    assert other.sycl_context != queue.sycl_context
    x = dpnp.ones(4, dtype=np.float32, sycl_queue=queue)
    y = dpnp.ones(4, dtype=np.float32, sycl_queue=other)
    err = _error(lambda: axpy(1.0, x, y, num_groups=1))
    assert err.status == Status.invalid_kernel_arguments
    assert (
        "kernel @axpy, parameter %y: expected memref<f32x?,strided<?>>: the USM allocation is not of the queue's context"
        in str(err)
    )
    assert (dpnp.asnumpy(y) == 1.0).all()


def test_device_usm_of_another_device_is_refused(queue):
    """One context holding the CPU device and one of its sub-devices: device USM of the
    sub-device is refused by a kernel on the device (only shared and host USM would do)."""
    dev = queue.sycl_device
    try:
        sub = dev.create_sub_devices(partition=1)[0]
    except dpctl.SyclSubDeviceCreationError:  # a device with one compute unit cannot be split
        pytest.skip("the CPU device has no sub-devices")
    ctx = dpctl.SyclContext([dev, sub])
    kernel = tinytc_py.compile(AXPY, device=dpctl.SyclQueue(ctx, dev)).kernel("axpy")
    x = dpnp.ones(4, dtype=np.float32, sycl_queue=dpctl.SyclQueue(ctx, dev))
    y = dpnp.ones(4, dtype=np.float32, usm_type="device", sycl_queue=dpctl.SyclQueue(ctx, sub))
    err = _error(lambda: kernel(1.0, x, y, num_groups=1))
    assert err.status == Status.invalid_kernel_arguments
    assert (
        f"kernel @axpy, parameter %y: expected memref<f32x?,strided<?>>: device USM of a sub-device of {dev.name.strip()}, the queue is on "
        "opencl:cpu:0"
    ) in str(err)


def test_queue_of_another_context_is_refused(queue, axpy):
    other = dpctl.SyclQueue(dpctl.SyclContext([queue.sycl_device]), queue.sycl_device)
    x = np.ones(4, np.float32)
    err = _error(lambda: axpy(1.0, x, x, num_groups=1, queue=other))
    assert err.status == Status.invalid_kernel_arguments
    assert "kernel @axpy: the queue is on opencl:cpu:0 or another context than the program" in str(
        err
    )


def test_wrong_kinds_of_arguments_are_refused(queue, axpy):
    x = dpnp.ones(4, dtype=np.float32, sycl_queue=queue)
    with pytest.raises(TypeError) as wrong_kind:  # as for an array of any other kind
        axpy(x, x, x, num_groups=1)
    assert str(wrong_kind.value) == "kernel @axpy, parameter %alpha: expected f32, got a USM array"
    doubles = dpnp.ones(4, dtype=np.float64, sycl_queue=queue)
    err = _error(lambda: axpy(1.0, doubles, x, num_groups=1))
    assert (
        "kernel @axpy, parameter %x: expected memref<f32x?>, got UsmArray of shape (4,) and dtype float64: the element type must be float32"
        in str(err)
    )
    matrix = dpnp.ones((4, 2), dtype=np.float32, sycl_queue=queue)
    err = _error(lambda: axpy(1.0, matrix, x, num_groups=1))
    assert (
        "kernel @axpy, parameter %x: expected memref<f32x?>, got UsmArray of shape (4, 2) and dtype float32: 2 modes instead of 1"
        in str(err)
    )
    group = tinytc_py.compile(GROUP_KERNEL, device=queue).kernel("scale")
    mixed = [dpnp.ones((4, 3), order="F", sycl_queue=queue), np.ones((4, 3), order="F")]
    err = _error(lambda: group(mixed, 1.0, np.zeros((64, 2), order="F"), num_groups=2))
    assert (
        "parameter %G: expected group<memref<f64x?x3>x?, offset: ?>: group members are all USM arrays or all host arrays"
        in str(err)
    )


def test_layout_that_does_not_fit_is_refused_not_copied(queue):
    """A static-stride memref and a strided USM array: no silent copy, an error."""
    kernel = tinytc_py.compile(AXPY.replace("strided<?>", "strided<1>"), device=queue)
    x = dpnp.ones(4, dtype=np.float32, sycl_queue=queue)
    y = dpnp.ones(8, dtype=np.float32, sycl_queue=queue)[::2]
    err = _error(lambda: kernel.kernel("axpy")(1.0, x, y, num_groups=1))
    assert (
        "kernel @axpy, parameter %y: expected memref<f32x?>, got UsmArray of shape (4,) and dtype float32: its strides do not fit the memref's"
        in str(err)
    )


def test_pointer_that_is_not_usm_is_refused(queue, axpy):
    host = np.ones(4, np.float32)

    class Fake:
        __sycl_usm_array_interface__ = {
            "data": (host.ctypes.data, True),
            "shape": (4,),
            "strides": None,
            "typestr": "<f4",
            "version": 1,
            "syclobj": queue,
        }

    err = _error(lambda: axpy(1.0, Fake(), host, num_groups=1))
    assert err.status == Status.invalid_kernel_arguments
    assert "kernel @axpy, parameter %x: expected memref<f32x?>: not a valid USM array" in str(err)


def test_bounds_checked_kernel_on_a_queue(queue):
    """Bounds-checked mode on a SYCL queue: the record is staged like a NumPy argument and
    the launch raises the located error; the in-bounds part of the dpnp array is written."""
    from tinytc_py.errors import OutOfBoundsError

    text = AXPY.replace("%n = size %x[0] : index", "%n = size %y[0] : index")
    prog = tinytc_py.compile(
        tinytc_py.parse(text, name="axpy.ir"), device=queue, flags=["bounds-checks"]
    )
    x = dpnp.asarray(np.arange(4, dtype=np.float32), sycl_queue=queue)
    y = dpnp.asarray(np.ones(6, dtype=np.float32), sycl_queue=queue)
    with pytest.raises(OutOfBoundsError) as info:
        prog.kernel("axpy")(np.float32(2), x, y, num_groups=1)
    first = str(info.value).splitlines()[0]
    assert first.startswith("kernel axpy: axpy.ir:6.15-31: load: index ")
    assert "of %x is out of bounds [0, 4) in work-group (0, 0, 0)" in first
    np.testing.assert_array_equal(dpnp.asnumpy(y), [1, 3, 5, 7, 1, 1])  # y + 2x, x read as 0


def test_usm_array_to_an_opencl_kernel_says_to_compile_for_its_queue(queue):
    """A kernel compiled for OpenCL (the default device) refuses a dpnp array, as a memref and
    as a group member, naming the kernel and parameter and the way out; nothing is launched."""
    device = next(d for d in tinytc_py.devices() if d.runtime == "opencl")
    kernel = tinytc_py.compile(AXPY, device=device).kernel("axpy")
    x = dpnp.ones(4, dtype=np.float32, sycl_queue=queue)
    y = np.zeros(4, dtype=np.float32)
    with pytest.raises(TypeError) as err:
        kernel(2.0, x, y)
    message = str(err.value)
    assert message.startswith(
        "kernel @axpy, parameter %x: expected memref<f32x?>, got a dpnp_array"
    )
    assert "SYCL USM memory" in message
    assert "compile the kernel for the array's SYCL queue" in message
    assert "device=array.sycl_queue" in message
    np.testing.assert_array_equal(y, 0.0)

    group = tinytc_py.compile(GROUP_KERNEL, device=device).kernel("scale")
    members = [np.ones((2, 3)), dpnp.ones((2, 3), sycl_queue=queue)]
    with pytest.raises(
        TypeError, match=r"parameter %G.*\(member 1\), got a dpnp_array in SYCL USM"
    ):
        group(members, 1.0, np.zeros((2, 2), order="F"), num_groups=2)


def test_group_size_and_offset_are_checked_alike_for_usm_and_host_members(queue):
    """A static group size and offset: the same message whether the members are USM arrays
    (used in place) or NumPy arrays (staged)."""
    static = GROUP_KERNEL.replace("x?, offset: ?>", "x2, offset: 1>")
    kernel = tinytc_py.compile(static, device=queue).kernel("scale")
    out = np.zeros((64, 3), order="F")
    host = [np.ones((4, 3), order="F") for _ in range(3)]
    usm = [dpnp.asarray(m, order="F", sycl_queue=queue) for m in host]
    for members in (host, usm):
        err = _error(lambda m=members: kernel(sycl.Group(m, offset=1), 1.0, out, num_groups=3))
        assert "parameter %G: expected group<memref<f64x?x3>x2, offset: 1>, got 3 members" in str(
            err
        )
        err = _error(lambda m=members: kernel(sycl.Group(m[:2], offset=0), 1.0, out, num_groups=2))
        assert "expected group<memref<f64x?x3>x2, offset: 1>, got the offset 0" in str(err)
