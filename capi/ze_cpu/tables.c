/* The driver's only public symbols: the ze/zet/zes "Get...ProcAddrTable" getters the Level Zero
 * loader looks up with dlsym. The loader 1.8.12 requires 46 of them (zeInit fails with
 * UNINITIALIZED if one is missing); the 7 optional "...Exp" getters are exported too, empty.
 *
 * Table versions: the loader asks with ZE_API_VERSION_CURRENT of its headers (1.4 here). Any 1.x
 * is accepted. A table of a version at least ours is zeroed up to the size we know (a newer
 * loader's table is larger; its extra fields stay as the loader initialised them), then the
 * fields we implement are set; every field we set exists since 1.0. A NULL entry makes the
 * loader return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE for that call. */
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>
#include <string.h>

#include "ze_cpu.h"

#define EXPORT ZE_DLLEXPORT ze_result_t ZE_APICALL

static ze_result_t prepare(ze_api_version_t version, void *table, size_t size) {
    if (table == NULL) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ZE_MAJOR_VERSION(version) != ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT))
        return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
    /* An older table may be smaller than ours: leave its (loader-initialised) fields alone. */
    if (version >= ZE_API_VERSION_CURRENT) memset(table, 0, size);
    return ZE_RESULT_SUCCESS;
}

#define PREPARE(version, table)                                                                    \
    do {                                                                                           \
        ze_result_t r_ = prepare((version), (table), sizeof *(table));                            \
        if (r_ != ZE_RESULT_SUCCESS) return r_;                                                    \
    } while (0)

/* Tables we leave empty. */
#define EMPTY(getter, type)                                                                        \
    EXPORT getter(ze_api_version_t version, type *table) {                                         \
        PREPARE(version, table);                                                                   \
        return ZE_RESULT_SUCCESS;                                                                  \
    }

EXPORT zeGetGlobalProcAddrTable(ze_api_version_t version, ze_global_dditable_t *t) {
    PREPARE(version, t);
    t->pfnInit = ze_cpu_init;
    return ZE_RESULT_SUCCESS;
}

EXPORT zeGetDriverProcAddrTable(ze_api_version_t version, ze_driver_dditable_t *t) {
    PREPARE(version, t);
    t->pfnGet = ze_cpu_driver_get;
    t->pfnGetApiVersion = ze_cpu_driver_get_api_version;
    t->pfnGetProperties = ze_cpu_driver_get_properties;
    t->pfnGetExtensionProperties = ze_cpu_driver_get_extension_properties;
    return ZE_RESULT_SUCCESS;
}

EXPORT zeGetDeviceProcAddrTable(ze_api_version_t version, ze_device_dditable_t *t) {
    PREPARE(version, t);
    t->pfnGet = ze_cpu_device_get;
    t->pfnGetSubDevices = ze_cpu_device_get_sub_devices;
    t->pfnGetProperties = ze_cpu_device_get_properties;
    t->pfnGetComputeProperties = ze_cpu_device_get_compute_properties;
    t->pfnGetModuleProperties = ze_cpu_device_get_module_properties;
    t->pfnGetCommandQueueGroupProperties = ze_cpu_device_get_queue_group_properties;
    t->pfnGetMemoryProperties = ze_cpu_device_get_memory_properties;
    return ZE_RESULT_SUCCESS;
}

EXPORT zeGetContextProcAddrTable(ze_api_version_t version, ze_context_dditable_t *t) {
    PREPARE(version, t);
    t->pfnCreate = ze_cpu_context_create;
    t->pfnDestroy = ze_cpu_context_destroy;
    t->pfnGetStatus = ze_cpu_context_get_status;
    return ZE_RESULT_SUCCESS;
}

EXPORT zeGetCommandQueueProcAddrTable(ze_api_version_t version, ze_command_queue_dditable_t *t) {
    PREPARE(version, t);
    t->pfnCreate = ze_cpu_queue_create;
    t->pfnDestroy = ze_cpu_queue_destroy;
    t->pfnExecuteCommandLists = ze_cpu_queue_execute;
    t->pfnSynchronize = ze_cpu_queue_synchronize;
    return ZE_RESULT_SUCCESS;
}

EXPORT zeGetCommandListProcAddrTable(ze_api_version_t version, ze_command_list_dditable_t *t) {
    PREPARE(version, t);
    t->pfnCreate = ze_cpu_list_create;
    t->pfnCreateImmediate = ze_cpu_list_create_immediate;
    t->pfnDestroy = ze_cpu_list_destroy;
    t->pfnClose = ze_cpu_list_close;
    t->pfnReset = ze_cpu_list_reset;
    t->pfnAppendBarrier = ze_cpu_list_append_barrier;
    t->pfnAppendMemoryCopy = ze_cpu_list_append_memory_copy;
    t->pfnAppendMemoryFill = ze_cpu_list_append_memory_fill;
    t->pfnAppendSignalEvent = ze_cpu_list_append_signal_event;
    t->pfnAppendWaitOnEvents = ze_cpu_list_append_wait_on_events;
    t->pfnAppendEventReset = ze_cpu_list_append_event_reset;
    t->pfnAppendLaunchKernel = ze_cpu_list_append_launch_kernel;
    return ZE_RESULT_SUCCESS;
}

EXPORT zeGetFenceProcAddrTable(ze_api_version_t version, ze_fence_dditable_t *t) {
    PREPARE(version, t);
    t->pfnCreate = ze_cpu_fence_create;
    t->pfnDestroy = ze_cpu_fence_destroy;
    t->pfnHostSynchronize = ze_cpu_fence_host_synchronize;
    t->pfnQueryStatus = ze_cpu_fence_query_status;
    t->pfnReset = ze_cpu_fence_reset;
    return ZE_RESULT_SUCCESS;
}

EXPORT zeGetEventPoolProcAddrTable(ze_api_version_t version, ze_event_pool_dditable_t *t) {
    PREPARE(version, t);
    t->pfnCreate = ze_cpu_event_pool_create;
    t->pfnDestroy = ze_cpu_event_pool_destroy;
    return ZE_RESULT_SUCCESS;
}

EXPORT zeGetEventProcAddrTable(ze_api_version_t version, ze_event_dditable_t *t) {
    PREPARE(version, t);
    t->pfnCreate = ze_cpu_event_create;
    t->pfnDestroy = ze_cpu_event_destroy;
    t->pfnHostSignal = ze_cpu_event_host_signal;
    t->pfnHostSynchronize = ze_cpu_event_host_synchronize;
    t->pfnQueryStatus = ze_cpu_event_query_status;
    t->pfnHostReset = ze_cpu_event_host_reset;
    return ZE_RESULT_SUCCESS;
}

EXPORT zeGetModuleProcAddrTable(ze_api_version_t version, ze_module_dditable_t *t) {
    PREPARE(version, t);
    t->pfnCreate = ze_cpu_module_create;
    t->pfnDestroy = ze_cpu_module_destroy;
    t->pfnGetNativeBinary = ze_cpu_module_get_native_binary;
    t->pfnGetKernelNames = ze_cpu_module_get_kernel_names;
    return ZE_RESULT_SUCCESS;
}

EXPORT zeGetModuleBuildLogProcAddrTable(ze_api_version_t version,
                                        ze_module_build_log_dditable_t *t) {
    PREPARE(version, t);
    t->pfnDestroy = ze_cpu_build_log_destroy;
    t->pfnGetString = ze_cpu_build_log_get_string;
    return ZE_RESULT_SUCCESS;
}

EXPORT zeGetKernelProcAddrTable(ze_api_version_t version, ze_kernel_dditable_t *t) {
    PREPARE(version, t);
    t->pfnCreate = ze_cpu_kernel_create;
    t->pfnDestroy = ze_cpu_kernel_destroy;
    t->pfnSetGroupSize = ze_cpu_kernel_set_group_size;
    t->pfnSuggestGroupSize = ze_cpu_kernel_suggest_group_size;
    t->pfnSetArgumentValue = ze_cpu_kernel_set_argument_value;
    t->pfnSetIndirectAccess = ze_cpu_kernel_set_indirect_access;
    t->pfnGetProperties = ze_cpu_kernel_get_properties;
    t->pfnGetName = ze_cpu_kernel_get_name;
    return ZE_RESULT_SUCCESS;
}

EXPORT zeGetMemProcAddrTable(ze_api_version_t version, ze_mem_dditable_t *t) {
    PREPARE(version, t);
    t->pfnAllocShared = ze_cpu_mem_alloc_shared;
    t->pfnAllocDevice = ze_cpu_mem_alloc_device;
    t->pfnAllocHost = ze_cpu_mem_alloc_host;
    t->pfnFree = ze_cpu_mem_free;
    t->pfnGetAllocProperties = ze_cpu_mem_get_alloc_properties;
    t->pfnGetAddressRange = ze_cpu_mem_get_address_range;
    return ZE_RESULT_SUCCESS;
}

/* ze: the rest (Image, PhysicalMem, Sampler, VirtualMem required; the Exp ones optional). */
EMPTY(zeGetImageProcAddrTable, ze_image_dditable_t)
EMPTY(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
EMPTY(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
EMPTY(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)
EMPTY(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t)
EMPTY(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t)
EMPTY(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t)
EMPTY(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t)
EMPTY(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t)
EMPTY(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t)

/* zet (tools): nothing implemented. */
EMPTY(zetGetDeviceProcAddrTable, zet_device_dditable_t)
EMPTY(zetGetContextProcAddrTable, zet_context_dditable_t)
EMPTY(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
EMPTY(zetGetModuleProcAddrTable, zet_module_dditable_t)
EMPTY(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
EMPTY(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
EMPTY(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t)
EMPTY(zetGetMetricProcAddrTable, zet_metric_dditable_t)
EMPTY(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
EMPTY(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
EMPTY(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
EMPTY(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)
EMPTY(zetGetDebugProcAddrTable, zet_debug_dditable_t)

/* zes (sysman): nothing implemented. */
EMPTY(zesGetDriverProcAddrTable, zes_driver_dditable_t)
EMPTY(zesGetDeviceProcAddrTable, zes_device_dditable_t)
EMPTY(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
EMPTY(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
EMPTY(zesGetPowerProcAddrTable, zes_power_dditable_t)
EMPTY(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
EMPTY(zesGetEngineProcAddrTable, zes_engine_dditable_t)
EMPTY(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
EMPTY(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
EMPTY(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
EMPTY(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
EMPTY(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
EMPTY(zesGetPsuProcAddrTable, zes_psu_dditable_t)
EMPTY(zesGetFanProcAddrTable, zes_fan_dditable_t)
EMPTY(zesGetLedProcAddrTable, zes_led_dditable_t)
EMPTY(zesGetRasProcAddrTable, zes_ras_dditable_t)
EMPTY(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
