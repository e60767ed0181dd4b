"""Python bindings to the Level Zero loader (`libze_loader.so.1`), cffi in ABI mode.

Only the subset of the Level Zero 1.4 API that tinytc uses is declared. The struct layouts
are those of the 1.4 headers; `ze_device_ip_version_ext_t` is newer than 1.4 and declared by
hand (drivers that know it fill it through the pNext chain of the device properties).

ABI mode needs no compiler and no Level Zero headers at run time: the loader is opened the
first time it is needed. A C host that linked `-lze_loader` and passes its handles to
libtinytc_ze shares the same loaded library (same soname), so raw handles work both ways.

Every call goes through `call(name, *args)`, which raises `ZeError` naming the result for
anything but ZE_RESULT_SUCCESS.
"""

from __future__ import annotations

import functools
import os
from enum import IntEnum
from typing import Any

from cffi import FFI

from ..errors import Status, TinytcError

LOADER = "libze_loader.so.1"

CDEF = """
typedef int ze_result_t;
typedef uint32_t ze_structure_type_t;
typedef uint32_t ze_bool_t;
typedef struct _ze_driver_handle_t *ze_driver_handle_t;
typedef struct _ze_device_handle_t *ze_device_handle_t;
typedef struct _ze_context_handle_t *ze_context_handle_t;
typedef struct _ze_command_queue_handle_t *ze_command_queue_handle_t;
typedef struct _ze_command_list_handle_t *ze_command_list_handle_t;
typedef struct _ze_fence_handle_t *ze_fence_handle_t;
typedef struct _ze_event_pool_handle_t *ze_event_pool_handle_t;
typedef struct _ze_event_handle_t *ze_event_handle_t;
typedef struct _ze_module_handle_t *ze_module_handle_t;
typedef struct _ze_module_build_log_handle_t *ze_module_build_log_handle_t;
typedef struct _ze_kernel_handle_t *ze_kernel_handle_t;

typedef struct { uint8_t id[16]; } ze_device_uuid_t;
typedef struct { uint8_t id[16]; } ze_driver_uuid_t;
typedef struct { uint8_t id[16]; } ze_native_kernel_uuid_t;
typedef struct { uint8_t kid[16]; uint8_t mid[16]; } ze_kernel_uuid_t;

typedef struct {
    ze_structure_type_t stype; void *pNext; uint32_t type; uint32_t vendorId;
    uint32_t deviceId; uint32_t flags; uint32_t subdeviceId; uint32_t coreClockRate;
    uint64_t maxMemAllocSize; uint32_t maxHardwareContexts; uint32_t maxCommandQueuePriority;
    uint32_t numThreadsPerEU; uint32_t physicalEUSimdWidth; uint32_t numEUsPerSubslice;
    uint32_t numSubslicesPerSlice; uint32_t numSlices; uint64_t timerResolution;
    uint32_t timestampValidBits; uint32_t kernelTimestampValidBits; ze_device_uuid_t uuid;
    char name[256];
} ze_device_properties_t;
typedef struct {
    ze_structure_type_t stype; void *pNext; ze_driver_uuid_t uuid; uint32_t driverVersion;
} ze_driver_properties_t;
typedef struct {
    ze_structure_type_t stype; void *pNext; uint32_t ipVersion;
} ze_device_ip_version_ext_t;
typedef struct {
    ze_structure_type_t stype; void *pNext; uint32_t maxTotalGroupSize; uint32_t maxGroupSizeX;
    uint32_t maxGroupSizeY; uint32_t maxGroupSizeZ; uint32_t maxGroupCountX;
    uint32_t maxGroupCountY; uint32_t maxGroupCountZ; uint32_t maxSharedLocalMemory;
    uint32_t numSubGroupSizes; uint32_t subGroupSizes[8];
} ze_device_compute_properties_t;
typedef struct {
    ze_structure_type_t stype; void *pNext; uint32_t spirvVersionSupported; uint32_t flags;
    uint32_t fp16flags; uint32_t fp32flags; uint32_t fp64flags; uint32_t maxArgumentsSize;
    uint32_t printfBufferSize; ze_native_kernel_uuid_t nativeKernelSupported;
} ze_device_module_properties_t;
typedef struct {
    ze_structure_type_t stype; void *pNext; uint32_t fp16Flags; uint32_t fp32Flags;
    uint32_t fp64Flags;
} ze_float_atomic_ext_properties_t;
typedef struct { ze_structure_type_t stype; const void *pNext; uint32_t flags; } ze_context_desc_t;
typedef struct {
    ze_structure_type_t stype; const void *pNext; uint32_t flags; uint32_t ordinal;
} ze_device_mem_alloc_desc_t;
typedef struct {
    ze_structure_type_t stype; const void *pNext; uint32_t flags;
} ze_host_mem_alloc_desc_t;
typedef struct {
    uint32_t numConstants; const uint32_t *pConstantIds; const void **pConstantValues;
} ze_module_constants_t;
typedef struct {
    ze_structure_type_t stype; const void *pNext; uint32_t format; size_t inputSize;
    const uint8_t *pInputModule; const char *pBuildFlags; const ze_module_constants_t *pConstants;
} ze_module_desc_t;
typedef struct {
    ze_structure_type_t stype; const void *pNext; uint32_t flags; const char *pKernelName;
} ze_kernel_desc_t;
typedef struct {
    ze_structure_type_t stype; void *pNext; uint32_t numKernelArgs; uint32_t requiredGroupSizeX;
    uint32_t requiredGroupSizeY; uint32_t requiredGroupSizeZ; uint32_t requiredNumSubGroups;
    uint32_t requiredSubgroupSize; uint32_t maxSubgroupSize; uint32_t maxNumSubgroups;
    uint32_t localMemSize; uint32_t privateMemSize; uint32_t spillMemSize; ze_kernel_uuid_t uuid;
} ze_kernel_properties_t;
typedef struct {
    ze_structure_type_t stype; const void *pNext; uint32_t ordinal; uint32_t index;
    uint32_t flags; uint32_t mode; uint32_t priority;
} ze_command_queue_desc_t;
typedef struct {
    ze_structure_type_t stype; const void *pNext; uint32_t commandQueueGroupOrdinal;
    uint32_t flags;
} ze_command_list_desc_t;
typedef struct { uint32_t groupCountX; uint32_t groupCountY; uint32_t groupCountZ; } ze_group_count_t;
typedef struct {
    ze_structure_type_t stype; const void *pNext; uint32_t flags; uint32_t count;
} ze_event_pool_desc_t;
typedef struct {
    ze_structure_type_t stype; const void *pNext; uint32_t index; uint32_t signal; uint32_t wait;
} ze_event_desc_t;

ze_result_t zeInit(uint32_t flags);
ze_result_t zeDriverGet(uint32_t *pCount, ze_driver_handle_t *phDrivers);
ze_result_t zeDeviceGet(ze_driver_handle_t hDriver, uint32_t *pCount, ze_device_handle_t *phDevices);
ze_result_t zeDriverGetProperties(ze_driver_handle_t hDriver, ze_driver_properties_t *p);
ze_result_t zeDeviceGetProperties(ze_device_handle_t hDevice, ze_device_properties_t *p);
ze_result_t zeDeviceGetComputeProperties(ze_device_handle_t hDevice,
                                         ze_device_compute_properties_t *p);
ze_result_t zeDeviceGetModuleProperties(ze_device_handle_t hDevice,
                                        ze_device_module_properties_t *p);
ze_result_t zeContextCreate(ze_driver_handle_t hDriver, const ze_context_desc_t *desc,
                            ze_context_handle_t *phContext);
ze_result_t zeContextDestroy(ze_context_handle_t hContext);
ze_result_t zeMemAllocShared(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t *d,
                             const ze_host_mem_alloc_desc_t *h, size_t size, size_t alignment,
                             ze_device_handle_t hDevice, void **pptr);
ze_result_t zeMemAllocDevice(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t *d,
                             size_t size, size_t alignment, ze_device_handle_t hDevice,
                             void **pptr);
ze_result_t zeMemFree(ze_context_handle_t hContext, void *ptr);
ze_result_t zeModuleCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                           const ze_module_desc_t *desc, ze_module_handle_t *phModule,
                           ze_module_build_log_handle_t *phBuildLog);
ze_result_t zeModuleDestroy(ze_module_handle_t hModule);
ze_result_t zeModuleGetNativeBinary(ze_module_handle_t hModule, size_t *pSize,
                                    uint8_t *pModuleNativeBinary);
ze_result_t zeModuleBuildLogGetString(ze_module_build_log_handle_t hModuleBuildLog,
                                      size_t *pSize, char *pBuildLog);
ze_result_t zeModuleBuildLogDestroy(ze_module_build_log_handle_t hModuleBuildLog);
ze_result_t zeKernelCreate(ze_module_handle_t hModule, const ze_kernel_desc_t *desc,
                           ze_kernel_handle_t *phKernel);
ze_result_t zeKernelDestroy(ze_kernel_handle_t hKernel);
ze_result_t zeKernelSetGroupSize(ze_kernel_handle_t hKernel, uint32_t x, uint32_t y, uint32_t z);
ze_result_t zeKernelSetArgumentValue(ze_kernel_handle_t hKernel, uint32_t argIndex,
                                     size_t argSize, const void *pArgValue);
ze_result_t zeKernelGetProperties(ze_kernel_handle_t hKernel, ze_kernel_properties_t *p);
ze_result_t zeCommandQueueCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                 const ze_command_queue_desc_t *desc,
                                 ze_command_queue_handle_t *phCommandQueue);
ze_result_t zeCommandQueueDestroy(ze_command_queue_handle_t hCommandQueue);
ze_result_t zeCommandQueueExecuteCommandLists(ze_command_queue_handle_t hCommandQueue,
                                              uint32_t numCommandLists,
                                              ze_command_list_handle_t *phCommandLists,
                                              ze_fence_handle_t hFence);
ze_result_t zeCommandQueueSynchronize(ze_command_queue_handle_t hCommandQueue, uint64_t timeout);
ze_result_t zeCommandListCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                const ze_command_list_desc_t *desc,
                                ze_command_list_handle_t *phCommandList);
ze_result_t zeCommandListCreateImmediate(ze_context_handle_t hContext,
                                         ze_device_handle_t hDevice,
                                         const ze_command_queue_desc_t *altdesc,
                                         ze_command_list_handle_t *phCommandList);
ze_result_t zeCommandListClose(ze_command_list_handle_t hCommandList);
ze_result_t zeCommandListReset(ze_command_list_handle_t hCommandList);
ze_result_t zeCommandListDestroy(ze_command_list_handle_t hCommandList);
ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t hCommandList,
                                            ze_kernel_handle_t hKernel,
                                            const ze_group_count_t *pLaunchFuncArgs,
                                            ze_event_handle_t hSignalEvent,
                                            uint32_t numWaitEvents,
                                            ze_event_handle_t *phWaitEvents);
ze_result_t zeCommandListAppendMemoryCopy(ze_command_list_handle_t hCommandList, void *dstptr,
                                          const void *srcptr, size_t size,
                                          ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                          ze_event_handle_t *phWaitEvents);
ze_result_t zeEventPoolCreate(ze_context_handle_t hContext, const ze_event_pool_desc_t *desc,
                              uint32_t numDevices, ze_device_handle_t *phDevices,
                              ze_event_pool_handle_t *phEventPool);
ze_result_t zeEventPoolDestroy(ze_event_pool_handle_t hEventPool);
ze_result_t zeEventCreate(ze_event_pool_handle_t hEventPool, const ze_event_desc_t *desc,
                          ze_event_handle_t *phEvent);
ze_result_t zeEventDestroy(ze_event_handle_t hEvent);
ze_result_t zeEventHostSynchronize(ze_event_handle_t hEvent, uint64_t timeout);
ze_result_t zeEventHostReset(ze_event_handle_t hEvent);
"""


class ZeResult(IntEnum):
    """ze_result_t values (Level Zero 1.4)."""

    SUCCESS = 0
    NOT_READY = 1
    ERROR_DEVICE_LOST = 0x70000001
    ERROR_OUT_OF_HOST_MEMORY = 0x70000002
    ERROR_OUT_OF_DEVICE_MEMORY = 0x70000003
    ERROR_MODULE_BUILD_FAILURE = 0x70000004
    ERROR_MODULE_LINK_FAILURE = 0x70000005
    ERROR_DEVICE_REQUIRES_RESET = 0x70000006
    ERROR_DEVICE_IN_LOW_POWER_STATE = 0x70000007
    ERROR_INSUFFICIENT_PERMISSIONS = 0x70010000
    ERROR_NOT_AVAILABLE = 0x70010001
    ERROR_DEPENDENCY_UNAVAILABLE = 0x70020000
    WARNING_DROPPED_DATA = 0x70020001
    ERROR_UNINITIALIZED = 0x78000001
    ERROR_UNSUPPORTED_VERSION = 0x78000002
    ERROR_UNSUPPORTED_FEATURE = 0x78000003
    ERROR_INVALID_ARGUMENT = 0x78000004
    ERROR_INVALID_NULL_HANDLE = 0x78000005
    ERROR_HANDLE_OBJECT_IN_USE = 0x78000006
    ERROR_INVALID_NULL_POINTER = 0x78000007
    ERROR_INVALID_SIZE = 0x78000008
    ERROR_UNSUPPORTED_SIZE = 0x78000009
    ERROR_UNSUPPORTED_ALIGNMENT = 0x7800000A
    ERROR_INVALID_SYNCHRONIZATION_OBJECT = 0x7800000B
    ERROR_INVALID_ENUMERATION = 0x7800000C
    ERROR_UNSUPPORTED_ENUMERATION = 0x7800000D
    ERROR_UNSUPPORTED_IMAGE_FORMAT = 0x7800000E
    ERROR_INVALID_NATIVE_BINARY = 0x7800000F
    ERROR_INVALID_GLOBAL_NAME = 0x78000010
    ERROR_INVALID_KERNEL_NAME = 0x78000011
    ERROR_INVALID_FUNCTION_NAME = 0x78000012
    ERROR_INVALID_GROUP_SIZE_DIMENSION = 0x78000013
    ERROR_INVALID_GLOBAL_WIDTH_DIMENSION = 0x78000014
    ERROR_INVALID_KERNEL_ARGUMENT_INDEX = 0x78000015
    ERROR_INVALID_KERNEL_ARGUMENT_SIZE = 0x78000016
    ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE = 0x78000017
    ERROR_INVALID_MODULE_UNLINKED = 0x78000018
    ERROR_INVALID_COMMAND_LIST_TYPE = 0x78000019
    ERROR_OVERLAPPING_REGIONS = 0x7800001A
    WARNING_ACTION_REQUIRED = 0x7800001B
    ERROR_UNKNOWN = 0x7FFFFFFE


def result_name(code: int) -> str:
    try:
        return f"ZE_RESULT_{ZeResult(code).name}"
    except ValueError:
        return f"ze_result_t {code:#x}"


class ZeError(TinytcError):
    """A Level Zero call failed; `result` is its ze_result_t. The C API reports it as
    tinytc_status_compute_runtime_error (what TINYTC_ZE_CHECK_STATUS does upstream)."""

    def __init__(self, what: str, result: int) -> None:
        super().__init__(Status.compute_runtime_error, f"{what} failed: {result_name(result)}")
        self.result = result


# Structure types (ze_structure_type_t) of the structs above.
ST_DRIVER_PROPERTIES = 0x1
ST_DEVICE_PROPERTIES = 0x3
ST_DEVICE_COMPUTE_PROPERTIES = 0x4
ST_DEVICE_MODULE_PROPERTIES = 0x5
ST_CONTEXT_DESC = 0xD
ST_COMMAND_QUEUE_DESC = 0xE
ST_COMMAND_LIST_DESC = 0xF
ST_EVENT_POOL_DESC = 0x10
ST_EVENT_DESC = 0x11
ST_DEVICE_MEM_ALLOC_DESC = 0x15
ST_HOST_MEM_ALLOC_DESC = 0x16
ST_MODULE_DESC = 0x1B
ST_KERNEL_DESC = 0x1D
ST_KERNEL_PROPERTIES = 0x1E
ST_FLOAT_ATOMIC_EXT_PROPERTIES = 0x10003
ST_DEVICE_IP_VERSION_EXT = 0x1000F

MODULE_FORMAT_IL_SPIRV = 0
MODULE_FORMAT_NATIVE = 1
COMMAND_QUEUE_MODE_ASYNCHRONOUS = 2
EVENT_POOL_FLAG_HOST_VISIBLE = 1
EVENT_SCOPE_FLAG_HOST = 4
MODULE_FLAG_FP16 = 1
MODULE_FLAG_FP64 = 2
MODULE_FLAG_INT64_ATOMICS = 4
UINT64_MAX = (1 << 64) - 1

ffi = FFI()
ffi.cdef(CDEF)


@functools.cache
def loader() -> Any:
    """The opened loader (raises ZeError ERROR_UNINITIALIZED when it is not installed)."""
    try:
        return ffi.dlopen(os.environ.get("TINYTC_ZE_LOADER", LOADER))
    except OSError as e:
        raise ZeError(f"opening {LOADER} ({e})", ZeResult.ERROR_UNINITIALIZED) from e


def call(name: str, *args: Any) -> None:
    """Calls the loader function `name`; raises ZeError unless it returns success."""
    result = getattr(loader(), name)(*args)
    if result != ZeResult.SUCCESS:
        raise ZeError(name, result)


def handle(ctype: str, value: Any) -> Any:
    """A cffi handle of type `ctype` from an int address, a cffi pointer, a wrapper object
    (anything with a `.handle`) or None (NULL)."""
    if value is None:
        return ffi.NULL
    return ffi.cast(ctype, getattr(value, "handle", value))


def address(value: Any) -> int:
    """The integer address of a cffi pointer (0 for NULL)."""
    return int(ffi.cast("uintptr_t", value))
