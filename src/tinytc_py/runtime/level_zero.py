"""Level Zero runtime: modules and kernels from tinytc binaries, launches, recipe handlers.

    prog = program(text_or_prog_or_binary)          # default device and context
    k = prog.kernel("name")
    k(A, B, 2.0, num_groups=(n, 1, 1))              # host arrays are copied in and back

It mirrors the OpenCL runtime (runtime/opencl.py) on the Level Zero loader (`ze_api`).
Arguments follow runtime/launch.py, which also checks every launch first; Level Zero
specifics: every pointer argument is a USM pointer set by value. Host memory
(runtime/host_arrays.py) is staged in shared USM and copied back after the launch if the kernel
writes it; arrays
from `Context.shared_array` live in shared USM already and are used in place; `Memref(ptr,
shape, strides)` takes a USM pointer (int). Group tables are shared USM as well.

Handles: `Device` is always borrowed (devices belong to the driver). `Context`, `Module`,
`CommandList` and `EventPool`/`Event` own their handle when this module created it (`close()`,
or use them as context managers) and borrow it when wrapped from a host's raw handle
(`Context.borrow(address)`), so a C host's objects are never destroyed behind its back.

Default device: the first device of the first driver. On a machine without an Intel GPU the
loader finds no driver; then, unless the user configured drivers, this module points
`ZE_ENABLE_ALT_DRIVERS` at our CPU driver (capi/ze_cpu, built into build/lib by `make capi`)
before the first zeInit, since the loader reads that variable only once.
"""

from __future__ import annotations

import ctypes.util
import functools
import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .. import kernel_cache
from ..binary import Binary, KernelInfo, ParamInfo
from ..compiler import binary_of
from ..errors import Status, TinytcError
from ..native_libs import built_library
from ..target.core_info import CoreFeature, CoreInfo
from . import ze_api
from .host_arrays import require_host_array, require_writable
from .launch import (
    DTYPES,
    BuiltKernel,
    BuiltProgram,
    Grid,
    Group,
    Memref,
    check_memref_shape,
    dope_values,
    group_count,
    group_layout,
    group_members,
    memref_layout,
    own_layout,
    require_aligned,
    scalar_value,
    span,
    staged,
    usm_pointer,
)
from .ze_api import UINT64_MAX, ZeError, address, call, ffi, handle
from .ze_core_info import core_info_from_ze_device, device_properties

if TYPE_CHECKING:  # the runtime takes a program only to hand it to the compiler
    from ..ir.context import CompilerContext
    from ..ir.region import Prog

CPU_DRIVER = "libze_tinytc_cpu.so"
GPU_DRIVER = "ze_intel_gpu"
LARGE_GRF_FLAG = "-ze-opt-large-register-file"
ALIGNMENT = 128  # of every USM allocation made here: the default alignment of core infos


def cpu_driver_path() -> Path | None:
    """Our CPU driver: $TINYTC_ZE_CPU_DRIVER, else the one `make capi` built into build/lib."""
    return built_library(CPU_DRIVER, "TINYTC_ZE_CPU_DRIVER")


@functools.cache
def init() -> None:
    """zeInit, once per process; selects our CPU driver when no GPU driver is installed."""
    if "ZE_ENABLE_ALT_DRIVERS" not in os.environ and ctypes.util.find_library(GPU_DRIVER) is None:
        driver = cpu_driver_path()
        if driver is not None:
            os.environ["ZE_ENABLE_ALT_DRIVERS"] = str(driver)
    call("zeInit", 0)


def device_identity(device: Any) -> dict[str, str]:
    """What tells apart the native binaries of Level Zero devices (a kernel cache key part):
    device name, vendor/device id and IP version, and the driver's UUID and version."""
    return _identity(address(handle("ze_device_handle_t", device)))


@functools.cache
def _identity(device_address: int) -> dict[str, str]:
    dev = handle("ze_device_handle_t", device_address)
    props, ip_version = device_properties(dev)
    driver = ffi.new("ze_driver_properties_t *", {"stype": ze_api.ST_DRIVER_PROPERTIES})
    call("zeDriverGetProperties", _driver_of(dev), driver)
    return {
        "name": ffi.string(props[0].name).decode(errors="replace"),
        "device": f"{props[0].vendorId:#x}:{props[0].deviceId:#x}:{ip_version:#x}",
        "driver": f"{bytes(driver.uuid.id).hex()}:{driver.driverVersion:#x}",
    }


def _driver_of(device: Any) -> Any:
    for driver in drivers():
        if any(address(d.handle) == address(device) for d in devices(driver)):
            return driver
    raise TinytcError(Status.unsupported_device, "the device belongs to no Level Zero driver")


def drivers() -> list[Any]:
    init()
    count = ffi.new("uint32_t *", 0)
    call("zeDriverGet", count, ffi.NULL)
    out = ffi.new("ze_driver_handle_t[]", count[0])
    call("zeDriverGet", count, out)
    return [out[i] for i in range(count[0])]


def devices(driver: Any) -> list[Device]:
    count = ffi.new("uint32_t *", 0)
    call("zeDeviceGet", driver, count, ffi.NULL)
    out = ffi.new("ze_device_handle_t[]", count[0])
    call("zeDeviceGet", driver, count, out)
    return [Device(out[i], driver) for i in range(count[0])]


class Device:
    """A borrowed device handle (with its driver, which contexts are created on)."""

    def __init__(self, device: Any, driver: Any = None) -> None:
        self.handle = handle("ze_device_handle_t", device)
        self.driver = driver

    @functools.cached_property
    def core_info(self) -> CoreInfo:
        return core_info_from_ze_device(self.handle)

    @property
    def name(self) -> str:
        return ffi.string(device_properties(self.handle)[0].name).decode(errors="replace")


class _Owned:
    """A handle destroyed by `destroy` when owned; borrowed handles are only forgotten."""

    destroy: str = ""

    def __init__(self, value: Any, owned: bool) -> None:
        self.handle = value
        self.owned = owned

    def close(self) -> None:
        if self.handle is not None and self.owned:
            call(self.destroy, self.handle)
        self.handle = None

    def detach(self) -> Any:
        """Hands the handle over to the caller (who destroys it) and forgets it."""
        value, self.handle = self.handle, None
        return value

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:  # noqa: SIM105 - contextlib may be gone (None) at interpreter exit
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass


class Context(_Owned):
    destroy = "zeContextDestroy"

    @classmethod
    def create(cls, driver: Any) -> Context:
        desc = ffi.new("ze_context_desc_t *", {"stype": ze_api.ST_CONTEXT_DESC})
        out = ffi.new("ze_context_handle_t *")
        call("zeContextCreate", driver, desc, out)
        return cls(out[0], True)

    @classmethod
    def borrow(cls, value: Any) -> Context:
        return cls(handle("ze_context_handle_t", value), False)

    def alloc_shared(self, nbytes: int, device: Device) -> int:
        """A shared USM allocation (host and device see it); free it with `free`."""
        ddesc = ffi.new("ze_device_mem_alloc_desc_t *", {"stype": ze_api.ST_DEVICE_MEM_ALLOC_DESC})
        hdesc = ffi.new("ze_host_mem_alloc_desc_t *", {"stype": ze_api.ST_HOST_MEM_ALLOC_DESC})
        ptr = ffi.new("void **")
        call("zeMemAllocShared", self.handle, ddesc, hdesc, max(1, nbytes), ALIGNMENT,
             device.handle, ptr)  # fmt: skip
        return address(ptr[0])

    def free(self, ptr: int) -> None:
        call("zeMemFree", self.handle, ffi.cast("void *", ptr))

    def shared_array(
        self, shape: int | Sequence[int], dtype: Any, device: Device | None = None
    ) -> SharedArray:
        """A zero-filled Fortran-ordered NumPy array in shared USM, freed with the array."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        dt = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        ptr = self.alloc_shared(nbytes, device or default_device())
        raw = ffi.buffer(ffi.cast("char *", ptr), max(1, nbytes))
        arr = np.frombuffer(raw, dtype=dt, count=nbytes // dt.itemsize)
        arr = cast(SharedArray, arr.reshape(shape, order="F").view(SharedArray))
        arr.usm = _Usm(self, ptr)
        arr[...] = 0
        return arr


class _Usm:
    """Frees a USM allocation when the last array viewing it goes away."""

    def __init__(self, context: Context, ptr: int) -> None:
        self.context, self.ptr = context, ptr

    def __del__(self) -> None:
        try:
            if self.context.handle is not None:
                self.context.free(self.ptr)
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass


class SharedArray(np.ndarray):
    """A NumPy array in shared USM: kernels use it in place (no staging, no copy back)."""

    usm: _Usm | None = None

    def __array_finalize__(self, obj: Any) -> None:
        self.usm = getattr(obj, "usm", None)


class Module(_Owned):
    destroy = "zeModuleDestroy"

    @classmethod
    def create(
        cls,
        context: Any,
        device: Any,
        binary: Binary,
        report: Callable[[str], None] | None = None,
        ctx: CompilerContext | None = None,
    ) -> Module:
        """A module from a tinytc binary (SPIR-V or native); the native binary of SPIR-V comes
        from the kernel cache when it has one (`ctx`, of a C API binary, may turn it off). A
        failed build raises ZeError; the build log goes to `report` first."""
        flags = LARGE_GRF_FLAG if binary.core_features & CoreFeature.large_register_file else ""
        if binary.format == "native":
            return cls._build(context, device, binary.data, True, flags, report)
        return kernel_cache.native_build(
            binary,
            flags,
            device_identity(device),
            lambda: cls._build(context, device, binary.data, False, flags, report),
            Module.native_binary,
            lambda data: cls._build(context, device, data, True, flags, None),  # no report: rebuilt
            ctx,
        )

    @classmethod
    def _build(
        cls,
        context: Any,
        device: Any,
        data: bytes,
        native: bool,
        flags: str,
        report: Callable[[str], None] | None,
    ) -> Module:
        c_data = ffi.from_buffer("uint8_t[]", data)
        c_flags = ffi.new("char[]", flags.encode())
        fmt = ze_api.MODULE_FORMAT_NATIVE if native else ze_api.MODULE_FORMAT_IL_SPIRV
        desc = ffi.new(
            "ze_module_desc_t *",
            {"stype": ze_api.ST_MODULE_DESC, "format": fmt, "inputSize": len(data),
             "pInputModule": c_data, "pBuildFlags": c_flags},
        )  # fmt: skip
        out = ffi.new("ze_module_handle_t *")
        log = ffi.new("ze_module_build_log_handle_t *")
        result = ze_api.loader().zeModuleCreate(
            handle("ze_context_handle_t", context), handle("ze_device_handle_t", device), desc,
            out, log,
        )  # fmt: skip
        text = _take_build_log(log[0])
        if result != ze_api.ZeResult.SUCCESS:
            if report is not None:
                report(f"error: building the Level Zero module failed\n{text}".rstrip())
            raise ZeError("zeModuleCreate", result)
        return cls(out[0], True)

    def native_binary(self) -> bytes:
        """zeModuleGetNativeBinary: what ZE_MODULE_FORMAT_NATIVE takes back on this device."""
        size = ffi.new("size_t *", 0)
        call("zeModuleGetNativeBinary", self.handle, size, ffi.NULL)
        buf = ffi.new("uint8_t[]", size[0])
        call("zeModuleGetNativeBinary", self.handle, size, buf)
        return bytes(ffi.buffer(buf, size[0]))

    def kernel(self, name: str, group_size: Sequence[int] | None = None) -> Any:
        """A new ze_kernel_handle_t (the caller destroys it) with its group size set: the
        given one, else the kernel's required size."""
        c_name = ffi.new("char[]", name.encode())
        desc = ffi.new(
            "ze_kernel_desc_t *", {"stype": ze_api.ST_KERNEL_DESC, "pKernelName": c_name}
        )
        out = ffi.new("ze_kernel_handle_t *")
        call("zeKernelCreate", self.handle, desc, out)
        try:
            size = tuple(group_size) if group_size is not None else required_group_size(out[0])
            call("zeKernelSetGroupSize", out[0], *size)
        except BaseException:
            call("zeKernelDestroy", out[0])
            raise
        return out[0]


def _take_build_log(log: Any) -> str:
    """The text of a build log handle, which is destroyed."""
    if log == ffi.NULL:
        return ""
    try:
        size = ffi.new("size_t *", 0)
        call("zeModuleBuildLogGetString", log, size, ffi.NULL)
        buf = ffi.new("char[]", max(1, size[0]))
        call("zeModuleBuildLogGetString", log, size, buf)
        return ffi.string(buf).decode(errors="replace")
    finally:
        call("zeModuleBuildLogDestroy", log)


def required_group_size(kernel: Any) -> tuple[int, int, int]:
    """The kernel's required work-group size (1 for dimensions it does not fix)."""
    props = ffi.new("ze_kernel_properties_t *", {"stype": ze_api.ST_KERNEL_PROPERTIES})
    call("zeKernelGetProperties", handle("ze_kernel_handle_t", kernel), props)
    size = (props.requiredGroupSizeX, props.requiredGroupSizeY, props.requiredGroupSizeZ)
    return tuple(max(1, int(s)) for s in size)  # type: ignore[return-value]


def set_arg(kernel: Any, index: int, value: bytes | None, size: int | None = None) -> None:
    """zeKernelSetArgumentValue with raw bytes (None: a NULL value of `size` bytes)."""
    data = ffi.NULL if value is None else ffi.from_buffer("char[]", value)
    call("zeKernelSetArgumentValue", kernel, index, len(value) if value is not None else size, data)


def set_pointer(kernel: Any, index: int, ptr: int) -> None:
    set_arg(kernel, index, int(ptr).to_bytes(8, "little"))


class CommandList(_Owned):
    destroy = "zeCommandListDestroy"

    @classmethod
    def immediate(cls, context: Context, device: Device) -> CommandList:
        desc = ffi.new(
            "ze_command_queue_desc_t *",
            {"stype": ze_api.ST_COMMAND_QUEUE_DESC, "mode": ze_api.COMMAND_QUEUE_MODE_ASYNCHRONOUS},
        )
        out = ffi.new("ze_command_list_handle_t *")
        call("zeCommandListCreateImmediate", context.handle, device.handle, desc, out)
        return cls(out[0], True)

    @classmethod
    def borrow(cls, value: Any) -> CommandList:
        return cls(handle("ze_command_list_handle_t", value), False)

    def launch(
        self,
        kernel: Any,
        num_groups: int | Sequence[int],
        signal: Any = None,
        wait: Sequence[Any] = (),
    ) -> None:
        count = ffi.new("ze_group_count_t *", group_count(num_groups))
        waits = ffi.new("ze_event_handle_t[]", [handle("ze_event_handle_t", w) for w in wait])
        call("zeCommandListAppendLaunchKernel", self.handle, handle("ze_kernel_handle_t", kernel),
             count, handle("ze_event_handle_t", signal), len(wait), waits if wait else ffi.NULL)  # fmt: skip


class EventPool(_Owned):
    """A host-visible event pool: launches signal its events and the host waits on them."""

    destroy = "zeEventPoolDestroy"

    @classmethod
    def create(cls, context: Context, count: int = 1) -> EventPool:
        desc = ffi.new(
            "ze_event_pool_desc_t *",
            {"stype": ze_api.ST_EVENT_POOL_DESC, "flags": ze_api.EVENT_POOL_FLAG_HOST_VISIBLE,
             "count": count},
        )  # fmt: skip
        out = ffi.new("ze_event_pool_handle_t *")
        call("zeEventPoolCreate", context.handle, desc, 0, ffi.NULL, out)
        return cls(out[0], True)

    def event(self, index: int = 0) -> Event:
        desc = ffi.new(
            "ze_event_desc_t *",
            {"stype": ze_api.ST_EVENT_DESC, "index": index,
             "signal": ze_api.EVENT_SCOPE_FLAG_HOST, "wait": ze_api.EVENT_SCOPE_FLAG_HOST},
        )  # fmt: skip
        out = ffi.new("ze_event_handle_t *")
        call("zeEventCreate", self.handle, desc, out)
        return Event(out[0], True)


class Event(_Owned):
    destroy = "zeEventDestroy"

    def wait(self) -> None:
        call("zeEventHostSynchronize", self.handle, UINT64_MAX)

    def reset(self) -> None:
        call("zeEventHostReset", self.handle)


# ---- defaults and programs -----------------------------------------------------------------


@functools.cache
def default_device() -> Device:
    for driver in drivers():
        found = devices(driver)
        if found:
            return found[0]
    raise TinytcError(Status.unsupported_device, "no Level Zero device found")


@functools.cache
def default_context() -> Context:
    return Context.create(default_device().driver)


class _Stream:
    """An immediate command list with one event: launches are waited for on the host, one at a
    time (the kernels of all threads share the list and its event)."""

    def __init__(self, context: Context, device: Device) -> None:
        self.list = CommandList.immediate(context, device)
        self.pool = EventPool.create(context)
        self.done = self.pool.event()
        self.lock = threading.Lock()

    def run(self, kernel: Any, num_groups: int | Sequence[int]) -> None:
        with self.lock:
            self.list.launch(kernel, num_groups, signal=self.done)
            self.done.wait()
            self.done.reset()


_modules: dict[tuple[int, int, str], Module] = {}
_streams: dict[tuple[int, int], _Stream] = {}


def build(binary: Binary, context: Context, device: Device) -> Module:
    """The module of `binary` (cached per context, device and binary)."""
    key = (address(context.handle), address(device.handle), hashlib.sha256(binary.data).hexdigest())
    module = _modules.get(key)
    if module is None:
        module = _modules[key] = Module.create(context, device, binary)
    return module


def stream(context: Context, device: Device) -> _Stream:
    key = (address(context.handle), address(device.handle))
    if key not in _streams:
        _streams[key] = _Stream(context, device)
    return _streams[key]


class Program(BuiltProgram):
    """A compiled program built into a module on one device."""

    def __init__(self, binary: Binary, context: Context, device: Device) -> None:
        super().__init__(binary, context, device)
        self.module = build(binary, context, device)


def program(
    source: str | Prog | Binary,
    device: Device | None = None,
    context: Context | None = None,
    core_info: CoreInfo | None = None,
) -> Program:
    """Compile (text or IR) and build for `device` (default: the default device and context)."""
    if device is None:
        device = default_device()
        context = context or default_context()
    elif context is None:
        context = Context.create(device.driver)
    binary = binary_of(source, core_info or device.core_info)
    return Program(binary, context, device)


class Kernel(BuiltKernel):
    def __init__(self, prog: Program, info: KernelInfo) -> None:
        super().__init__(prog, info)
        self.handle = prog.module.kernel(info.name, self.work_group_size)

    def __del__(self) -> None:
        try:  # noqa: SIM105 - contextlib may be gone (None) at interpreter exit
            call("zeKernelDestroy", self.handle)
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass

    def launch(self, args: list[Any], grid: Grid, queue: Any) -> None:
        info = self.info
        if queue is not None:
            raise TypeError(f"kernel @{info.name}: Level Zero kernels take no queue=")
        prog = self.program
        # the kernel's lock through the run: zeCommandListAppendLaunchKernel takes the
        # arguments set on the one kernel handle, and the stream waits for the kernel anyway
        with _ArgBinder(self) as binder, self.launch_lock:
            if not self.bind_checked(binder, args, grid):
                return
            try:
                stream(prog.context, prog.device).run(self.handle, grid)
            except ZeError as e:
                raise self.launch_failed(e) from None
            binder.copy_back()


DEVICE_KINDS = "a SharedArray (Context.shared_array), a tinytc_py.Memref of a USM pointer"


class _ArgBinder:
    """Sets kernel arguments; stages host memory (host_arrays.py) in shared USM, copies it
    back for the parameters the kernel writes, and frees it afterwards."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.info = kernel.info
        self.context = kernel.program.context
        self.device = kernel.program.device
        self.staged: list[tuple[np.ndarray, np.ndarray]] = []  # (original, USM view)
        self.allocations: list[int] = []

    def __enter__(self) -> _ArgBinder:
        return self

    def __exit__(self, *exc: Any) -> None:
        for ptr in self.allocations:
            self.context.free(ptr)

    def values(self, first: int, values: Sequence[np.generic]) -> None:
        for i, v in enumerate(values):
            set_arg(self.kernel.handle, first + i, v.tobytes())

    def bind(self, k: int, p: ParamInfo, a: Any) -> Sequence[int] | int:
        """Set argument k; its extents (shape, or a group's member count) for the grid check."""
        what = self.kernel.labels[k]
        if p.kind == "scalar":
            self.values(p.first_arg, [scalar_value(p.dtype, a, what)])
            return ()
        if p.kind == "memref":
            return self.memref(p, a, what)
        return self.group(p, a, what)

    def usm_copy(self, data: np.ndarray) -> tuple[int, np.ndarray]:
        """A shared USM copy of a 1-d array: (pointer, NumPy view of the copy)."""
        ptr = self.context.alloc_shared(data.nbytes, self.device)
        self.allocations.append(ptr)
        raw = ffi.buffer(ffi.cast("char *", ptr), max(1, data.nbytes))
        view = np.frombuffer(raw, dtype=data.dtype, count=data.size)
        view[...] = data
        return ptr, view

    def memref(self, p: ParamInfo, a: Any, what: str) -> Sequence[int]:
        if isinstance(a, Memref):
            check_memref_shape(p, a.shape, a.strides, what)
            set_pointer(
                self.kernel.handle,
                p.first_arg,
                require_aligned(usm_pointer(a.buffer, what), p.nontemporal_alignment, what),
            )
            self.values(p.first_arg + 1, dope_values(p, a.shape, a.strides))
            return a.shape
        if isinstance(a, SharedArray):
            strides = own_layout(p, a, what)
            pointer = a.__array_interface__["data"][0]
            require_aligned(pointer, p.nontemporal_alignment, what, "a SharedArray")
            set_pointer(self.kernel.handle, p.first_arg, pointer)
            self.values(p.first_arg + 1, dope_values(p, a.shape, strides))
            return a.shape
        arr = require_host_array(a, what, DEVICE_KINDS)
        strides = memref_layout(p, arr, what)
        require_writable(arr, p.written, what)
        ptr, flat = self.usm_copy(np.zeros(max(1, span(arr.shape, strides)), dtype=arr.dtype))
        view = staged(arr, strides, flat)
        view[...] = arr
        set_pointer(self.kernel.handle, p.first_arg, ptr)
        self.values(p.first_arg + 1, dope_values(p, arr.shape, strides))
        if p.written:
            self.staged.append((arr, view))
        return arr.shape

    def group(self, p: ParamInfo, a: Any, what: str) -> int:
        layout = group_layout(p, group_members(p, a, what), what)
        ptrs = np.zeros(max(1, len(layout.members)), dtype=np.uint64)
        for i, m in enumerate(layout.members):
            ptr, flat = self.usm_copy(np.zeros(layout.sizes[i], dtype=m.dtype))
            view = staged(m, layout.strides[i], flat, layout.offset)
            view[...] = m
            ptrs[i] = ptr
            if p.written:
                self.staged.append((m, view))
        for i, table in enumerate([ptrs, *layout.tables]):
            set_pointer(self.kernel.handle, p.first_arg + i, self.usm_copy(table)[0])
        self.values(p.first_arg + 1 + len(layout.tables), layout.trailing(p))
        return len(layout.members)

    def copy_back(self) -> None:
        for arr, view in self.staged:
            arr[...] = view


# ---- recipe handlers -----------------------------------------------------------------------

MEM_USM_POINTER = 1  # tinytc_mem_type_t values a Level Zero handler accepts
MEM_SVM_POINTER = 2


class RecipeHandler:
    """A recipe on Level Zero (docs/design.md §B8.3): its module, one kernel per recipe kernel with
    the group size set, the active kernel and its group count. Memory arguments are USM
    pointers, passed by value."""

    def __init__(
        self, recipe: Any, context: Any, device: Any, report: Callable[[str], None] | None = None
    ) -> None:
        self.recipe = recipe
        self.module = Module.create(context, device, recipe.binary, report)
        self.kernels = {name: self.module.kernel(name) for name in recipe.kernels}
        self.active: Any = None
        self.groups = 0

    def close(self) -> None:
        for k in self.kernels.values():
            call("zeKernelDestroy", k)
        self.kernels = {}
        self.module.close()

    def __del__(self) -> None:
        try:  # noqa: SIM105 - contextlib may be gone (None) at interpreter exit
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass

    def set(self, kernel_name: str, args: list, groups: int) -> None:
        """Sets recipe arguments (recipes.Arg: scalars as bytes, memory as (kind, address))."""
        kernel = self.kernels[kernel_name]
        for arg in args:
            if arg.scalar is not None:
                set_arg(kernel, arg.index, arg.scalar)
                continue
            kind, ptr = arg.mem
            if kind not in (MEM_USM_POINTER, MEM_SVM_POINTER):
                raise TinytcError(
                    Status.invalid_arguments, "Level Zero recipes take USM pointers, not buffers"
                )
            set_pointer(kernel, arg.index, ptr)
        self.active = kernel
        self.groups = groups

    def submit(self, command_list: Any, signal: Any = None, wait: Sequence[Any] = ()) -> None:
        if self.active is None:
            raise TinytcError(Status.invalid_kernel_arguments, "set_args was not called")
        lst = (
            command_list
            if isinstance(command_list, CommandList)
            else CommandList.borrow(command_list)
        )
        lst.launch(self.active, (self.groups, 1, 1), signal, wait)


Program.kernel_class = Kernel


__all__ = [
    "DTYPES",
    "CommandList",
    "Context",
    "Device",
    "Event",
    "EventPool",
    "Group",
    "Kernel",
    "Memref",
    "Module",
    "Program",
    "RecipeHandler",
    "SharedArray",
    "ZeError",
    "default_context",
    "default_device",
    "devices",
    "drivers",
    "init",
    "program",
    "required_group_size",
]
