"""Every kind of buffer a memref or group parameter takes, on the CPU OpenCL device: NumPy
arrays of any strides and order, read-only arrays (only where the kernel does not write),
memoryview / array.array / the buffer protocol, `__array_interface__`, `__dlpack__` (torch CPU
tensors), pyopencl arrays from any context on the device, `Memref`s; the kernel's results
reach the caller's own object. Anything else is refused before the launch."""

from __future__ import annotations

import array

import numpy as np
import pytest

from tinytc_py import Memref, TinytcError

from .launch_kernels import AXPY2, GEMM, GROUP_ADD, kernel, runtime_device


def _axpy2():
    return kernel(AXPY2, "axpy2")


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a.copy(order="C"),
        lambda a: a.copy(order="F"),
        lambda a: np.zeros((6, 8), np.float32)[::2, ::2].__iadd__(a),  # strided view
        lambda a: np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1],  # negative strides
        lambda a: np.asfortranarray(a).T.copy().T,  # Fortran order via a transposed copy
    ],
    ids=["C", "F", "strided", "negative", "F-view"],
)
def test_numpy_arrays_of_any_layout_are_read_and_written_in_place(make):
    x0 = np.arange(12, dtype=np.float32).reshape(3, 4)
    x, y = make(x0), make(np.ones((3, 4), np.float32))
    _axpy2()(2.0, x, y)
    np.testing.assert_array_equal(y, 2 * x0 + 1)
    np.testing.assert_array_equal(x, x0)


def test_a_strided_view_is_written_without_touching_the_rest():
    base = np.zeros((6, 8), np.float32)
    y = base[::2, ::2]
    _axpy2()(1.0, np.ones((3, 4), np.float32), y)
    assert (base[::2, ::2] == 1).all()
    assert base.sum() == 12


def test_read_only_memory_only_where_the_kernel_does_not_write():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    x.flags.writeable = False
    y = np.ones((3, 4), np.float32)
    _axpy2()(2.0, x, y)  # x is only read
    np.testing.assert_array_equal(y, 2 * x + 1)
    y.flags.writeable = False
    with pytest.raises(TinytcError) as err:
        _axpy2()(2.0, x, y)
    assert str(err.value) == (
        "kernel @axpy2, parameter %y: expected memref<f32x?x?,strided<?,?>>, got read-only"
        " memory, but the kernel writes this parameter"
    )
    with pytest.raises(TinytcError, match="parameter %y: .*read-only memory"):
        _axpy2()(2.0, x, memoryview(bytes(48)).cast("f", (3, 4)))


def test_memoryview_array_array_and_bytearray_are_written():
    x = array.array("f", range(6))
    y = array.array("f", [1.0] * 6)
    k = _axpy2()
    k(2.0, memoryview(x).cast("B").cast("f", (3, 2)), memoryview(y).cast("B").cast("f", (3, 2)))
    assert list(y) == [2 * v + 1 for v in range(6)]
    raw = bytearray(np.ones(6, np.float32).tobytes())
    k(3.0, memoryview(x).cast("B").cast("f", (6, 1)), memoryview(raw).cast("f", (6, 1)))
    np.testing.assert_array_equal(np.frombuffer(raw, np.float32), 3 * np.arange(6) + 1)


class _Interface:
    """An object that only has __array_interface__ (as many array libraries expose)."""

    def __init__(self, arr: np.ndarray) -> None:
        self._arr = arr
        self.__array_interface__ = arr.__array_interface__


def test_array_interface_objects_are_written():
    y = np.ones((3, 4), np.float32)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    _axpy2()(2.0, _Interface(x), _Interface(y))
    np.testing.assert_array_equal(y, 2 * x + 1)


def test_torch_cpu_tensors_are_written_in_their_own_memory():
    torch = pytest.importorskip("torch")
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    y = torch.ones((3, 4), dtype=torch.float32)
    before = y.data_ptr()
    _axpy2()(2.0, x, y)
    assert y.data_ptr() == before
    assert torch.equal(y, 2 * x + 1)
    # a column-major batch as yateto and SeisSol keep it: a permuted view of a C-order tensor
    rng = np.random.default_rng(4)
    A = torch.from_numpy(rng.standard_normal((4, 8, 8)).astype(np.float32)).permute(2, 1, 0)
    B = torch.from_numpy(rng.standard_normal((4, 8, 8)).astype(np.float32)).permute(2, 1, 0)
    C = torch.zeros((4, 8, 8)).permute(2, 1, 0)
    kernel(GEMM, "gemm")(A, B, C, num_groups=4)
    want = np.einsum("ikb,kjb->ijb", A.numpy(), B.numpy())
    np.testing.assert_allclose(C.numpy(), want, rtol=1e-5, atol=1e-5)


def test_torch_tensors_that_numpy_cannot_view_are_refused():
    torch = pytest.importorskip("torch")
    y = torch.ones((3, 4), requires_grad=True)
    with pytest.raises(TypeError, match="parameter %y: .*cannot be viewed as host memory through DLPack"):  # fmt: skip
        _axpy2()(2.0, torch.ones((3, 4)), y)


def test_other_python_values_are_type_errors():
    with pytest.raises(TypeError) as err:
        _axpy2()(2.0, [[1.0] * 4] * 3, np.ones((3, 4), np.float32))
    assert str(err.value).startswith(
        "kernel @axpy2, parameter %x: expected memref<f32x?x?,strided<?,?>>, got list [[1.0,"
    )
    assert "__dlpack__" in str(err.value) and "pyopencl array" in str(err.value)


def test_aligned_host_memory_is_used_in_place(monkeypatch):
    """On the CPU device (fine-grained system SVM) an array aligned as the compiler assumes
    (128 bytes) needs no cl.Buffer; a misaligned one is staged and copied back."""
    from tinytc_py.runtime import opencl

    made = []
    real = opencl.cl.Buffer
    monkeypatch.setattr(opencl.cl, "Buffer", lambda *a, **kw: made.append(1) or real(*a, **kw))
    raw = np.zeros(12 + 64, np.float32)
    first = (-raw.ctypes.data % 128) // 4
    y = raw[first : first + 12].reshape(3, 4)
    y[...] = 1
    _axpy2()(2.0, y, y)  # y = 2y + y
    assert made == [] and (y == 3).all()
    ro = np.asarray(raw[first : first + 12].reshape(3, 4))  # read-only: viewed, not staged
    ro.flags.writeable = False
    big = np.zeros(48 + 32, np.float32)
    start = (-big.ctypes.data % 128) // 4
    strided = big[start : start + 48].reshape(6, 8)[::2, ::2]  # aligned, not contiguous
    _axpy2()(1.0, ro, strided)  # strided += ro
    assert made == [] and (strided == 3).all() and big.sum() == 3 * 12
    misaligned = raw[first + 1 : first + 13].reshape(3, 4)
    misaligned[...] = 1
    _axpy2()(2.0, misaligned, misaligned)
    assert len(made) == 2 and (misaligned == 3).all()


def test_aligned_group_members_are_used_in_place(monkeypatch):
    from tinytc_py.runtime import opencl

    copies = []
    real = opencl._ArgBinder.svm
    monkeypatch.setattr(opencl._ArgBinder, "svm", lambda self, d: copies.append(d.size) or real(self, d))  # fmt: skip
    raw = np.zeros(32 + 64, np.float32)
    first = (-raw.ctypes.data % 128) // 4
    members = [raw[first : first + 4], raw[first + 32 : first + 36]]  # 128 bytes apart
    kernel(GROUP_ADD, "group_add")(members, np.array([1, 2], np.float32), num_groups=2)
    assert copies == [2]  # the pointer table only
    assert (members[0] == 1).all() and (members[1] == 2).all()
    kernel(GROUP_ADD, "group_add")([raw[first + 1 : first + 5]], np.ones(1, np.float32), num_groups=1)  # fmt: skip
    assert copies == [2, 4, 1]  # a misaligned member is copied (and back)
    assert (raw[first + 1 : first + 5] == [2, 2, 2, 1]).all()


def test_group_members_of_any_host_kind_are_written():
    members = [np.zeros(4, np.float32), array.array("f", [0.0] * 4), bytearray(16)]
    views = [members[0], memoryview(members[1]), memoryview(members[2]).cast("f")]
    kernel(GROUP_ADD, "group_add")(views, np.array([1, 2, 3], np.float32), num_groups=3)
    assert (members[0] == 1).all()
    assert list(members[1]) == [2.0] * 4
    assert (np.frombuffer(members[2], np.float32) == 3).all()
    frozen = np.zeros(4, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(TinytcError, match=r"parameter %G: .* \(member 1\), got read-only memory"):
        kernel(GROUP_ADD, "group_add")([members[0], frozen], np.ones(2, np.float32), num_groups=2)


def test_pyopencl_arrays_of_the_users_own_context_are_used_in_place():
    import pyopencl as cl
    import pyopencl.array as cla

    gemm = kernel(GEMM, "gemm")
    context = cl.Context([gemm.program.device])  # pyopencl queues do not keep it alive
    queue = cl.CommandQueue(context)
    rng = np.random.default_rng(5)
    A = np.asfortranarray(rng.standard_normal((8, 8, 3)).astype(np.float32))
    B = np.asfortranarray(rng.standard_normal((8, 8, 3)).astype(np.float32))
    dA, dB = cla.to_device(queue, A), cla.to_device(queue, B)
    dC = cla.zeros(queue, (8, 8, 3), np.float32, order="F")
    gemm(dA, dB, dC, num_groups=3)
    np.testing.assert_allclose(dC.get(), np.einsum("ikb,kjb->ijb", A, B), rtol=1e-5, atol=1e-5)
    # mixed with host memory, and with an explicit queue of that context
    C = np.zeros((8, 8, 3), np.float32, order="F")
    gemm(dA, B, C, num_groups=3, queue=queue)
    np.testing.assert_allclose(C, np.einsum("ikb,kjb->ijb", A, B), rtol=1e-5, atol=1e-5)
    # a Memref of the user's cl.Buffer
    dC.fill(0)
    gemm(dA, dB, Memref(dC.base_data, (8, 8, 3), (1, 8, 64)), num_groups=3)
    np.testing.assert_allclose(dC.get(), np.einsum("ikb,kjb->ijb", A, B), rtol=1e-5, atol=1e-5)


def test_device_memory_of_two_contexts_or_a_wrong_shape_is_refused():
    import pyopencl as cl
    import pyopencl.array as cla

    gemm = kernel(GEMM, "gemm")
    dev = gemm.program.device
    contexts = [cl.Context([dev]) for _ in range(2)]
    q1, q2 = (cl.CommandQueue(c) for c in contexts)
    a = cla.zeros(q1, (8, 8, 2), np.float32, order="F")
    b = cla.zeros(q2, (8, 8, 2), np.float32, order="F")
    with pytest.raises(TinytcError, match=r"kernel @gemm: the memory of %A, %B belongs to different OpenCL contexts"):  # fmt: skip
        gemm(a, b, np.zeros((8, 8, 2), np.float32), num_groups=2)
    with pytest.raises(TinytcError, match=r"parameter %A: expected memref<f32x8x8x\?>, got Array of shape \(8, 8, 2\) and dtype float32: its strides do not fit"):  # fmt: skip
        gemm(cla.zeros(q1, (8, 8, 2), np.float32), a, a, num_groups=2)  # C order
    with pytest.raises(TinytcError, match=r"parameter %C: .*got a Memref of shape \(8, 8\)"):
        gemm(a, a, Memref(a.base_data, (8, 8), (1, 8)), num_groups=2)
    with pytest.raises(TypeError, match=r"parameter %C: .*got a bare Buffer, which has no shape"):
        gemm(a, a, a.base_data, num_groups=2)
    with pytest.raises(TypeError, match=r"parameter %C: expected memref<f32x8x8x\?>, got a tinytc_py.Memref of str 'no buffer'; a Memref takes a cl.Buffer or a cl.SVM$"):  # fmt: skip
        gemm(a, a, Memref("no buffer", (8, 8, 2), (1, 8, 64)), num_groups=2)
    with pytest.raises(TypeError, match="queue must be a pyopencl.CommandQueue, got str"):
        gemm(a, a, a, num_groups=2, queue="q")


def test_level_zero_writes_every_host_kind_back():
    """Level Zero stages host memory in shared USM: the results are copied back into the
    caller's objects, and only for the parameters the kernel writes."""
    torch = pytest.importorskip("torch")
    axpy2 = kernel(AXPY2, "axpy2", runtime_device("level_zero"))
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    x.flags.writeable = False  # read only: fine, nothing is copied back into it
    for y, view in [
        (t := torch.ones((3, 4)), t),
        (a := array.array("f", [1.0] * 12), memoryview(a).cast("B").cast("f", (3, 4))),
        (i := np.ones((3, 4), np.float32), _Interface(i)),
    ]:
        axpy2(2.0, x, view)
        np.testing.assert_array_equal(np.asarray(y).reshape(3, 4), 2 * x + 1)
    with pytest.raises(TinytcError, match="parameter %y: .*read-only memory"):
        axpy2(2.0, x, x)
