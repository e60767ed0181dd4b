/* Level Zero example: runs the small GEMM batched recipe and a custom kernel written in the
 * tensor language on the first Level Zero device, using the program's own context, device and
 * immediate command list; all memory is shared USM.
 * Build: gcc simple_ze.c $(pkg-config --cflags --libs tinytc_ze)
 * Without an Intel GPU, run it on tinytc-py's CPU driver:
 *   ZE_ENABLE_ALT_DRIVERS=<build/lib>/libze_tinytc_cpu.so ./a.out */
#include <level_zero/ze_api.h>
#include <tinytc/tinytc.h>
#include <tinytc/tinytc_ze.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(X)                                                                               \
    do {                                                                                       \
        tinytc_status_t s_ = (X);                                                              \
        if (s_ != tinytc_status_success) {                                                     \
            fprintf(stderr, "%s failed: %s\n", #X, tinytc_status_to_string(s_));               \
            goto fail;                                                                         \
        }                                                                                      \
    } while (0)
#define ZE_CHECK(X)                                                                            \
    do {                                                                                       \
        ze_result_t r_ = (X);                                                                  \
        if (r_ != ZE_RESULT_SUCCESS) {                                                         \
            fprintf(stderr, "%s failed: ze_result_t 0x%x\n", #X, (unsigned)r_);               \
            goto fail;                                                                         \
        }                                                                                      \
    } while (0)

struct device {
    ze_context_handle_t context;
    ze_device_handle_t device;
    ze_command_list_handle_t list;
    ze_event_handle_t done; /* signalled by each launch; the host waits on it */
};

static void *shared_alloc(struct device *d, size_t bytes) {
    ze_device_mem_alloc_desc_t ddesc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    ze_host_mem_alloc_desc_t hdesc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    void *ptr = NULL;
    if (zeMemAllocShared(d->context, &ddesc, &hdesc, bytes, 64, d->device, &ptr) !=
        ZE_RESULT_SUCCESS) {
        return NULL;
    }
    return ptr;
}

static ze_result_t wait_done(struct device *d) {
    ze_result_t r = zeEventHostSynchronize(d->done, UINT64_MAX);
    if (r == ZE_RESULT_SUCCESS) r = zeEventHostReset(d->done);
    return r;
}

/* C_i = A_i B_i for 100 batches of 16x16 matrices; A_i is all ones, B_i the identity * i. */
static int gemm(struct device *d) {
    enum { n = 16, howmany = 100 };
    int ok = 0;
    tinytc_core_info_t info = NULL;
    tinytc_compiler_context_t ctx = NULL;
    tinytc_recipe_t recipe = NULL;
    tinytc_recipe_handler_t handler = NULL;
    tinytc_type_t f32;
    size_t bytes = sizeof(float) * n * n * howmany;
    float *a = shared_alloc(d, bytes), *b = shared_alloc(d, bytes), *c = shared_alloc(d, bytes);
    if (!a || !b || !c) goto fail;
    for (int h = 0; h < howmany; ++h) {
        for (int i = 0; i < n * n; ++i) {
            a[i + h * n * n] = 1.0f;
            b[i + h * n * n] = 0.0f;
            c[i + h * n * n] = -1.0f;
        }
        for (int i = 0; i < n; ++i) b[i + i * n + h * n * n] = (float)h;
    }
    CHECK(tinytc_ze_core_info_create(&info, d->device));
    CHECK(tinytc_compiler_context_create(&ctx));
    CHECK(tinytc_f32_type_get(&f32, ctx));
    CHECK(tinytc_recipe_small_gemm_batched_create(&recipe, info, f32, tinytc_transpose_N,
                                                  tinytc_transpose_N, n, n, n, n, n * n, n, n * n,
                                                  n, n * n));
    CHECK(tinytc_ze_recipe_handler_create(&handler, d->context, d->device, recipe));
    const float alpha = 1.0f, beta = 0.0f;
    CHECK(tinytc_recipe_small_gemm_batched_set_args(
        handler, howmany, sizeof(alpha), &alpha, tinytc_mem_type_usm_pointer, a,
        tinytc_mem_type_usm_pointer, b, sizeof(beta), &beta, tinytc_mem_type_usm_pointer, c));
    CHECK(tinytc_ze_recipe_handler_submit(handler, d->list, d->done, 0, NULL));
    ZE_CHECK(wait_done(d));
    int errors = 0;
    for (int h = 0; h < howmany; ++h) {
        for (int i = 0; i < n * n; ++i) errors += c[i + h * n * n] != (float)h;
    }
    printf("gemm: %d of %d entries wrong\n", errors, n * n * howmany);
    ok = errors == 0;
fail:
    tinytc_recipe_handler_release(handler);
    tinytc_recipe_release(recipe);
    tinytc_compiler_context_release(ctx);
    tinytc_core_info_release(info);
    if (a) zeMemFree(d->context, a);
    if (b) zeMemFree(d->context, b);
    if (c) zeMemFree(d->context, c);
    return ok;
}

static const char source[] = "func @scale(%A: memref<i32x32x?>, %B: memref<i32x32x?>) {\n"
                             "    %gid = group_id.x : index\n"
                             "    %a = subview %A[0:32, %gid] : memref<i32x32>\n"
                             "    %b = subview %B[0:32, %gid] : memref<i32x32>\n"
                             "    %three = constant 3 : i32\n"
                             "    %zero = constant 0 : i32\n"
                             "    axpby.n %three, %a, %zero, %b\n"
                             "}\n";

/* B = 3 A with a kernel written in the tensor language: one work-group per column. */
static int custom_kernel(struct device *d) {
    enum { rows = 32 };
    const int64_t cols = 50;
    int ok = 0;
    tinytc_prog_t prog = NULL;
    ze_module_handle_t module = NULL;
    ze_kernel_handle_t kernel = NULL;
    size_t bytes = sizeof(int32_t) * rows * cols;
    int32_t *a = shared_alloc(d, bytes), *b = shared_alloc(d, bytes);
    if (!a || !b) goto fail;
    for (int i = 0; i < rows * cols; ++i) {
        a[i] = i;
        b[i] = -1;
    }
    CHECK(tinytc_parse_string(&prog, sizeof(source), source, NULL));
    CHECK(tinytc_ze_kernel_bundle_create_with_program(&module, d->context, d->device, prog, 0u));
    /* creates the kernel and sets its group size to the size the compiler chose */
    CHECK(tinytc_ze_kernel_create(&kernel, module, "scale"));
    /* calling convention: each memref is its pointer followed by its dynamic extents (int64) */
    ZE_CHECK(zeKernelSetArgumentValue(kernel, 0, sizeof(a), &a));
    ZE_CHECK(zeKernelSetArgumentValue(kernel, 1, sizeof(cols), &cols));
    ZE_CHECK(zeKernelSetArgumentValue(kernel, 2, sizeof(b), &b));
    ZE_CHECK(zeKernelSetArgumentValue(kernel, 3, sizeof(cols), &cols));
    ze_group_count_t groups = {(uint32_t)cols, 1, 1};
    ZE_CHECK(zeCommandListAppendLaunchKernel(d->list, kernel, &groups, d->done, 0, NULL));
    ZE_CHECK(wait_done(d));
    int errors = 0;
    for (int i = 0; i < rows * cols; ++i) errors += b[i] != 3 * a[i];
    printf("custom kernel: %d of %d entries wrong\n", errors, (int)(rows * cols));
    ok = errors == 0;
fail:
    if (kernel) zeKernelDestroy(kernel);
    if (module) zeModuleDestroy(module);
    tinytc_prog_release(prog);
    if (a) zeMemFree(d->context, a);
    if (b) zeMemFree(d->context, b);
    return ok;
}

int main(void) {
    struct device d = {0};
    ze_driver_handle_t driver;
    ze_event_pool_handle_t pool = NULL;
    uint32_t count = 1;
    int ok = 0;
    if (zeInit(0) != ZE_RESULT_SUCCESS || zeDriverGet(&count, &driver) != ZE_RESULT_SUCCESS ||
        count == 0 || zeDeviceGet(driver, &count, &d.device) != ZE_RESULT_SUCCESS || count == 0) {
        fprintf(stderr, "no Level Zero device\n");
        return 1;
    }
    tinytc_support_level_t level;
    if (tinytc_ze_get_support_level(d.device, &level) != tinytc_status_success ||
        level == tinytc_support_level_none) {
        fprintf(stderr, "the device is not supported by tinytc\n");
        return 1;
    }
    printf("support level: %d\n", (int)level);
    ze_context_desc_t cdesc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ZE_CHECK(zeContextCreate(driver, &cdesc, &d.context));
    ze_command_queue_desc_t qdesc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                     NULL,
                                     0,
                                     0,
                                     0,
                                     ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                     ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ZE_CHECK(zeCommandListCreateImmediate(d.context, d.device, &qdesc, &d.list));
    ze_event_pool_desc_t pdesc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL,
                                  ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ZE_CHECK(zeEventPoolCreate(d.context, &pdesc, 1, &d.device, &pool));
    ze_event_desc_t edesc = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                             ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_CHECK(zeEventCreate(pool, &edesc, &d.done));
    ok = gemm(&d) && custom_kernel(&d);
fail:
    if (d.done) zeEventDestroy(d.done);
    if (pool) zeEventPoolDestroy(pool);
    if (d.list) zeCommandListDestroy(d.list);
    if (d.context) zeContextDestroy(d.context);
    return ok ? 0 : 1;
}
