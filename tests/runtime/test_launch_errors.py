"""Every misuse of a kernel call is a TinytcError (or a TypeError for a wrong Python type) that
names the kernel, the parameter and what it expected; no pyopencl, cffi or C++ exception
escapes. Also the kernel object itself: signature, docstring, repr. Runs on the CPU OpenCL
device and on our Level Zero CPU driver."""

from __future__ import annotations

import inspect
import pydoc

import numpy as np
import pytest

import tinytc_py
from tinytc_py import Status, TinytcError

from .launch_kernels import AXPY2, GEMM, GROUP_ADD, kernel, runtime_device

SCALARS = """
func @scalars(%a: f32, %n: i8, %z: c32, %out: memref<c32x3>) attributes {subgroup_size=8} {
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    %c2 = constant 2 : index
    %ac = cast %a : c32
    %nc = cast %n : c32
    store %ac, %out[%c0]
    store %nc, %out[%c1]
    store %z, %out[%c2]
}
"""

SHAPE_ERROR = (
    "kernel @gemm, parameter %B: expected memref<f32x8x8x?>, got ndarray of shape (4, 4, 2)"
    " and dtype float32: mode 0 has 4 entries instead of 8"
)


@pytest.fixture(params=["opencl", "level_zero"])
def device(request):
    return runtime_device(request.param)


def test_numbers_are_converted_and_the_rest_refused(device):
    k = kernel(SCALARS, "scalars", device)
    out = np.zeros(3, np.complex64)
    k(1.5, np.int8(-3), 2 - 1j, out)
    np.testing.assert_array_equal(out, [1.5, -3, 2 - 1j])
    with pytest.raises(TypeError) as err:
        k(np.ones(3, np.float32), 1, 0, out)
    assert str(err.value) == (
        "kernel @scalars, parameter %a: expected f32, got ndarray of shape (3,) and dtype float32"
    )
    with pytest.raises(TypeError, match="parameter %a: expected f32, got str '2'"):
        k("2", 1, 0, out)
    with pytest.raises(TypeError, match=r"parameter %a: expected f32, got the complex number 1j"):
        k(1j, 1, 0, out)
    with pytest.raises(TinytcError, match=r"parameter %n: expected i8, got 300, which is not a valid i8") as e:  # fmt: skip
        k(1.0, 300, 0, out)
    assert e.value.status == Status.invalid_kernel_arguments


def test_memrefs_of_the_wrong_shape_or_type_are_refused(device):
    gemm = kernel(GEMM, "gemm", device)
    A = np.zeros((8, 8, 2), np.float32, order="F")
    with pytest.raises(TinytcError) as err:
        gemm(A, np.zeros((4, 4, 2), np.float32), A, num_groups=2)
    assert str(err.value) == SHAPE_ERROR
    with pytest.raises(TinytcError, match=r"parameter %C: .*: 2 modes instead of 3"):
        gemm(A, A, np.zeros((8, 8), np.float32), num_groups=2)
    with pytest.raises(TinytcError, match=r"parameter %A: .*dtype float64: the element type must be float32"):  # fmt: skip
        gemm(np.zeros((8, 8, 2)), A, A, num_groups=2)
    with pytest.raises(
        TypeError, match=r"parameter %A: expected memref<f32x8x8x\?>, got float 1.0"
    ):
        gemm(1.0, A, A, num_groups=2)


@pytest.mark.parametrize("buffer", [None, np.int64(0), 1.5, "0x1000"])
def test_a_memref_of_no_device_memory_is_refused(device, buffer):
    """What a Memref holds reaches the kernel as its memory: anything but the runtime's kind
    (a cl.Buffer or cl.SVM, a USM pointer) is refused (it crashed the process before)."""
    axpy2 = kernel(AXPY2, "axpy2", device)
    y = np.zeros((3, 4), np.float32)
    kind = "a cl.Buffer or a cl.SVM" if device.runtime == "opencl" else "a USM pointer \\(int\\)"
    if device.runtime == "level_zero" and isinstance(buffer, np.integer):
        with pytest.raises(TinytcError, match=r"parameter %x: .*, got a tinytc_py.Memref of the USM pointer 0x0$"):  # fmt: skip
            axpy2(1.0, tinytc_py.Memref(buffer, (3, 4), (1, 3)), y)
    else:
        with pytest.raises(TypeError, match=rf"parameter %x: expected memref<.*>, got a tinytc_py.Memref of {type(buffer).__name__} .*; a Memref takes {kind}$"):  # fmt: skip
            axpy2(1.0, tinytc_py.Memref(buffer, (3, 4), (1, 3)), y)
    assert (y == 0).all()


def test_group_arguments_are_checked(device):
    k = kernel(GROUP_ADD, "group_add", device)
    with pytest.raises(
        TypeError, match=r"parameter %G: expected group<memref<f32x4>x\?>, got ndarray"
    ):
        k(np.zeros(4, np.float32), np.zeros(1, np.float32), num_groups=1)
    with pytest.raises(
        TinytcError, match=r"parameter %G: .* \(member 0\), got ndarray of shape \(3,\)"
    ):
        k([np.zeros(3, np.float32)], np.zeros(1, np.float32), num_groups=1)
    members = [np.zeros(4, np.float32), np.ones(4, np.float32)]
    k(tinytc_py.Group(members), np.array([5, 6], np.float32), num_groups=2)
    np.testing.assert_array_equal(members[1], np.full(4, 7, np.float32))


def test_level_zero_kernels_take_no_queue():
    x = np.zeros((2, 2), np.float32)
    with pytest.raises(TypeError, match="kernel @axpy2: Level Zero kernels take no queue="):
        kernel(AXPY2, "axpy2", runtime_device("level_zero"))(1.0, x, x, queue=object())


def test_the_queue_must_be_on_the_kernels_device():
    import pyopencl as cl

    gemm = kernel(GEMM, "gemm")
    A = np.zeros((8, 8, 1), np.float32)
    others = [d for p in cl.get_platforms() for d in p.get_devices() if d != gemm.program.device]
    if not others:
        pytest.skip("one OpenCL device only")
    context = cl.Context([others[0]])
    with pytest.raises(TinytcError, match="kernel @gemm: queue= is on"):
        gemm(A, A, A, num_groups=1, queue=cl.CommandQueue(context))


def test_the_kernel_object_has_a_signature_a_docstring_and_a_repr():
    gemm = kernel(GEMM, "gemm")
    assert str(inspect.signature(gemm)) == (
        "(A: 'memref<f32x8x8x?>', B: 'memref<f32x8x8x?>', C: 'memref<f32x8x8x?>', *,"
        " num_groups, queue=None) -> None"
    )
    doc = inspect.getdoc(gemm)
    assert doc.splitlines()[0].startswith("Kernel @gemm: gemm(A: 'memref<f32x8x8x?>'")
    assert "    A: memref<f32x8x8x?>  (read only)" in doc
    assert "    C: memref<f32x8x8x?>  (written by the kernel)" in doc
    assert "num_groups: int or (x, y, z), required: work-groups of 8x1x1 work-items" in doc
    assert "num_groups.x <= the extent of mode 2 of C (group_id indexes it)" in doc
    assert "queue: " in doc
    assert repr(gemm).startswith(
        "<Kernel @gemm(%A: memref<f32x8x8x?>, %B: memref<f32x8x8x?>, %C: memref<f32x8x8x?>)"
        " work_group_size=(8, 1, 1) on "
    )
    assert pydoc.render_doc(gemm, renderer=pydoc.plaintext).count(doc.splitlines()[0]) == 1
    axpy2 = kernel(AXPY2, "axpy2")
    assert "num_groups=1" in str(inspect.signature(axpy2))
    assert "1 by default: the kernel never reads group_id or num_groups" in inspect.getdoc(axpy2)


def test_unnamed_or_clashing_parameters_are_passed_as_argK():
    k = kernel(
        "func @k(%0: f32, %queue: memref<f32x2>, %class: memref<f32x2>) attributes {subgroup_size=8} {\n"
        "    %c0 = constant 0 : index\n"
        "    %v = load %queue[%c0] : f32\n"
        "    %w = add %v, %0 : f32\n"
        "    store %w, %class[%c0]\n"
        "}\n",
        "k",
    )
    assert list(inspect.signature(k).parameters) == ["arg0", "arg1", "arg2", "num_groups", "queue"]
    out = np.zeros(2, np.float32)
    k(arg0=1.5, arg1=np.array([2, 0], np.float32), arg2=out)
    assert out[0] == 3.5


def test_the_help_example_runs_as_written():
    import doctest

    result = doctest.testmod(tinytc_py, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 8 and result.failed == 0
