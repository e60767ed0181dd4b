/* Prints the driver's and device's properties as key=value lines for the pytest side. */
#include "ze_common.h"

/* Not in the 1.4 headers. */
#define STYPE_DEVICE_IP_VERSION_EXT ((ze_structure_type_t)0x1000f)
typedef struct {
    ze_structure_type_t stype;
    const void *pNext;
    uint32_t ipVersion;
} ip_version_ext_t;

static void driver_properties(const ze_env_t *env) {
    ze_api_version_t version;
    CHECK(zeDriverGetApiVersion(env->driver, &version));
    printf("api_version=%u.%u\n", ZE_MAJOR_VERSION(version), ZE_MINOR_VERSION(version));
    ze_driver_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES, .pNext = NULL};
    CHECK(zeDriverGetProperties(env->driver, &props));
    printf("driver_version=%u\n", props.driverVersion);
    uint32_t n = 0;
    CHECK(zeDriverGetExtensionProperties(env->driver, &n, NULL));
    ze_driver_extension_properties_t ext[16];
    REQUIRE(n <= 16);
    CHECK(zeDriverGetExtensionProperties(env->driver, &n, ext));
    for (uint32_t i = 0; i < n; ++i) printf("extension=%s\n", ext[i].name);
}

static void device_properties(const ze_env_t *env) {
    ip_version_ext_t ip = {STYPE_DEVICE_IP_VERSION_EXT, NULL, 12345};
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, .pNext = &ip};
    CHECK(zeDeviceGetProperties(env->device, &props));
    printf("name=%s\n", props.name);
    printf("type=%d\n", (int)props.type);
    printf("vendor_id=0x%x\n", props.vendorId);
    printf("threads_per_eu=%u\n", props.numThreadsPerEU);
    printf("eus_per_subslice=%u\n", props.numEUsPerSubslice);
    printf("subslices_per_slice=%u\n", props.numSubslicesPerSlice);
    printf("slices=%u\n", props.numSlices);
    printf("max_mem_alloc_size=%llu\n", (unsigned long long)props.maxMemAllocSize);
    printf("ip_version=%u\n", ip.ipVersion);
    uint32_t n = 7;
    CHECK(zeDeviceGetSubDevices(env->device, &n, NULL));
    printf("sub_devices=%u\n", n);
}

static void compute_properties(const ze_env_t *env) {
    ze_device_compute_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES, .pNext = NULL};
    CHECK(zeDeviceGetComputeProperties(env->device, &props));
    printf("max_total_group_size=%u\n", props.maxTotalGroupSize);
    printf("max_group_size=%u %u %u\n", props.maxGroupSizeX, props.maxGroupSizeY,
           props.maxGroupSizeZ);
    printf("max_shared_local_memory=%u\n", props.maxSharedLocalMemory);
    printf("subgroup_sizes=");
    for (uint32_t i = 0; i < props.numSubGroupSizes; ++i)
        printf("%s%u", i ? " " : "", props.subGroupSizes[i]);
    printf("\n");
}

static void module_properties(const ze_env_t *env) {
    ze_float_atomic_ext_properties_t atomics = {.stype = ZE_STRUCTURE_TYPE_FLOAT_ATOMIC_EXT_PROPERTIES, .pNext = NULL};
    ze_device_module_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES, .pNext = &atomics};
    CHECK(zeDeviceGetModuleProperties(env->device, &props));
    printf("spirv_version=%u.%u\n", ZE_MAJOR_VERSION(props.spirvVersionSupported),
           ZE_MINOR_VERSION(props.spirvVersionSupported));
    printf("fp16=%d\n", (props.flags & ZE_DEVICE_MODULE_FLAG_FP16) != 0);
    printf("fp64=%d\n", (props.flags & ZE_DEVICE_MODULE_FLAG_FP64) != 0);
    printf("fp32_flags=0x%x\n", props.fp32flags);
    printf("atomics_fp16=0x%x\n", atomics.fp16Flags);
    printf("atomics_fp32=0x%x\n", atomics.fp32Flags);
    printf("atomics_fp64=0x%x\n", atomics.fp64Flags);
}

static void memory_and_queue_properties(const ze_env_t *env) {
    uint32_t n = 0;
    CHECK(zeDeviceGetMemoryProperties(env->device, &n, NULL));
    printf("memory_count=%u\n", n);
    ze_device_memory_properties_t mem = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES, .pNext = NULL};
    CHECK(zeDeviceGetMemoryProperties(env->device, &n, &mem));
    printf("memory_total=%llu\n", (unsigned long long)mem.totalSize);
    n = 0;
    CHECK(zeDeviceGetCommandQueueGroupProperties(env->device, &n, NULL));
    printf("queue_groups=%u\n", n);
    ze_command_queue_group_properties_t group = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES, .pNext = NULL};
    CHECK(zeDeviceGetCommandQueueGroupProperties(env->device, &n, &group));
    printf("queue_group_compute=%d\n",
           (group.flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) != 0);
    printf("queue_group_copy=%d\n", (group.flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY) != 0);
    printf("queue_group_queues=%u\n", group.numQueues);
}

int main(void) {
    ze_env_t env = ze_setup();
    driver_properties(&env);
    device_properties(&env);
    compute_properties(&env);
    module_properties(&env);
    memory_and_queue_properties(&env);
    CHECK(zeContextDestroy(env.context));
    printf("ok\n");
    return 0;
}
