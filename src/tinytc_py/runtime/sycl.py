"""SYCL runtime through dpctl: programs built on a `dpctl.SyclQueue`, kernels launched on it,
USM arrays (`dpnp`, `dpnp.tensor`, `dpctl.memory`, anything with the
``__sycl_usm_array_interface__``) passed in place.

    q = dpctl.SyclQueue("opencl:cpu")
    prog = tinytc_py.compile(text, device=q)        # or an element of tinytc_py.devices()
    prog.kernel("axpy")(2.0, x, y, num_groups=4)    # x, y: dpnp arrays on q: no copy

Why a module of its own: SYCL is a third way to reach the same OpenCL or Level Zero device,
the one SYCL applications (and SeisSol's Python tooling) hold, and its arguments are USM
memory owned by the caller. Arguments follow the calling convention (docs/design.md §B1) as
`runtime.launch` describes; SYCL specifics:

- a USM array is passed as its pointer (data + offset) with its own shape and strides as the
  dynamic sizes; its strides must fit the memref type (no copy is ever made of it), its
  allocation must belong to the queue's context (and to the queue's device for device USM);
- host memory (NumPy, torch, ...: runtime/host_arrays.py) is staged in shared USM on the
  queue and copied back if the kernel writes it, as for Level Zero;
- `Memref(ptr, shape, strides)` takes a USM pointer (int) of the queue's context;
- groups take host members (staged) or USM arrays (in place): the pointer table and the dope
  tables are shared USM.

dpctl reaches the device through another OpenCL ICD loader than pyopencl's, which reads
`OCL_ICD_VENDORS` once, so this module imports `runtime.device` (which points that variable
at the PyPI CPU runtime) before dpctl lists platforms: a program that queries dpctl for
devices before importing this module (or calling `tinytc_py.devices()`) finds no CPU device.
The SYCL runtime builds kernels from SPIR-V itself: the kernel cache's native binaries are not
used here.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import dpctl
import dpctl.memory
import dpctl.program
import numpy as np

from ..binary import Binary, KernelInfo, ParamInfo
from ..errors import Status, TinytcError
from ..ir.types import DYNAMIC
from ..target.core_info import CoreFeature, CoreInfo

# Sets OCL_ICD_VENDORS at import; importing dpctl lists no platform yet, so the SYCL runtime's
# ICD loader (started by the first device query) sees the CPU runtime.
from . import device as _cl_device
from .host_arrays import require_host_array, require_writable
from .launch import (
    BuiltKernel,
    BuiltProgram,
    Grid,
    Group,
    Memref,
    check_group_arity,
    check_memref_shape,
    dope_values,
    global_size,
    group_layout,
    group_members,
    invalid_argument,
    memref_layout,
    own_layout,
    require_aligned,
    scalar_value,
    span,
    staged,
    usm_pointer,
)

BACKENDS = (dpctl.backend_type.opencl, dpctl.backend_type.level_zero)
LARGE_GRF_FLAGS = {
    dpctl.backend_type.opencl: "-cl-intel-256-GRF-per-thread",
    dpctl.backend_type.level_zero: "-ze-opt-large-register-file",
}
# Scalar arguments travel as the unsigned integer of their size (the runtime copies the bytes).
_SCALAR_CTYPES: dict[int, Any] = {
    1: ctypes.c_uint8,
    2: ctypes.c_ushort,
    4: ctypes.c_uint,
    8: ctypes.c_ulonglong,
}


def devices() -> list[Any]:
    """The SYCL devices of the OpenCL and Level Zero backends (`dpctl.SyclDevice`)."""
    return [d for d in dpctl.get_devices() if d.backend in BACKENDS]


def queue_of(device: Any) -> Any:
    """The queue launches go to: the queue itself, or dpctl's cached queue of a device."""
    if isinstance(device, dpctl.SyclQueue):
        return device
    if isinstance(device, dpctl.SyclDevice):
        return dpctl.get_device_cached_queue(device)
    raise TypeError(f"not a SYCL queue or device: {device!r}")


def _describe(device: Any) -> str:
    """A SYCL device in messages: its filter string ("opencl:cpu:0"), or for a sub-device,
    which has none, its name."""
    try:
        return str(device.filter_string)
    except ValueError:
        return f"a sub-device of {device.name.strip()}"


def device_key(queue: Any) -> tuple[Any, Any]:
    """What identifies where a SYCL program lives: its context and device."""
    return (queue.sycl_context, queue.sycl_device)


@functools.cache
def core_info_for(device: Any) -> CoreInfo:
    """The core info of the OpenCL or Level Zero device behind a SYCL device: the same one the
    other runtimes compute (cl_core_info, ze_core_info), so SPIR-V is compiled alike."""
    name = device.name.strip()
    if device.backend == dpctl.backend_type.opencl:
        from .opencl import core_info_for as cl_core_info

        for platform in _cl_device.cl.get_platforms():
            for cl_dev in _cl_device._platform_devices(platform):
                if cl_dev.name.strip() == name and cl_dev.driver_version == device.driver_version:
                    return cl_core_info(cl_dev)
    elif device.backend == dpctl.backend_type.level_zero:
        from . import level_zero

        for driver in level_zero.drivers():
            for ze_dev in level_zero.devices(driver):
                if ze_dev.name.strip() == name:
                    return ze_dev.core_info
    raise TinytcError(
        Status.unsupported_device,
        f"{name} ({device.backend.name}): no OpenCL or Level Zero device matches this SYCL device",
    )


# ---- programs ----------------------------------------------------------------------------------

_programs: dict[tuple[Any, Any, str], Any] = {}


def build(binary: Binary, queue: Any) -> Any:
    """The `dpctl.program.SyclProgram` of `binary` in the queue's context (kept per context,
    device and binary)."""
    if binary.format != "spirv":
        raise TinytcError(Status.unsupported_device, "SYCL queues take SPIR-V binaries")
    key = (*device_key(queue), hashlib.sha256(binary.data).hexdigest())
    prg = _programs.get(key)
    if prg is None:
        dev = queue.sycl_device
        options = ""
        if binary.core_features & CoreFeature.large_register_file and dev.is_gpu:
            options = LARGE_GRF_FLAGS.get(dev.backend, "")
        try:
            prg = dpctl.program.create_program_from_spirv(queue, binary.data, options)
        except dpctl.program.SyclProgramCompilationError as e:
            raise TinytcError(Status.compute_runtime_error, f"program build failed: {e}") from e
        _programs[key] = prg
    return prg


class Program(BuiltProgram):
    """A compiled program built on a SYCL queue's context and device; kernels launch on that
    queue unless a call names another queue of the same context and device."""

    def __init__(self, binary: Binary, queue: Any) -> None:
        super().__init__(binary, queue.sycl_context, queue.sycl_device)
        self.queue = queue
        self.sycl_program = build(binary, queue)


def program(binary: Binary, device: Any) -> Program:
    """`binary` built for a `dpctl.SyclQueue`, or a `dpctl.SyclDevice` (its cached queue)."""
    return Program(binary, queue_of(device))


# ---- launching ---------------------------------------------------------------------------------


class Kernel(BuiltKernel):
    def __init__(self, prog: Program, info: KernelInfo) -> None:
        super().__init__(prog, info)
        self.sycl_kernel = prog.sycl_program.get_sycl_kernel(info.name)

    def launch(self, args: list[Any], grid: Grid, queue: Any) -> None:
        """Set the kernel arguments from `args` (one per IR parameter, checked by
        runtime/launch.py), run the grid on `queue`, wait, and copy host results back.

        The default queue is the first USM argument's queue on the program's context and
        device, else the program's. That queue and those of all USM arguments are waited for
        first, so that work queued on them (e.g. dpnp filling an array) is done before the
        kernel runs."""
        info = self.info
        prog = cast(Program, self.program)
        arrays = _usm_arguments(self, args)
        waits: list[Any] = []
        for arr in arrays.values():
            if arr.memory.sycl_queue not in waits:
                waits.append(arr.memory.sycl_queue)
        if queue is None:
            mine = [q for q in waits if device_key(q) == (prog.context, prog.device)]
            queue = mine[0] if mine else prog.queue
        if not isinstance(queue, dpctl.SyclQueue):
            raise TypeError(f"kernel @{info.name}: queue must be a dpctl.SyclQueue, got {queue!r}")
        if device_key(queue) != (prog.context, prog.device):
            raise invalid_argument(
                f"kernel @{info.name}: the queue is on {_describe(queue.sycl_device)} or another"
                " context than the program; compile for that queue (compile(..., device=queue))"
            )
        binder = _ArgBinder(self, queue, arrays)
        if not self.bind_checked(binder, args, grid):
            return
        for q in [queue, *waits]:  # out-of-order queues (dpnp's) order nothing by themselves
            q.wait()
        # SYCL ranges list the slowest dimension first: OpenCL's (x, y, z) is SYCL's [z, y, x].
        local = self.work_group_size
        glob = global_size(grid, local)
        try:
            queue.submit(self.sycl_kernel, binder.values, list(glob[::-1]), list(local[::-1]))
        except (dpctl.SyclKernelSubmitError, dpctl.SyclKernelInvalidRangeError) as e:
            raise self.launch_failed(e) from None
        binder.copy_back()


DEVICE_KINDS = "a USM array (__sycl_usm_array_interface__), a tinytc_py.Memref of a USM pointer"


def _usm_arguments(kernel: Kernel, args: Sequence[Any]) -> dict[int, UsmArray]:
    """The USM arrays among the arguments (group members included), read once per launch:
    id of the argument -> its UsmArray."""
    found = {}
    for k, a in enumerate(args):
        what = kernel.labels[k]
        if isinstance(a, Group | list | tuple):
            members = a.members if isinstance(a, Group) else a
            items = [(f"{what} (member {i})", m) for i, m in enumerate(members)]
        else:
            items = [(what, a)]
        for w, x in items:
            if is_usm(x):
                found[id(x)] = usm_array(x, w)
    return found


@dataclass
class UsmArray:
    """A USM array as its ``__sycl_usm_array_interface__`` describes it: `memory` (a
    dpctl.memory object whose pointer is the first element), shape, element strides and dtype.
    `strides` is in bytes, as NumPy's, so that the launch helpers read it alike."""

    memory: Any
    shape: tuple[int, ...]
    elem_strides: tuple[int, ...]
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def strides(self) -> tuple[int, ...]:
        return tuple(s * self.dtype.itemsize for s in self.elem_strides)

    @property
    def pointer(self) -> int:
        return int(self.memory._pointer)


def is_usm(a: Any) -> bool:
    """Whether `a` exposes the ``__sycl_usm_array_interface__`` (dpnp, dpnp.tensor, dpctl)."""
    return hasattr(a, "__sycl_usm_array_interface__")


def usm_array(a: Any, what: str) -> UsmArray:
    """The USM array `a` exposes (`is_usm`), checked by dpctl: its pointer belongs to the
    context of the queue the interface names."""
    try:
        iface = a.__sycl_usm_array_interface__
        dtype = np.dtype(iface["typestr"])
        shape = tuple(int(n) for n in iface["shape"])
        strides = iface.get("strides")
        memory = dpctl.memory.as_usm_memory(a)
    except (
        AttributeError, KeyError, OverflowError, TypeError, ValueError,
        dpctl.SyclQueueCreationError,
    ) as e:  # fmt: skip
        raise invalid_argument(f"{what}: not a valid USM array ({e})") from e
    if strides is None:  # C-contiguous, by the protocol
        elems = [1] * len(shape)
        for i in range(len(shape) - 2, -1, -1):
            elems[i] = elems[i + 1] * shape[i + 1]
        strides = elems
    return UsmArray(memory, shape, tuple(int(s) for s in strides), dtype)


def _check_usm(arr: UsmArray, queue: Any, what: str) -> None:
    """The allocation belongs to the queue's context (and device, for device USM)."""
    kind = arr.memory.get_usm_type(queue)
    if kind == "unknown":
        raise invalid_argument(
            f"{what}: the USM allocation is not of the queue's context "
            f"({_describe(queue.sycl_device)}); make the array on that queue"
        )
    if kind == "device" and arr.memory.sycl_device != queue.sycl_device:
        raise invalid_argument(
            f"{what}: device USM of {_describe(arr.memory.sycl_device)}, "
            f"the queue is on {_describe(queue.sycl_device)}"
        )


class _ArgBinder:
    """Collects the kernel arguments in order; stages NumPy data in shared USM."""

    def __init__(self, kernel: Kernel, queue: Any, arrays: dict[int, UsmArray]) -> None:
        self.kernel = kernel
        self.queue = queue
        self.arrays = arrays  # the USM arguments, by id
        self.values: list[Any] = [None] * len(kernel.info.args)
        self.staged: list[tuple[np.ndarray, np.ndarray]] = []  # (original, USM view)
        self.kept: list[Any] = []  # staged memory only a pointer table refers to

    def set(self, first: int, values: Sequence[Any]) -> None:
        for i, v in enumerate(values):
            if isinstance(v, np.generic):
                raw = v.tobytes()
                ctype = _SCALAR_CTYPES.get(len(raw))
                v = ctype.from_buffer_copy(raw) if ctype else _raw_kernel_arg(raw)
            self.values[first + i] = v

    def bind(self, k: int, p: ParamInfo, a: Any) -> Sequence[int] | int:
        """Set argument k; its extents (shape, or a group's member count) for the grid check."""
        what = self.kernel.labels[k]
        if p.kind == "scalar":
            if is_usm(a):
                raise TypeError(f"{what}, got a USM array")
            self.set(p.first_arg, [scalar_value(p.dtype, a, what)])
            return ()
        if p.local:
            raise invalid_argument(f"{what}: local memref parameters take no SYCL argument")
        if p.kind == "memref":
            return self.memref(p, a, what)
        return self.group(p, a, what)

    def usm_copy(self, data: np.ndarray) -> tuple[Any, np.ndarray]:
        """A shared USM copy of a 1-d array: (memory, NumPy view of the copy)."""
        mem = dpctl.memory.MemoryUSMShared(max(1, data.nbytes), queue=self.queue)
        view = np.frombuffer(mem, dtype=data.dtype, count=data.size)
        view[...] = data
        return mem, view

    def memref(self, p: ParamInfo, a: Any, what: str) -> Sequence[int]:
        if isinstance(a, Memref):
            check_memref_shape(p, a.shape, a.strides, what)
            pointer = usm_pointer(a.buffer, what)
            mem = usm_array(_Pointer(pointer, self.queue), what)  # dpctl checks the context
            _check_usm(mem, self.queue, what)
            require_aligned(pointer, p.nontemporal_alignment, what)
            self.set(p.first_arg, [mem.memory, *dope_values(p, a.shape, a.strides)])
            return a.shape
        if is_usm(a):
            arr = self.arrays[id(a)]
            _check_usm(arr, self.queue, what)
            strides = own_layout(p, arr, what)
            require_aligned(arr.pointer, p.nontemporal_alignment, what, "a USM array")
            self.set(p.first_arg, [arr.memory, *dope_values(p, arr.shape, strides)])
            return arr.shape
        host = require_host_array(a, what, DEVICE_KINDS)
        strides = memref_layout(p, host, what)
        require_writable(host, p.written, what)
        mem, flat = self.usm_copy(np.zeros(max(1, span(host.shape, strides)), dtype=host.dtype))
        view = staged(host, strides, flat)
        view[...] = host
        self.set(p.first_arg, [mem, *dope_values(p, host.shape, strides)])
        if p.written:
            self.staged.append((host, view))
        return host.shape

    def group(self, p: ParamInfo, a: Any, what: str) -> int:
        if not isinstance(a, Group | list | tuple):
            raise TypeError(f"{what}, got {type(a).__name__}; pass a list of arrays or a Group")
        members = list(a.members if isinstance(a, Group) else a)
        usm = [is_usm(m) for m in members]
        if members and all(usm):
            self.usm_group(p, a, [self.arrays[id(m)] for m in members], what)
            return len(members)
        if any(usm):
            raise invalid_argument(f"{what}: group members are all USM arrays or all host arrays")
        layout = group_layout(p, group_members(p, a, what), what)
        ptrs = np.zeros(max(1, len(layout.members)), dtype=np.uint64)
        for i, m in enumerate(layout.members):
            mem, flat = self.usm_copy(np.zeros(layout.sizes[i], dtype=m.dtype))
            view = staged(m, layout.strides[i], flat, layout.offset)
            view[...] = m
            ptrs[i] = mem._pointer
            self.kept.append(mem)
            if p.written:
                self.staged.append((m, view))
        tables = [self.usm_copy(t)[0] for t in [ptrs, *layout.tables]]
        self.set(p.first_arg, [*tables, *layout.trailing(p)])
        return len(layout.members)

    def usm_group(self, p: ParamInfo, a: Any, members: list[UsmArray], what: str) -> None:
        """A group of USM arrays, used in place. As for host members, each member is the data:
        G[i] points `offset` elements before member i's first element, and each dope table row
        holds one dynamic size or stride of every member."""
        offset = a.offset if isinstance(a, Group) else 0
        check_group_arity(p, len(members), offset, what)
        rows = []
        for i, m in enumerate(members):
            member = f"{what} (member {i})"
            _check_usm(m, self.queue, member)
            rows.append(dope_values(p, m.shape, own_layout(p, m, member)))
            require_aligned(
                m.pointer - offset * m.dtype.itemsize,
                p.nontemporal_alignment,
                member,
                "a USM array",
            )
        ptrs = np.array([m.pointer - offset * m.dtype.itemsize for m in members], np.uint64)
        tables = [ptrs, *np.array(rows, dtype=np.int64).reshape(len(members), -1).T]
        trailing = [np.int64(len(members))] if p.size == DYNAMIC else []
        trailing += [np.int64(offset)] if p.offset == DYNAMIC else []
        self.set(p.first_arg, [*(self.usm_copy(t)[0] for t in tables), *trailing])

    def copy_back(self) -> None:
        for arr, view in self.staged:
            arr[...] = view


def _raw_kernel_arg(raw: bytes) -> Any:
    try:
        return dpctl.RawKernelArg(bytearray(raw))
    except RuntimeError as e:  # the SYCL runtime lacks the raw kernel argument extension
        raise invalid_argument(f"a {len(raw)}-byte scalar needs raw kernel arguments ({e})") from e


class _Pointer:
    """A bare USM pointer on a queue, exposing the array interface (one byte) for dpctl."""

    def __init__(self, ptr: int, queue: Any) -> None:
        self.__sycl_usm_array_interface__ = {
            "data": (ptr, True),
            "shape": (1,),
            "strides": None,
            "typestr": "|u1",
            "version": 1,
            "syclobj": queue,
        }


Program.kernel_class = Kernel
