/* Private header of the tinytc CPU Level Zero driver (libze_tinytc_cpu.so).
 *
 * The driver is loaded by the Level Zero loader (ZE_ENABLE_ALT_DRIVERS) and forwards every call
 * to Intel's CPU OpenCL runtime. The only public symbols are the ze/zet/zes "Get...ProcAddrTable"
 * getters (tables.c); every API implementation is a hidden function named ze_cpu_<object>_<verb>,
 * never a ze* name (a ze* symbol would shadow the loader's own function, see README.md).
 *
 * Object model: every handle we hand out points to one of the structs below; each starts with a
 * magic number so that a handle of the wrong kind (or garbage the loader passes through) is
 * rejected with ZE_RESULT_ERROR_INVALID_NULL_HANDLE instead of crashing. There is one driver and
 * one device (both static), and one OpenCL context shared by all Level Zero contexts, so that
 * USM pointers, events and kernels can be mixed freely. */
#ifndef ZE_CPU_H
#define ZE_CPU_H

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZE_CPU_HIDDEN __attribute__((visibility("hidden")))

/* Not in the 1.4 headers (pitfall 8): the device IP-version extension struct. */
#define ZE_CPU_STRUCTURE_TYPE_DEVICE_IP_VERSION_EXT ((ze_structure_type_t)0x1000f)
typedef struct ze_cpu_device_ip_version_ext {
    ze_structure_type_t stype;
    const void *pNext;
    uint32_t ipVersion;
} ze_cpu_device_ip_version_ext_t;

/* First field of every object; handle checks compare it. */
#define MAGIC_DRIVER 0x7a647276u
#define MAGIC_DEVICE 0x7a646576u
#define MAGIC_CONTEXT 0x7a637478u
#define MAGIC_QUEUE 0x7a717565u
#define MAGIC_LIST 0x7a6c7374u
#define MAGIC_EVENT_POOL 0x7a65706cu
#define MAGIC_EVENT 0x7a657674u
#define MAGIC_FENCE 0x7a666e63u
#define MAGIC_MODULE 0x7a6d6f64u
#define MAGIC_BUILD_LOG 0x7a626c67u
#define MAGIC_KERNEL 0x7a6b726eu
#define MAGIC_DEAD 0xdeadbeefu /* written on destroy, so a second destroy is caught */

/* ---- OpenCL state (ze_cpu_driver.c) ----------------------------------------------------------- */

typedef struct ze_cpu_usm_fns {
    clHostMemAllocINTEL_fn host_alloc;
    clDeviceMemAllocINTEL_fn device_alloc;
    clSharedMemAllocINTEL_fn shared_alloc;
    clMemBlockingFreeINTEL_fn blocking_free;
    clGetMemAllocInfoINTEL_fn alloc_info;
    clSetKernelArgMemPointerINTEL_fn set_arg_pointer;
    clEnqueueMemcpyINTEL_fn memcpy;
    clEnqueueMemFillINTEL_fn memfill;
} ze_cpu_usm_fns_t;

typedef struct ze_cpu_driver {
    uint32_t magic;
    cl_platform_id platform;
    uint32_t version; /* driverVersion: this build and the OpenCL runtime (ze_cpu_driver.c) */
} ze_cpu_driver_t;

typedef struct ze_cpu_device {
    uint32_t magic;
    cl_device_id id;
    cl_context context; /* the one OpenCL context of the process */
    ze_cpu_usm_fns_t usm;
    char name[ZE_MAX_DEVICE_NAME];
    cl_uint compute_units;
    cl_uint clock_mhz;
    cl_ulong max_alloc;
    cl_ulong global_mem;
    cl_ulong local_mem;
    size_t max_wg_size;
    size_t max_wg_sizes[3];
    uint32_t subgroup_sizes[ZE_SUBGROUPSIZE_COUNT];
    uint32_t num_subgroup_sizes;
    bool fp16, fp64, int64_atomics, float_atomics;
} ze_cpu_device_t;

/* The driver and device singletons; valid after a successful ze_cpu_init. */
ZE_CPU_HIDDEN extern ze_cpu_driver_t ze_cpu_the_driver;
ZE_CPU_HIDDEN extern ze_cpu_device_t ze_cpu_the_device;
/* Serialises event state changes (host signal/reset vs. enqueue-time bookkeeping). */
ZE_CPU_HIDDEN extern pthread_mutex_t ze_cpu_lock;

typedef struct ze_cpu_context {
    uint32_t magic;
} ze_cpu_context_t;

/* ---- modules and kernels (module.c, spirv.c) -------------------------------------------------- */

/* How a kernel argument reaches OpenCL (pitfall 5). */
typedef enum ze_cpu_arg_kind {
    ARG_VALUE = 0,   /* bytes, clSetKernelArg */
    ARG_POINTER = 1, /* USM pointer, clSetKernelArgMemPointerINTEL */
    ARG_LOCAL = 2,   /* work-group memory: only a size, clSetKernelArg(size, NULL) */
} ze_cpu_arg_kind_t;

typedef struct ze_cpu_param {
    uint32_t kind; /* ze_cpu_arg_kind_t */
    uint32_t size; /* bytes of a by-value argument; 0 = unknown (not checked) */
} ze_cpu_param_t;

typedef struct ze_cpu_kernel_info {
    char *name;
    uint32_t subgroup_size; /* SPIR-V execution mode SubgroupSize; 0 if none */
    uint32_t num_params;
    ze_cpu_param_t *params;
} ze_cpu_kernel_info_t;

typedef struct ze_cpu_kernel_table {
    uint32_t count;
    ze_cpu_kernel_info_t *kernels;
} ze_cpu_kernel_table_t;

/* Checks a SPIR-V binary's structure (header, every instruction's word count) so the OpenCL
 * runtime never sees bytes that could make it loop (pitfall 3), and reads the parameter kinds of
 * every kernel entry point. `words` must be in host byte order. On failure returns a result and
 * writes a message to `why` (size `why_size`). */
ZE_CPU_HIDDEN ze_result_t ze_cpu_spirv_scan(const uint32_t *words, size_t num_words,
                                            ze_cpu_kernel_table_t *table, char *why,
                                            size_t why_size);
ZE_CPU_HIDDEN void ze_cpu_kernel_table_free(ze_cpu_kernel_table_t *table);

typedef struct ze_cpu_module {
    uint32_t magic;
    cl_program program;
    ze_cpu_kernel_table_t table;
    const char **names; /* zeModuleGetKernelNames: points into table */
} ze_cpu_module_t;

typedef struct ze_cpu_build_log {
    uint32_t magic;
    char *text;
} ze_cpu_build_log_t;

typedef struct ze_cpu_kernel {
    uint32_t magic;
    cl_kernel kernel;
    char *name;
    uint32_t num_params;
    ze_cpu_param_t *params;
    bool *arg_set;
    uint32_t group_size[3];
    uint32_t required_size[3]; /* 0 0 0 if the kernel has no required work-group size */
    uint32_t subgroup_size;    /* required subgroup size from the SPIR-V; 0 if none */
} ze_cpu_kernel_t;

/* A kernel object that holds the argument values of `k` right now (pitfall 6). */
ZE_CPU_HIDDEN ze_result_t ze_cpu_kernel_snapshot(ze_cpu_kernel_t *k, cl_kernel *out);
/* Whether every argument was set (ZE_RESULT_ERROR_INVALID_ARGUMENT if not). */
ZE_CPU_HIDDEN ze_result_t ze_cpu_kernel_ready(const ze_cpu_kernel_t *k);
/* Enables indirect USM access (a group argument is a pointer to pointers). */
ZE_CPU_HIDDEN void ze_cpu_kernel_allow_indirect(cl_kernel kernel);

/* ---- queues, lists, events, fences (commands.c) ----------------------------------------------- */

typedef struct ze_cpu_event_pool {
    uint32_t magic;
    uint32_t count;
} ze_cpu_event_pool_t;

/* A Level Zero event can be signalled, waited on and reset many times; an OpenCL event fires
 * once. `signal` is the OpenCL event that completes when this event is signalled: the event of
 * the command that signals it, or a user event created when someone had to wait for it before
 * any signal was appended (completed later by a host signal or the signalling command). */
typedef struct ze_cpu_event {
    uint32_t magic;
    bool host_signalled;
    cl_event signal;   /* NULL: no signal pending */
    bool signal_is_user;
} ze_cpu_event_t;

typedef struct ze_cpu_queue {
    uint32_t magic;
    cl_command_queue queue;
    bool synchronous;
    cl_event last; /* marker after the last execution, for Synchronize */
} ze_cpu_queue_t;

typedef struct ze_cpu_fence {
    uint32_t magic;
    ze_cpu_queue_t *queue;
    bool signalled;
    cl_event marker;
} ze_cpu_fence_t;

typedef enum ze_cpu_command_kind {
    CMD_LAUNCH,
    CMD_COPY,
    CMD_FILL,
    CMD_BARRIER,
    CMD_EVENT_RESET,
} ze_cpu_command_kind_t;

typedef struct ze_cpu_command {
    ze_cpu_command_kind_t kind;
    ze_cpu_event_t *signal;
    uint32_t num_waits;
    ze_cpu_event_t **waits;
    union {
        struct {
            cl_kernel kernel; /* a snapshot owned by the command */
            size_t global[3], local[3];
        } launch;
        struct {
            void *dst;
            const void *src;
            size_t size;
        } copy;
        struct {
            void *dst;
            unsigned char pattern[128];
            size_t pattern_size, size;
        } fill;
    } u;
} ze_cpu_command_t;

typedef struct ze_cpu_list {
    uint32_t magic;
    bool immediate;
    bool closed;
    bool synchronous; /* immediate lists only */
    cl_command_queue queue; /* immediate lists only */
    uint32_t count, capacity;
    ze_cpu_command_t *commands; /* regular lists only */
} ze_cpu_list_t;

/* ---- helpers ---------------------------------------------------------------------------------- */

ZE_CPU_HIDDEN ze_result_t ze_cpu_result_from_cl(cl_int err);
/* Copies a NUL-terminated string with the Level Zero size protocol (size query when out is
 * NULL; otherwise truncates to *size bytes including the terminator). */
ZE_CPU_HIDDEN ze_result_t ze_cpu_copy_string(const char *text, size_t *size, char *out);
ZE_CPU_HIDDEN char *ze_cpu_strdup(const char *text);

#define CHECK_HANDLE(ptr, MAGIC)                                                                   \
    do {                                                                                           \
        if ((ptr) == NULL || (ptr)->magic != (MAGIC)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE; \
    } while (0)
#define CHECK_POINTER(ptr)                                                                         \
    do {                                                                                           \
        if ((ptr) == NULL) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;                           \
    } while (0)

/* ---- API implementations, wired into the tables by tables.c ----------------------------------- */

/* ze_cpu_driver.c */
ZE_CPU_HIDDEN ze_result_t ze_cpu_init(ze_init_flags_t flags);
ZE_CPU_HIDDEN ze_result_t ze_cpu_driver_get(uint32_t *count, ze_driver_handle_t *drivers);
ZE_CPU_HIDDEN ze_result_t ze_cpu_driver_get_api_version(ze_driver_handle_t, ze_api_version_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_driver_get_properties(ze_driver_handle_t,
                                                       ze_driver_properties_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_driver_get_extension_properties(
    ze_driver_handle_t, uint32_t *, ze_driver_extension_properties_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_device_get(ze_driver_handle_t, uint32_t *, ze_device_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_device_get_sub_devices(ze_device_handle_t, uint32_t *,
                                                        ze_device_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_device_get_properties(ze_device_handle_t,
                                                       ze_device_properties_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_device_get_compute_properties(ze_device_handle_t,
                                                               ze_device_compute_properties_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_device_get_module_properties(ze_device_handle_t,
                                                              ze_device_module_properties_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_device_get_memory_properties(ze_device_handle_t, uint32_t *,
                                                              ze_device_memory_properties_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_device_get_queue_group_properties(
    ze_device_handle_t, uint32_t *, ze_command_queue_group_properties_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_context_create(ze_driver_handle_t, const ze_context_desc_t *,
                                                ze_context_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_context_destroy(ze_context_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_context_get_status(ze_context_handle_t);

/* memory.c */
ZE_CPU_HIDDEN ze_result_t ze_cpu_mem_alloc_shared(ze_context_handle_t,
                                                  const ze_device_mem_alloc_desc_t *,
                                                  const ze_host_mem_alloc_desc_t *, size_t, size_t,
                                                  ze_device_handle_t, void **);
ZE_CPU_HIDDEN ze_result_t ze_cpu_mem_alloc_device(ze_context_handle_t,
                                                  const ze_device_mem_alloc_desc_t *, size_t,
                                                  size_t, ze_device_handle_t, void **);
ZE_CPU_HIDDEN ze_result_t ze_cpu_mem_alloc_host(ze_context_handle_t,
                                                const ze_host_mem_alloc_desc_t *, size_t, size_t,
                                                void **);
ZE_CPU_HIDDEN ze_result_t ze_cpu_mem_free(ze_context_handle_t, void *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_mem_get_alloc_properties(ze_context_handle_t, const void *,
                                                          ze_memory_allocation_properties_t *,
                                                          ze_device_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_mem_get_address_range(ze_context_handle_t, const void *, void **,
                                                       size_t *);

/* module.c */
ZE_CPU_HIDDEN ze_result_t ze_cpu_module_create(ze_context_handle_t, ze_device_handle_t,
                                               const ze_module_desc_t *, ze_module_handle_t *,
                                               ze_module_build_log_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_module_destroy(ze_module_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_module_get_native_binary(ze_module_handle_t, size_t *,
                                                          uint8_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_module_get_kernel_names(ze_module_handle_t, uint32_t *,
                                                         const char **);
ZE_CPU_HIDDEN ze_result_t ze_cpu_build_log_destroy(ze_module_build_log_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_build_log_get_string(ze_module_build_log_handle_t, size_t *,
                                                      char *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_kernel_create(ze_module_handle_t, const ze_kernel_desc_t *,
                                               ze_kernel_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_kernel_destroy(ze_kernel_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_kernel_set_group_size(ze_kernel_handle_t, uint32_t, uint32_t,
                                                       uint32_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_kernel_suggest_group_size(ze_kernel_handle_t, uint32_t, uint32_t,
                                                           uint32_t, uint32_t *, uint32_t *,
                                                           uint32_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_kernel_set_argument_value(ze_kernel_handle_t, uint32_t, size_t,
                                                           const void *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_kernel_set_indirect_access(ze_kernel_handle_t,
                                                            ze_kernel_indirect_access_flags_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_kernel_get_properties(ze_kernel_handle_t,
                                                       ze_kernel_properties_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_kernel_get_name(ze_kernel_handle_t, size_t *, char *);

/* commands.c */
ZE_CPU_HIDDEN ze_result_t ze_cpu_queue_create(ze_context_handle_t, ze_device_handle_t,
                                              const ze_command_queue_desc_t *,
                                              ze_command_queue_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_queue_destroy(ze_command_queue_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_queue_execute(ze_command_queue_handle_t, uint32_t,
                                               ze_command_list_handle_t *, ze_fence_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_queue_synchronize(ze_command_queue_handle_t, uint64_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_list_create(ze_context_handle_t, ze_device_handle_t,
                                             const ze_command_list_desc_t *,
                                             ze_command_list_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_list_create_immediate(ze_context_handle_t, ze_device_handle_t,
                                                       const ze_command_queue_desc_t *,
                                                       ze_command_list_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_list_destroy(ze_command_list_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_list_close(ze_command_list_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_list_reset(ze_command_list_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_list_append_barrier(ze_command_list_handle_t, ze_event_handle_t,
                                                     uint32_t, ze_event_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_list_append_memory_copy(ze_command_list_handle_t, void *,
                                                         const void *, size_t, ze_event_handle_t,
                                                         uint32_t, ze_event_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_list_append_memory_fill(ze_command_list_handle_t, void *,
                                                         const void *, size_t, size_t,
                                                         ze_event_handle_t, uint32_t,
                                                         ze_event_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_list_append_signal_event(ze_command_list_handle_t,
                                                          ze_event_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_list_append_wait_on_events(ze_command_list_handle_t, uint32_t,
                                                            ze_event_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_list_append_event_reset(ze_command_list_handle_t,
                                                         ze_event_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_list_append_launch_kernel(ze_command_list_handle_t,
                                                           ze_kernel_handle_t,
                                                           const ze_group_count_t *,
                                                           ze_event_handle_t, uint32_t,
                                                           ze_event_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_event_pool_create(ze_context_handle_t,
                                                   const ze_event_pool_desc_t *, uint32_t,
                                                   ze_device_handle_t *, ze_event_pool_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_event_pool_destroy(ze_event_pool_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_event_create(ze_event_pool_handle_t, const ze_event_desc_t *,
                                              ze_event_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_event_destroy(ze_event_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_event_host_signal(ze_event_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_event_host_synchronize(ze_event_handle_t, uint64_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_event_query_status(ze_event_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_event_host_reset(ze_event_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_fence_create(ze_command_queue_handle_t, const ze_fence_desc_t *,
                                              ze_fence_handle_t *);
ZE_CPU_HIDDEN ze_result_t ze_cpu_fence_destroy(ze_fence_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_fence_host_synchronize(ze_fence_handle_t, uint64_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_fence_query_status(ze_fence_handle_t);
ZE_CPU_HIDDEN ze_result_t ze_cpu_fence_reset(ze_fence_handle_t);

#endif
