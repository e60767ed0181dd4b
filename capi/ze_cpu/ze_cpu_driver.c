/* Initialisation, driver, device and context of the tinytc CPU Level Zero driver.
 *
 * zeInit finds the OpenCL runtime (see find_runtime), picks the first Intel CPU OpenCL device,
 * creates the process's one OpenCL context and looks up the USM extension functions. The loader
 * calls our pfnInit once itself and the application's zeInit calls it again, so the work runs
 * once (pthread_once) and every call returns the same result. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ze_cpu.h"

/* Device numbers that make tinytc's Intel core info work (pitfall 10): a CPU has no EUs, but
 * tinytc derives work-group limits from threads per EU and EUs per subslice. */
#define THREADS_PER_EU 16
#define EUS_PER_SUBSLICE 8
#define EU_SIMD_WIDTH 16
/* Largest pattern clEnqueueMemFillINTEL takes. */
#define MAX_FILL_PATTERN 128
/* Digest of the driver's sources and build flags, set by build.py (see driver_version). */
#ifndef ZE_CPU_BUILD_DIGEST
#define ZE_CPU_BUILD_DIGEST 0u
#endif

/* Folder written next to the library by build.py, holding an .icd file for libintelocl.so. */
#define VENDORS_DIR_NAME "ze_tinytc_cpu_vendors"

ze_cpu_driver_t ze_cpu_the_driver;
ze_cpu_device_t ze_cpu_the_device;
pthread_mutex_t ze_cpu_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static ze_result_t init_result = ZE_RESULT_ERROR_UNINITIALIZED;

/* ---- helpers shared by all files -------------------------------------------------------------- */

ze_result_t ze_cpu_result_from_cl(cl_int err) {
    switch (err) {
    case CL_SUCCESS: return ZE_RESULT_SUCCESS;
    case CL_OUT_OF_HOST_MEMORY: return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    case CL_OUT_OF_RESOURCES:
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    case CL_INVALID_BUFFER_SIZE: return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    case CL_INVALID_ARG_INDEX: return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    case CL_INVALID_ARG_SIZE: return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    case CL_INVALID_KERNEL_NAME: return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    case CL_INVALID_WORK_GROUP_SIZE:
    case CL_INVALID_WORK_ITEM_SIZE: return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    case CL_INVALID_GLOBAL_WORK_SIZE: return ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION;
    case CL_BUILD_PROGRAM_FAILURE:
    case CL_COMPILE_PROGRAM_FAILURE:
    case CL_LINK_PROGRAM_FAILURE:
    case CL_INVALID_PROGRAM: return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    case CL_INVALID_BINARY: return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    case CL_DEVICE_NOT_FOUND:
    case CL_DEVICE_NOT_AVAILABLE: return ZE_RESULT_ERROR_DEVICE_LOST;
    case CL_INVALID_OPERATION: return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    default: return err < 0 ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_UNKNOWN;
    }
}

ze_result_t ze_cpu_copy_string(const char *text, size_t *size, char *out) {
    CHECK_POINTER(size);
    size_t needed = strlen(text) + 1;
    if (out == NULL) {
        *size = needed;
        return ZE_RESULT_SUCCESS;
    }
    if (*size == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    size_t n = needed < *size ? needed : *size;
    memcpy(out, text, n - 1);
    out[n - 1] = '\0';
    *size = n;
    return ZE_RESULT_SUCCESS;
}

char *ze_cpu_strdup(const char *text) {
    size_t n = strlen(text) + 1;
    char *copy = malloc(n);
    if (copy != NULL) memcpy(copy, text, n);
    return copy;
}

/* ---- initialisation --------------------------------------------------------------------------- */

/* The ICD loader reads OCL_ICD_VENDORS at the process's first clGetPlatformIDs. The PyPI runtime
 * ships an unusable .icd file, so unless the user chose a vendors folder, point the loader at the
 * one build.py wrote next to this library (found through dladdr on our own code). */
static void find_runtime(void) {
    if (getenv("OCL_ICD_VENDORS") != NULL) return;
    Dl_info info;
    if (dladdr((void *)find_runtime, &info) == 0 || info.dli_fname == NULL) return;
    char path[PATH_MAX];
    if (realpath(info.dli_fname, path) == NULL) return;
    char folder[PATH_MAX];
    int n = snprintf(folder, sizeof folder, "%s/%s", dirname(path), VENDORS_DIR_NAME);
    if (n <= 0 || (size_t)n >= sizeof folder) return;
    setenv("OCL_ICD_VENDORS", folder, 0);
}

static bool is_intel_cpu_platform(cl_platform_id platform) {
    char name[256] = "";
    if (clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name - 1, name, NULL) != CL_SUCCESS)
        return false;
    return strstr(name, "Intel") != NULL;
}

static bool pick_device(void) {
    cl_uint count = 0;
    if (clGetPlatformIDs(0, NULL, &count) != CL_SUCCESS || count == 0) return false;
    cl_platform_id *platforms = calloc(count, sizeof *platforms);
    if (platforms == NULL || clGetPlatformIDs(count, platforms, NULL) != CL_SUCCESS) {
        free(platforms);
        return false;
    }
    bool found = false;
    for (cl_uint i = 0; i < count && !found; ++i) {
        cl_device_id device;
        if (!is_intel_cpu_platform(platforms[i])) continue;
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_CPU, 1, &device, NULL) != CL_SUCCESS)
            continue;
        ze_cpu_the_driver.platform = platforms[i];
        ze_cpu_the_device.id = device;
        found = true;
    }
    free(platforms);
    return found;
}

static bool lookup_usm(void) {
    cl_platform_id p = ze_cpu_the_driver.platform;
    ze_cpu_usm_fns_t *u = &ze_cpu_the_device.usm;
#define LOOKUP(field, name) u->field = (name##_fn)clGetExtensionFunctionAddressForPlatform(p, #name)
    LOOKUP(host_alloc, clHostMemAllocINTEL);
    LOOKUP(device_alloc, clDeviceMemAllocINTEL);
    LOOKUP(shared_alloc, clSharedMemAllocINTEL);
    LOOKUP(blocking_free, clMemBlockingFreeINTEL);
    LOOKUP(alloc_info, clGetMemAllocInfoINTEL);
    LOOKUP(set_arg_pointer, clSetKernelArgMemPointerINTEL);
    LOOKUP(memcpy, clEnqueueMemcpyINTEL);
    LOOKUP(memfill, clEnqueueMemFillINTEL);
#undef LOOKUP
    return u->host_alloc && u->device_alloc && u->shared_alloc && u->blocking_free &&
           u->alloc_info && u->set_arg_pointer && u->memcpy && u->memfill;
}

static bool has_extension(const char *extensions, const char *name) {
    size_t n = strlen(name);
    for (const char *p = strstr(extensions, name); p != NULL; p = strstr(p + 1, name)) {
        bool starts = p == extensions || p[-1] == ' ';
        bool ends = p[n] == '\0' || p[n] == ' ';
        if (starts && ends) return true;
    }
    return false;
}

static void query_device(void) {
    ze_cpu_device_t *d = &ze_cpu_the_device;
    cl_device_id id = d->id;
    clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof d->name - 1, d->name, NULL);
    clGetDeviceInfo(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof d->compute_units, &d->compute_units,
                    NULL);
    clGetDeviceInfo(id, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof d->clock_mhz, &d->clock_mhz, NULL);
    clGetDeviceInfo(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d->max_alloc, &d->max_alloc, NULL);
    clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof d->global_mem, &d->global_mem, NULL);
    clGetDeviceInfo(id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof d->local_mem, &d->local_mem, NULL);
    clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_wg_size, &d->max_wg_size,
                    NULL);
    clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof d->max_wg_sizes, d->max_wg_sizes,
                    NULL);

    size_t sizes[64];
    size_t bytes = 0;
    if (clGetDeviceInfo(id, CL_DEVICE_SUB_GROUP_SIZES_INTEL, sizeof sizes, sizes, &bytes) ==
        CL_SUCCESS) {
        size_t n = bytes / sizeof sizes[0];
        for (size_t i = 0; i < n && d->num_subgroup_sizes < ZE_SUBGROUPSIZE_COUNT; ++i)
            d->subgroup_sizes[d->num_subgroup_sizes++] = (uint32_t)sizes[i];
    }

    size_t ext_size = 0;
    clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, 0, NULL, &ext_size);
    char *ext = calloc(ext_size + 1, 1);
    if (ext != NULL && clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, ext_size, ext, NULL) == 0) {
        d->fp16 = has_extension(ext, "cl_khr_fp16");
        d->fp64 = has_extension(ext, "cl_khr_fp64");
        d->int64_atomics = has_extension(ext, "cl_khr_int64_base_atomics");
        d->float_atomics = has_extension(ext, "cl_ext_float_atomics");
    }
    free(ext);
}

/* The reported driverVersion: FNV-1a over this build's digest and the OpenCL runtime's
 * CL_DRIVER_VERSION. Native binaries (zeModuleGetNativeBinary) depend on both, and kernel caches
 * key them by the driver version, so a rebuilt driver or another runtime must not reuse them. */
static uint32_t driver_version(cl_device_id id) {
    char runtime[256] = {0};
    clGetDeviceInfo(id, CL_DRIVER_VERSION, sizeof runtime - 1, runtime, NULL);
    uint32_t hash = 2166136261u;
    for (int shift = 0; shift < 32; shift += 8) {
        hash = (hash ^ ((ZE_CPU_BUILD_DIGEST >> shift) & 0xFFu)) * 16777619u;
    }
    for (const char *c = runtime; *c; ++c) {
        hash = (hash ^ (uint8_t)*c) * 16777619u;
    }
    return hash;
}

static void initialise(void) {
    find_runtime();
    if (!pick_device() || !lookup_usm()) return;
    cl_int err;
    ze_cpu_the_device.context = clCreateContext(NULL, 1, &ze_cpu_the_device.id, NULL, NULL, &err);
    if (err != CL_SUCCESS) return;
    query_device();
    ze_cpu_the_driver.version = driver_version(ze_cpu_the_device.id);
    ze_cpu_the_driver.magic = MAGIC_DRIVER;
    ze_cpu_the_device.magic = MAGIC_DEVICE;
    init_result = ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_init(ze_init_flags_t flags) {
    if (flags & ~(ze_init_flags_t)(ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY))
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    /* We stand in for a GPU in tests, so GPU_ONLY keeps us; a VPU we are not. */
    if (flags == ZE_INIT_FLAG_VPU_ONLY) return ZE_RESULT_ERROR_UNINITIALIZED;
    pthread_once(&init_once, initialise);
    return init_result;
}

/* ---- driver ----------------------------------------------------------------------------------- */

static ze_cpu_driver_t *as_driver(ze_driver_handle_t h) { return (ze_cpu_driver_t *)h; }
static ze_cpu_device_t *as_device(ze_device_handle_t h) { return (ze_cpu_device_t *)h; }

/* The Level Zero count protocol for a list of one element. */
static ze_result_t one_handle(uint32_t *count, void **out, void *handle) {
    CHECK_POINTER(count);
    if (*count == 0 || out == NULL) {
        *count = 1;
        return ZE_RESULT_SUCCESS;
    }
    out[0] = handle;
    *count = 1;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_driver_get(uint32_t *count, ze_driver_handle_t *drivers) {
    if (init_result != ZE_RESULT_SUCCESS) return ZE_RESULT_ERROR_UNINITIALIZED;
    return one_handle(count, (void **)drivers, &ze_cpu_the_driver);
}

ze_result_t ze_cpu_driver_get_api_version(ze_driver_handle_t h, ze_api_version_t *version) {
    CHECK_HANDLE(as_driver(h), MAGIC_DRIVER);
    CHECK_POINTER(version);
    *version = ZE_API_VERSION_CURRENT;
    return ZE_RESULT_SUCCESS;
}

static void fill_uuid(uint8_t *id, size_t n, const char *tag) {
    memset(id, 0, n);
    memcpy(id, tag, strlen(tag) < n ? strlen(tag) : n);
}

ze_result_t ze_cpu_driver_get_properties(ze_driver_handle_t h, ze_driver_properties_t *props) {
    CHECK_HANDLE(as_driver(h), MAGIC_DRIVER);
    CHECK_POINTER(props);
    fill_uuid(props->uuid.id, ZE_MAX_DRIVER_UUID_SIZE, "tinytc-cpu-drv");
    props->driverVersion = ze_cpu_the_driver.version;
    return ZE_RESULT_SUCCESS;
}

static const struct {
    const char *name;
    uint32_t version;
} extensions[] = {
    {ZE_FLOAT_ATOMICS_EXT_NAME, ZE_FLOAT_ATOMICS_EXT_VERSION_CURRENT},
    {"ZE_extension_device_ip_version", ZE_MAKE_VERSION(1, 0)},
};
#define NUM_EXTENSIONS (sizeof extensions / sizeof extensions[0])

ze_result_t ze_cpu_driver_get_extension_properties(ze_driver_handle_t h, uint32_t *count,
                                                   ze_driver_extension_properties_t *props) {
    CHECK_HANDLE(as_driver(h), MAGIC_DRIVER);
    CHECK_POINTER(count);
    if (*count == 0 || props == NULL) {
        *count = NUM_EXTENSIONS;
        return ZE_RESULT_SUCCESS;
    }
    uint32_t n = *count < NUM_EXTENSIONS ? *count : NUM_EXTENSIONS;
    for (uint32_t i = 0; i < n; ++i) {
        snprintf(props[i].name, ZE_MAX_EXTENSION_NAME, "%s", extensions[i].name);
        props[i].version = extensions[i].version;
    }
    *count = n;
    return ZE_RESULT_SUCCESS;
}

/* ---- device ----------------------------------------------------------------------------------- */

ze_result_t ze_cpu_device_get(ze_driver_handle_t h, uint32_t *count, ze_device_handle_t *devices) {
    CHECK_HANDLE(as_driver(h), MAGIC_DRIVER);
    return one_handle(count, (void **)devices, &ze_cpu_the_device);
}

ze_result_t ze_cpu_device_get_sub_devices(ze_device_handle_t h, uint32_t *count,
                                          ze_device_handle_t *devices) {
    (void)devices;
    CHECK_HANDLE(as_device(h), MAGIC_DEVICE);
    CHECK_POINTER(count);
    *count = 0;
    return ZE_RESULT_SUCCESS;
}

static void fill_ip_version(void *chain) {
    for (ze_base_properties_t *p = chain; p != NULL; p = p->pNext) {
        if (p->stype != ZE_CPU_STRUCTURE_TYPE_DEVICE_IP_VERSION_EXT) continue;
        /* 0: not an Intel GPU architecture; tinytc then uses its generic core info. */
        ((ze_cpu_device_ip_version_ext_t *)p)->ipVersion = 0;
    }
}

ze_result_t ze_cpu_device_get_properties(ze_device_handle_t h, ze_device_properties_t *props) {
    ze_cpu_device_t *d = as_device(h);
    CHECK_HANDLE(d, MAGIC_DEVICE);
    CHECK_POINTER(props);
    props->type = ZE_DEVICE_TYPE_CPU;
    props->vendorId = 0x8086;
    props->deviceId = 0;
    props->flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
    props->subdeviceId = 0;
    props->coreClockRate = d->clock_mhz;
    props->maxMemAllocSize = d->max_alloc;
    props->maxHardwareContexts = 1;
    props->maxCommandQueuePriority = 0;
    props->numThreadsPerEU = THREADS_PER_EU;
    props->physicalEUSimdWidth = EU_SIMD_WIDTH;
    props->numEUsPerSubslice = EUS_PER_SUBSLICE;
    /* EU count (slices x subslices x EUs) about the number of compute units, at least one. */
    props->numSubslicesPerSlice = (d->compute_units + EUS_PER_SUBSLICE - 1) / EUS_PER_SUBSLICE;
    if (props->numSubslicesPerSlice == 0) props->numSubslicesPerSlice = 1;
    props->numSlices = 1;
    /* ns per tick for the 1.0 struct, ticks per second for the 1.2 one. */
    props->timerResolution = props->stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 ? 1000000000u
                                                                                     : 1u;
    props->timestampValidBits = 64;
    props->kernelTimestampValidBits = 64;
    fill_uuid(props->uuid.id, ZE_MAX_DEVICE_UUID_SIZE, "tinytc-cpu-dev");
    snprintf(props->name, ZE_MAX_DEVICE_NAME, "%s", d->name);
    fill_ip_version(props->pNext);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_device_get_compute_properties(ze_device_handle_t h,
                                                 ze_device_compute_properties_t *props) {
    ze_cpu_device_t *d = as_device(h);
    CHECK_HANDLE(d, MAGIC_DEVICE);
    CHECK_POINTER(props);
    props->maxTotalGroupSize = (uint32_t)d->max_wg_size;
    props->maxGroupSizeX = (uint32_t)d->max_wg_sizes[0];
    props->maxGroupSizeY = (uint32_t)d->max_wg_sizes[1];
    props->maxGroupSizeZ = (uint32_t)d->max_wg_sizes[2];
    props->maxGroupCountX = UINT32_MAX;
    props->maxGroupCountY = UINT32_MAX;
    props->maxGroupCountZ = UINT32_MAX;
    props->maxSharedLocalMemory = (uint32_t)d->local_mem;
    props->numSubGroupSizes = d->num_subgroup_sizes;
    memset(props->subGroupSizes, 0, sizeof props->subGroupSizes);
    memcpy(props->subGroupSizes, d->subgroup_sizes, d->num_subgroup_sizes * sizeof(uint32_t));
    return ZE_RESULT_SUCCESS;
}

static ze_device_fp_flags_t fp_flags(cl_device_info what) {
    cl_device_fp_config config = 0;
    if (clGetDeviceInfo(ze_cpu_the_device.id, what, sizeof config, &config, NULL) != CL_SUCCESS)
        return 0;
    static const struct {
        cl_device_fp_config cl;
        ze_device_fp_flags_t ze;
    } map[] = {
        {CL_FP_DENORM, ZE_DEVICE_FP_FLAG_DENORM},
        {CL_FP_INF_NAN, ZE_DEVICE_FP_FLAG_INF_NAN},
        {CL_FP_ROUND_TO_NEAREST, ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST},
        {CL_FP_ROUND_TO_ZERO, ZE_DEVICE_FP_FLAG_ROUND_TO_ZERO},
        {CL_FP_ROUND_TO_INF, ZE_DEVICE_FP_FLAG_ROUND_TO_INF},
        {CL_FP_FMA, ZE_DEVICE_FP_FLAG_FMA},
        {CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, ZE_DEVICE_FP_FLAG_ROUNDED_DIVIDE_SQRT},
        {CL_FP_SOFT_FLOAT, ZE_DEVICE_FP_FLAG_SOFT_FLOAT},
    };
    ze_device_fp_flags_t flags = 0;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; ++i)
        if (config & map[i].cl) flags |= map[i].ze;
    return flags;
}

/* Highest "SPIR-V_x.y" in CL_DEVICE_IL_VERSION; 1.0 if none is readable. */
static uint32_t spirv_version(void) {
    char il[512] = "";
    uint32_t best = ZE_MAKE_VERSION(1, 0);
    if (clGetDeviceInfo(ze_cpu_the_device.id, CL_DEVICE_IL_VERSION, sizeof il - 1, il, NULL) != 0)
        return best;
    for (const char *p = strstr(il, "SPIR-V_"); p != NULL; p = strstr(p + 1, "SPIR-V_")) {
        unsigned major = 0, minor = 0;
        if (sscanf(p, "SPIR-V_%u.%u", &major, &minor) != 2) continue;
        if (ZE_MAKE_VERSION(major, minor) > best) best = ZE_MAKE_VERSION(major, minor);
    }
    return best;
}

/* What the CPU runtime's float atomics do: add and min/max on f32 and f64 in global and local
 * memory. It reports cl_ext_float_atomics but cannot link f16 atomic add, so f16 claims nothing. */
static void fill_float_atomics(void *chain) {
    const ze_device_fp_atomic_ext_flags_t all =
        ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_LOAD_STORE | ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_ADD |
        ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_MIN_MAX | ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_LOAD_STORE |
        ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_ADD | ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_MIN_MAX;
    for (ze_base_properties_t *p = chain; p != NULL; p = p->pNext) {
        if (p->stype != ZE_STRUCTURE_TYPE_FLOAT_ATOMIC_EXT_PROPERTIES) continue;
        ze_float_atomic_ext_properties_t *fa = (ze_float_atomic_ext_properties_t *)p;
        bool have = ze_cpu_the_device.float_atomics;
        fa->fp16Flags = 0;
        fa->fp32Flags = have ? all : 0;
        fa->fp64Flags = have && ze_cpu_the_device.fp64 ? all : 0;
    }
}

ze_result_t ze_cpu_device_get_module_properties(ze_device_handle_t h,
                                                ze_device_module_properties_t *props) {
    ze_cpu_device_t *d = as_device(h);
    CHECK_HANDLE(d, MAGIC_DEVICE);
    CHECK_POINTER(props);
    props->spirvVersionSupported = spirv_version();
    props->flags = (d->fp16 ? ZE_DEVICE_MODULE_FLAG_FP16 : 0) |
                   (d->fp64 ? ZE_DEVICE_MODULE_FLAG_FP64 : 0) |
                   (d->int64_atomics ? ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS : 0);
    props->fp16flags = d->fp16 ? fp_flags(CL_DEVICE_HALF_FP_CONFIG) : 0;
    props->fp32flags = fp_flags(CL_DEVICE_SINGLE_FP_CONFIG);
    props->fp64flags = d->fp64 ? fp_flags(CL_DEVICE_DOUBLE_FP_CONFIG) : 0;
    size_t max_param = 0;
    clGetDeviceInfo(d->id, CL_DEVICE_MAX_PARAMETER_SIZE, sizeof max_param, &max_param, NULL);
    props->maxArgumentsSize = (uint32_t)max_param;
    size_t printf_size = 0;
    clGetDeviceInfo(d->id, CL_DEVICE_PRINTF_BUFFER_SIZE, sizeof printf_size, &printf_size, NULL);
    props->printfBufferSize = (uint32_t)printf_size;
    fill_uuid(props->nativeKernelSupported.id, ZE_MAX_NATIVE_KERNEL_UUID_SIZE, "tinytc-cpu-bin1");
    fill_float_atomics(props->pNext);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_device_get_memory_properties(ze_device_handle_t h, uint32_t *count,
                                                ze_device_memory_properties_t *props) {
    ze_cpu_device_t *d = as_device(h);
    CHECK_HANDLE(d, MAGIC_DEVICE);
    CHECK_POINTER(count);
    if (*count == 0 || props == NULL) {
        *count = 1;
        return ZE_RESULT_SUCCESS;
    }
    props[0].flags = 0;
    props[0].maxClockRate = 0;
    props[0].maxBusWidth = 0;
    props[0].totalSize = d->global_mem;
    snprintf(props[0].name, ZE_MAX_DEVICE_NAME, "%s", "host memory");
    *count = 1;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_device_get_queue_group_properties(ze_device_handle_t h, uint32_t *count,
                                                     ze_command_queue_group_properties_t *props) {
    CHECK_HANDLE(as_device(h), MAGIC_DEVICE);
    CHECK_POINTER(count);
    if (*count == 0 || props == NULL) {
        *count = 1;
        return ZE_RESULT_SUCCESS;
    }
    props[0].flags =
        ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    props[0].maxMemoryFillPatternSize = MAX_FILL_PATTERN;
    props[0].numQueues = 1;
    *count = 1;
    return ZE_RESULT_SUCCESS;
}

/* ---- context ---------------------------------------------------------------------------------- */

ze_result_t ze_cpu_context_create(ze_driver_handle_t h, const ze_context_desc_t *desc,
                                  ze_context_handle_t *out) {
    CHECK_HANDLE(as_driver(h), MAGIC_DRIVER);
    CHECK_POINTER(desc);
    CHECK_POINTER(out);
    if (desc->flags & ~(ze_context_flags_t)ZE_CONTEXT_FLAG_TBD)
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    ze_cpu_context_t *c = calloc(1, sizeof *c);
    if (c == NULL) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    c->magic = MAGIC_CONTEXT;
    *out = (ze_context_handle_t)c;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_context_destroy(ze_context_handle_t h) {
    ze_cpu_context_t *c = (ze_cpu_context_t *)h;
    CHECK_HANDLE(c, MAGIC_CONTEXT);
    c->magic = MAGIC_DEAD;
    free(c);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_context_get_status(ze_context_handle_t h) {
    CHECK_HANDLE((ze_cpu_context_t *)h, MAGIC_CONTEXT);
    return ZE_RESULT_SUCCESS;
}
