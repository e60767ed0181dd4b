"""The OpenCL C API (capi/api/cl.toml) on the host's own OpenCL objects.

The host passes raw cl_device_id / cl_context / cl_kernel / cl_command_queue handles. Devices are
queried through pyopencl (`Device.from_int_ptr`, without taking a reference) to reuse
`runtime.cl_core_info.core_info_from_cl_device`; everything else calls the OpenCL ICD loader the process has loaded
through ctypes on the raw handles, so the host's objects are used as they are and the library
never owns anything the host did not get from it (the cl_program of a kernel bundle is the
host's to release). Failures of OpenCL calls are compute_runtime_error (docs/design.md §C1.4); the build
log of a failed program build goes to the error reporter of the binary's compiler context.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

from .. import kernel_cache
from ..binary import Binary
from ..errors import UNKNOWN_LOCATION, Status, TinytcError
from ..ir.context import CompilerContext
from ..ir.enums import OptFlag
from ..runtime.autotune import autotune
from ..runtime.cl_core_info import core_info_from_cl_device
from ..runtime.device import device_identity
from ..runtime.opencl import program as build_on_device
from ..target.core_info import CoreFeature, CoreInfo, IntelGpuArchitecture, _is_arch
from .core import BinaryObj
from .errors import invalid
from .handles import addr, addresses, need, out, table
from .parsed import binary_of_handle
from .recipe import CRecipe, ReportRecords, bounds_checked
from .registry import export

CL_SUCCESS = 0
CL_DEVICE_PLATFORM = 0x1031
CL_PROGRAM_DEVICES = 0x1163
CL_PROGRAM_BINARY_SIZES = 0x1165
CL_PROGRAM_BINARIES = 0x1166
CL_PROGRAM_BUILD_LOG = 0x1183
CL_KERNEL_PROGRAM = 0x1194
CL_KERNEL_COMPILE_WORK_GROUP_SIZE = 0x11B1
LARGE_GRF_OPTION = b"-cl-intel-256-GRF-per-thread"

_vp = ctypes.c_void_p
_size = ctypes.c_size_t
_int = ctypes.c_int32
_uint = ctypes.c_uint32
_SIGNATURES = {
    "clGetDeviceInfo": (_int, [_vp, _uint, _size, _vp, _vp]),
    "clCreateProgramWithIL": (_vp, [_vp, _vp, _size, _vp]),
    "clCreateProgramWithBinary": (_vp, [_vp, _uint, _vp, _vp, _vp, _vp, _vp]),
    "clBuildProgram": (_int, [_vp, _uint, _vp, ctypes.c_char_p, _vp, _vp]),
    "clGetProgramBuildInfo": (_int, [_vp, _vp, _uint, _size, _vp, _vp]),
    "clGetProgramInfo": (_int, [_vp, _uint, _size, _vp, _vp]),
    "clReleaseProgram": (_int, [_vp]),
    "clCreateKernel": (_vp, [_vp, ctypes.c_char_p, _vp]),
    "clReleaseKernel": (_int, [_vp]),
    "clGetKernelInfo": (_int, [_vp, _uint, _size, _vp, _vp]),
    "clGetKernelWorkGroupInfo": (_int, [_vp, _vp, _uint, _size, _vp, _vp]),
    "clSetKernelArg": (_int, [_vp, _uint, _size, _vp]),
    "clSetKernelArgSVMPointer": (_int, [_vp, _uint, _vp]),
    "clGetExtensionFunctionAddressForPlatform": (_vp, [_vp, ctypes.c_char_p]),
    "clEnqueueNDRangeKernel": (_int, [_vp, _vp, _uint, _vp, _vp, _vp, _uint, _vp, _vp]),
}
_SET_ARG_USM = ctypes.CFUNCTYPE(_int, _vp, _uint, _vp)
_SHARED_MEM_ALLOC = ctypes.CFUNCTYPE(_vp, _vp, _vp, _vp, _size, _uint, ctypes.POINTER(_int))
_MEM_BLOCKING_FREE = ctypes.CFUNCTYPE(_int, _vp, _vp)


class _OpenCL:
    """The ICD loader's functions with their signatures (any loader works: calls dispatch
    through the handle's own table)."""

    def __init__(self) -> None:
        from ..runtime.device import _loaded_opencl_library

        lib = _loaded_opencl_library()
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
            setattr(self, name, fn)


@functools.cache
def ocl() -> Any:
    return _OpenCL()


def check(code: int, what: str) -> None:
    if code != CL_SUCCESS:
        raise TinytcError(Status.compute_runtime_error, f"{what} failed with OpenCL error {code}")


# ---- device info ----------------------------------------------------------------------------------


def _device(p: Any) -> Any:
    need(p)
    return _device_at(addr(p))


def _device_at(address: int) -> Any:
    import pyopencl

    return pyopencl.Device.from_int_ptr(address, retain=False)


def core_info_of(p: Any) -> CoreInfo:
    return core_info_from_cl_device(_device(p))


@export
def tinytc_cl_core_info_create(info: Any, device: Any) -> None:
    need(info)
    out(info, table.new_shared("core_info", core_info_of(device)))


@export
def tinytc_cl_get_support_level(device: Any, level: Any) -> None:
    need(level)
    try:
        info = core_info_of(device)
    except TinytcError as err:
        if err.status != Status.unsupported_device:
            raise
        level[0] = 0
        return
    arch = (IntelGpuArchitecture.pvc, IntelGpuArchitecture.bmg)
    tuned = info.ip_version and any(_is_arch(info.ip_version, a) for a in arch)
    level[0] = 2 if tuned else 1


# ---- kernel bundles -------------------------------------------------------------------------------


def _report(ctx: CompilerContext, message: str) -> None:
    if ctx.reporter is not None:
        ctx.reporter(message, UNKNOWN_LOCATION)


def _build_log(program: int, device: int) -> str:
    size = ctypes.c_size_t(0)
    cl = ocl()
    if cl.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, None, ctypes.byref(size)):
        return ""
    buf = ctypes.create_string_buffer(size.value + 1)
    cl.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size.value, buf, None)
    return buf.value.decode(errors="replace")


def _create_program(context: int, device: int, data: bytes, native: bool) -> tuple[int, int]:
    """(cl_program, error code) from SPIR-V or a device binary."""
    cl = ocl()
    err = _int(0)
    dev = _vp(device)
    if native:
        length = _size(len(data))
        ptr = ctypes.c_char_p(data)
        program = cl.clCreateProgramWithBinary(
            context, 1, ctypes.byref(dev), ctypes.byref(length), ctypes.byref(ptr), None,
            ctypes.byref(err),
        )  # fmt: skip
    else:
        il = ctypes.create_string_buffer(data, len(data))
        program = cl.clCreateProgramWithIL(context, il, len(data), ctypes.byref(err))
    return program, err.value


def _build(
    context: int,
    device: int,
    data: bytes,
    native: bool,
    options: bytes,
    ctx: CompilerContext | None,
) -> int:
    """A built cl_program; failures go to the reporter of `ctx` (when given) and raise."""
    program, err = _create_program(context, device, data, native)
    if err != CL_SUCCESS:
        if ctx is not None:
            _report(ctx, f"error: creating the OpenCL program failed ({err})")
        check(err, "creating the OpenCL program")
    dev = _vp(device)
    code = ocl().clBuildProgram(program, 1, ctypes.byref(dev), options, None, None)
    if code != CL_SUCCESS:
        log = _build_log(program, device)
        ocl().clReleaseProgram(program)
        if ctx is not None:
            _report(ctx, f"error: building the OpenCL program failed ({code})\n{log}".rstrip())
        check(code, "building the OpenCL program")
    return program


def _native_binary(program: int) -> bytes:
    """CL_PROGRAM_BINARIES of a program built for one device."""
    cl = ocl()
    size = _size(0)
    check(
        cl.clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, ctypes.sizeof(size), ctypes.byref(size), None),
        "clGetProgramInfo",
    )  # fmt: skip
    buf = ctypes.create_string_buffer(size.value)
    ptr = ctypes.c_char_p(ctypes.addressof(buf))
    check(
        cl.clGetProgramInfo(program, CL_PROGRAM_BINARIES, ctypes.sizeof(ptr), ctypes.byref(ptr), None),
        "clGetProgramInfo",
    )  # fmt: skip
    return buf.raw


def build_program(context: int, device: int, binary: Binary, ctx: CompilerContext) -> int:
    """A built cl_program (a new reference the caller owns) from a tinytc binary; the device
    binary of SPIR-V comes from the kernel cache when it has one."""
    options = LARGE_GRF_OPTION if binary.core_features & CoreFeature.large_register_file else b""
    if binary.format == "native":
        return _build(context, device, binary.data, True, options, ctx)

    return kernel_cache.native_build(
        binary,
        options.decode(),
        device_identity(_device_at(device)),
        lambda: _build(context, device, binary.data, False, options, ctx),
        _native_binary,
        lambda data: _build(context, device, data, True, options, None),  # no report: rebuilt
        ctx,
    )


@export
def tinytc_cl_kernel_bundle_create_with_program(
    bundle: Any, context: Any, device: Any, prg: Any, core_features: int
) -> None:
    need(bundle, context, device)
    entry = table.entry("prog", prg)
    ctx = entry.obj.ctx
    info = core_info_of(device)
    info.core_features = CoreFeature(core_features)
    if ctx.optimization_flag(OptFlag.autotune):
        info = autotune(table.get("prog", prg), _device(device), info, build_on_device)
    binary = binary_of_handle(entry, info)
    out(bundle, build_program(addr(context), addr(device), binary, ctx))


@export
def tinytc_cl_kernel_bundle_create_with_binary(
    bundle: Any, context: Any, device: Any, bin_: Any
) -> None:
    need(bundle, context, device)
    obj: BinaryObj = table.get("binary", bin_)
    out(bundle, build_program(addr(context), addr(device), obj.binary, obj.ctx))


def group_size(kernel: int) -> tuple[int, int, int]:
    """CL_KERNEL_COMPILE_WORK_GROUP_SIZE on the first device of the kernel's program."""
    cl = ocl()
    program = _vp()
    check(
        cl.clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, ctypes.sizeof(program), ctypes.byref(program), None),
        "clGetKernelInfo",
    )  # fmt: skip
    device = _vp()
    check(
        cl.clGetProgramInfo(program, CL_PROGRAM_DEVICES, ctypes.sizeof(device), ctypes.byref(device), None),
        "clGetProgramInfo",
    )  # fmt: skip
    sizes = (_size * 3)()
    check(
        cl.clGetKernelWorkGroupInfo(
            kernel, device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, ctypes.sizeof(sizes), sizes, None
        ),
        "clGetKernelWorkGroupInfo",
    )
    return sizes[0], sizes[1], sizes[2]


@export
def tinytc_cl_get_group_size(kernel: Any, local_size: Any) -> None:
    need(kernel, local_size)
    for i, v in enumerate(group_size(addr(kernel))):
        local_size[i] = v


# ---- recipe handlers ------------------------------------------------------------------------------


class ClRecipeHandler:
    """The OpenCL side of a recipe: program, kernels with their work-group sizes, the active
    kernel and its launch size, and in bounds-checked mode the report records (in shared USM,
    cl_intel_unified_shared_memory). Releases its OpenCL objects when the handle goes away."""

    def __init__(self, crecipe: CRecipe, context: int, device: int) -> None:
        self.recipe = crecipe.recipe
        self.kernels: dict[str, tuple[int, tuple[int, int, int]]] = {}
        self.program = build_program(context, device, self.recipe.binary, self.recipe.prog.ctx)
        platform = _vp()
        ocl().clGetDeviceInfo(
            device, CL_DEVICE_PLATFORM, ctypes.sizeof(platform), ctypes.byref(platform), None
        )
        self.platform = platform.value
        self._set_usm: Any = None
        self.records: ReportRecords | None = None
        self.active = ""
        self.groups = 0
        for name in self.recipe.kernels:
            err = _int(0)
            kernel = ocl().clCreateKernel(self.program, name.encode(), ctypes.byref(err))
            check(err.value, f"clCreateKernel({name})")
            self.kernels[name] = (kernel, (1, 1, 1))
            self.kernels[name] = (kernel, group_size(kernel))
        if bounds_checked(self.recipe):
            self.records = self._usm_records(context, device)

    def _extension(self, name: str, prototype: Any) -> Any:
        fn = ocl().clGetExtensionFunctionAddressForPlatform(self.platform, name.encode())
        if not fn:
            raise TinytcError(Status.unavailable_extension, name)
        return prototype(fn)

    def _usm_records(self, context: int, device: int) -> ReportRecords:
        alloc = self._extension("clSharedMemAllocINTEL", _SHARED_MEM_ALLOC)
        free = self._extension("clMemBlockingFreeINTEL", _MEM_BLOCKING_FREE)

        def allocate(nbytes: int) -> int:
            err = _int(0)
            ptr = alloc(context, device, None, nbytes, 8, ctypes.byref(err))
            check(err.value, "clSharedMemAllocINTEL (the bounds report records)")
            return int(ptr)

        return ReportRecords(self.recipe, allocate, lambda ptr: free(context, ptr))

    def __del__(self) -> None:
        try:
            if self.records is not None:
                self.records.close()
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass
        try:
            cl = ocl()
            for kernel, _ in self.kernels.values():
                cl.clReleaseKernel(kernel)
            if getattr(self, "program", None):
                cl.clReleaseProgram(self.program)
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass

    def _usm_setter(self) -> Any:
        if self._set_usm is None:
            self._set_usm = self._extension("clSetKernelArgMemPointerINTEL", _SET_ARG_USM)
        return self._set_usm

    def set(self, kernel_name: str, args: list, groups: int) -> None:
        kernel = self.kernels[kernel_name][0]
        cl = ocl()
        for arg in args:
            if arg.scalar is not None:
                data = ctypes.create_string_buffer(arg.scalar, len(arg.scalar))
                check(cl.clSetKernelArg(kernel, arg.index, len(arg.scalar), data), "clSetKernelArg")
                continue
            kind, value = arg.mem
            ptr = addr(value)
            if kind == 0:
                mem = _vp(ptr)
                code = cl.clSetKernelArg(kernel, arg.index, ctypes.sizeof(mem), ctypes.byref(mem))
            elif kind == 1:
                code = self._usm_setter()(kernel, arg.index, ptr)
            else:
                code = cl.clSetKernelArgSVMPointer(kernel, arg.index, ptr)
            check(code, "setting a memory argument")
        self.active = kernel_name
        self.groups = groups

    def submit(self, queue: int, wait: list[int] | None, event: int) -> None:
        if not self.active:
            raise TinytcError(Status.invalid_kernel_arguments, "set_args was not called")
        kernel, local = self.kernels[self.active]
        ls = (_size * 3)(*local)
        gs = (_size * 3)(self.groups * local[0], local[1], local[2])
        waits = (_vp * len(wait))(*wait) if wait else None
        check(
            ocl().clEnqueueNDRangeKernel(
                queue, kernel, 3, None, gs, ls, len(wait or ()), waits, event or None
            ),
            "clEnqueueNDRangeKernel",
        )


@export
def tinytc_cl_recipe_handler_create(handler: Any, context: Any, device: Any, recipe: Any) -> None:
    need(handler, context, device)
    crecipe: CRecipe = table.get("recipe", recipe)
    obj = ClRecipeHandler(crecipe, addr(context), addr(device))
    out(handler, table.new_shared("recipe_handler", obj, (addr(recipe),)))


@export
def tinytc_cl_recipe_handler_submit(
    handler: Any, queue: Any, num_wait_events: int, wait_events: Any, event: Any
) -> None:
    need(queue)
    h = table.get("recipe_handler", handler)
    if not isinstance(h, ClRecipeHandler):
        invalid("not an OpenCL recipe handler")
    h.submit(addr(queue), addresses(num_wait_events, wait_events), addr(event))
