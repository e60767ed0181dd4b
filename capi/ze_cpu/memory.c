/* Unified shared memory: zeMemAlloc{Shared,Device,Host} map one-to-one onto the
 * cl_intel_unified_shared_memory allocation functions; zeMemFree and the property queries use
 * the runtime's own bookkeeping (clGetMemAllocInfoINTEL), so there is none here. */
#include <stdlib.h>

#include "ze_cpu.h"

/* tinytc kernels assume 128-byte aligned base pointers (docs/design.md §B1.4); GPU drivers align at
 * least that much, so an allocation without an explicit alignment gets it here too. */
#define DEFAULT_ALIGNMENT 128

static ze_result_t check_request(ze_context_handle_t ctx, size_t size, size_t alignment,
                                 void **out) {
    CHECK_HANDLE((ze_cpu_context_t *)ctx, MAGIC_CONTEXT);
    CHECK_POINTER(out);
    *out = NULL;
    if (size == 0 || size > ze_cpu_the_device.max_alloc) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    if (alignment & (alignment - 1)) return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t check_device(ze_device_handle_t device, bool optional) {
    if (device == NULL && optional) return ZE_RESULT_SUCCESS;
    CHECK_HANDLE((ze_cpu_device_t *)device, MAGIC_DEVICE);
    return ZE_RESULT_SUCCESS;
}

static cl_uint alignment_of(size_t alignment) {
    return alignment > DEFAULT_ALIGNMENT ? (cl_uint)alignment : DEFAULT_ALIGNMENT;
}

static ze_result_t finish(void *ptr, cl_int err, void **out) {
    if (err != CL_SUCCESS || ptr == NULL) {
        if (err == CL_INVALID_VALUE) return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
        return err == CL_SUCCESS ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
                                 : ze_cpu_result_from_cl(err);
    }
    *out = ptr;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_mem_alloc_shared(ze_context_handle_t ctx,
                                    const ze_device_mem_alloc_desc_t *device_desc,
                                    const ze_host_mem_alloc_desc_t *host_desc, size_t size,
                                    size_t alignment, ze_device_handle_t device, void **out) {
    ze_result_t r = check_request(ctx, size, alignment, out);
    if (r != ZE_RESULT_SUCCESS) return r;
    CHECK_POINTER(device_desc);
    CHECK_POINTER(host_desc);
    if ((r = check_device(device, true)) != ZE_RESULT_SUCCESS) return r;
    cl_int err = CL_SUCCESS;
    ze_cpu_device_t *d = &ze_cpu_the_device;
    void *ptr = d->usm.shared_alloc(d->context, device ? d->id : NULL, NULL, size,
                                    alignment_of(alignment), &err);
    return finish(ptr, err, out);
}

ze_result_t ze_cpu_mem_alloc_device(ze_context_handle_t ctx,
                                    const ze_device_mem_alloc_desc_t *device_desc, size_t size,
                                    size_t alignment, ze_device_handle_t device, void **out) {
    ze_result_t r = check_request(ctx, size, alignment, out);
    if (r != ZE_RESULT_SUCCESS) return r;
    CHECK_POINTER(device_desc);
    if ((r = check_device(device, false)) != ZE_RESULT_SUCCESS) return r;
    cl_int err = CL_SUCCESS;
    ze_cpu_device_t *d = &ze_cpu_the_device;
    void *ptr =
        d->usm.device_alloc(d->context, d->id, NULL, size, alignment_of(alignment), &err);
    return finish(ptr, err, out);
}

ze_result_t ze_cpu_mem_alloc_host(ze_context_handle_t ctx, const ze_host_mem_alloc_desc_t *desc,
                                  size_t size, size_t alignment, void **out) {
    ze_result_t r = check_request(ctx, size, alignment, out);
    if (r != ZE_RESULT_SUCCESS) return r;
    CHECK_POINTER(desc);
    cl_int err = CL_SUCCESS;
    ze_cpu_device_t *d = &ze_cpu_the_device;
    void *ptr = d->usm.host_alloc(d->context, NULL, size, alignment_of(alignment), &err);
    return finish(ptr, err, out);
}

/* The base address of the allocation holding ptr, or NULL if ptr is not USM memory. */
static void *allocation_base(const void *ptr) {
    ze_cpu_device_t *d = &ze_cpu_the_device;
    void *base = NULL;
    if (d->usm.alloc_info(d->context, ptr, CL_MEM_ALLOC_BASE_PTR_INTEL, sizeof base, &base,
                          NULL) != CL_SUCCESS)
        return NULL;
    return base;
}

ze_result_t ze_cpu_mem_free(ze_context_handle_t ctx, void *ptr) {
    CHECK_HANDLE((ze_cpu_context_t *)ctx, MAGIC_CONTEXT);
    CHECK_POINTER(ptr);
    /* Only base pointers of our allocations: the runtime must never see anything else. */
    if (allocation_base(ptr) != ptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    ze_cpu_device_t *d = &ze_cpu_the_device;
    return ze_cpu_result_from_cl(d->usm.blocking_free(d->context, ptr));
}

static ze_memory_type_t memory_type(const void *ptr) {
    ze_cpu_device_t *d = &ze_cpu_the_device;
    cl_unified_shared_memory_type_intel type = CL_MEM_TYPE_UNKNOWN_INTEL;
    if (d->usm.alloc_info(d->context, ptr, CL_MEM_ALLOC_TYPE_INTEL, sizeof type, &type, NULL) !=
        CL_SUCCESS)
        return ZE_MEMORY_TYPE_UNKNOWN;
    switch (type) {
    case CL_MEM_TYPE_HOST_INTEL: return ZE_MEMORY_TYPE_HOST;
    case CL_MEM_TYPE_DEVICE_INTEL: return ZE_MEMORY_TYPE_DEVICE;
    case CL_MEM_TYPE_SHARED_INTEL: return ZE_MEMORY_TYPE_SHARED;
    default: return ZE_MEMORY_TYPE_UNKNOWN;
    }
}

ze_result_t ze_cpu_mem_get_alloc_properties(ze_context_handle_t ctx, const void *ptr,
                                            ze_memory_allocation_properties_t *props,
                                            ze_device_handle_t *device) {
    CHECK_HANDLE((ze_cpu_context_t *)ctx, MAGIC_CONTEXT);
    CHECK_POINTER(ptr);
    CHECK_POINTER(props);
    props->type = memory_type(ptr);
    props->id = (uint64_t)(uintptr_t)allocation_base(ptr);
    props->pageSize = props->type == ZE_MEMORY_TYPE_UNKNOWN ? 0 : 4096;
    if (device != NULL) {
        bool on_device = props->type == ZE_MEMORY_TYPE_DEVICE ||
                         props->type == ZE_MEMORY_TYPE_SHARED;
        *device = on_device ? (ze_device_handle_t)&ze_cpu_the_device : NULL;
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t ze_cpu_mem_get_address_range(ze_context_handle_t ctx, const void *ptr, void **base,
                                         size_t *size) {
    CHECK_HANDLE((ze_cpu_context_t *)ctx, MAGIC_CONTEXT);
    CHECK_POINTER(ptr);
    void *start = allocation_base(ptr);
    if (start == NULL) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    ze_cpu_device_t *d = &ze_cpu_the_device;
    size_t bytes = 0;
    cl_int err =
        d->usm.alloc_info(d->context, ptr, CL_MEM_ALLOC_SIZE_INTEL, sizeof bytes, &bytes, NULL);
    if (err != CL_SUCCESS) return ze_cpu_result_from_cl(err);
    if (base != NULL) *base = start;
    if (size != NULL) *size = bytes;
    return ZE_RESULT_SUCCESS;
}
