/* The Level Zero C API (libtinytc_ze) on the program's own Level Zero objects: device info,
 * kernel bundles from a program and from a binary, kernel creation with the required group
 * size, a custom kernel with a group argument, both recipes on shared USM, and the error
 * paths (NULL arguments, a module build failure whose build log reaches the error reporter).
 * Prints "ok" on success. */
#include "ze_check.h"

#include <tinytc/tinytc_ze.h>

#include <stdint.h>
#include <stdlib.h>

static ze_context_handle_t context;
static ze_device_handle_t device;
static ze_command_list_handle_t list;
static ze_event_handle_t done;

static int reports = 0;
static char last_report[4096];

static void reporter(char const *what, const tinytc_location_t *location, void *user_data) {
    (void)location;
    (void)user_data;
    ++reports;
    snprintf(last_report, sizeof(last_report), "%s", what);
}

static void *shared(size_t bytes) {
    ze_device_mem_alloc_desc_t d = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    ze_host_mem_alloc_desc_t h = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    void *ptr = NULL;
    return zeMemAllocShared(context, &d, &h, bytes, 64, device, &ptr) == ZE_RESULT_SUCCESS ? ptr
                                                                                         : NULL;
}

static int finish(void) {
    EXPECT(zeEventHostSynchronize(done, UINT64_MAX) == ZE_RESULT_SUCCESS);
    EXPECT(zeEventHostReset(done) == ZE_RESULT_SUCCESS);
    return 0;
}

static const char group_source[] =
    "func @sum(%G: group<memref<f32x?>x?>, %out: memref<f32x?>) {\n"
    "    %i = group_id.x : index\n"
    "    %g = load %G[%i] : memref<f32x?>\n"
    "    %o = subview %out[%i:1] : memref<f32x1>\n"
    "    %one = constant 1.0 : f32\n"
    "    %zero = constant 0.0 : f32\n"
    "    %s = subview %o[0] : memref<f32>\n"
    "    sum.n %one, %g, %zero, %s\n"
    "}\n";

/* out[i] = sum of member i, for 3 members of different lengths: memref and group arguments. */
static int group_kernel(void) {
    enum { members = 3 };
    const int64_t n[members] = {5, 17, 40}, count = members;
    tinytc_prog_t prog = NULL;
    ze_module_handle_t module = NULL;
    ze_kernel_handle_t kernel = NULL;
    float *data[members], *out = shared(sizeof(float) * members);
    float **table = shared(sizeof(float *) * members);
    int64_t *shapes = shared(sizeof(int64_t) * members);
    EXPECT(out && table && shapes);
    for (int m = 0; m < members; ++m) {
        data[m] = shared(sizeof(float) * n[m]);
        EXPECT(data[m]);
        for (int i = 0; i < n[m]; ++i) data[m][i] = (float)(i + m);
        table[m] = data[m];
        shapes[m] = n[m];
        out[m] = -1.0f;
    }
    OK(tinytc_parse_string(&prog, sizeof(group_source), group_source, NULL));
    OK(tinytc_ze_kernel_bundle_create_with_program(&module, context, device, prog, 0u));
    OK(tinytc_ze_kernel_create(&kernel, module, "sum"));
    uint32_t x = 0, y = 0, z = 0;
    OK(tinytc_ze_get_group_size(kernel, &x, &y, &z));
    EXPECT(x >= 1 && y >= 1 && z == 1);
    /* group: pointer table, table of dynamic extents, dynamic group size; memref: pointer,
     * dynamic extent */
    EXPECT(zeKernelSetArgumentValue(kernel, 0, sizeof(table), &table) == ZE_RESULT_SUCCESS);
    EXPECT(zeKernelSetArgumentValue(kernel, 1, sizeof(shapes), &shapes) == ZE_RESULT_SUCCESS);
    EXPECT(zeKernelSetArgumentValue(kernel, 2, sizeof(count), &count) == ZE_RESULT_SUCCESS);
    EXPECT(zeKernelSetArgumentValue(kernel, 3, sizeof(out), &out) == ZE_RESULT_SUCCESS);
    EXPECT(zeKernelSetArgumentValue(kernel, 4, sizeof(count), &count) == ZE_RESULT_SUCCESS);
    ze_group_count_t groups = {members, 1, 1};
    EXPECT(zeCommandListAppendLaunchKernel(list, kernel, &groups, done, 0, NULL) ==
           ZE_RESULT_SUCCESS);
    if (finish()) return 1;
    for (int m = 0; m < members; ++m) {
        float want = (float)(n[m] * (n[m] - 1) / 2 + m * n[m]);
        EXPECT(out[m] == want);
    }
    EXPECT_STATUS(tinytc_ze_kernel_create(&kernel, module, NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_ze_kernel_create(NULL, module, "sum"), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_ze_kernel_create(&kernel, module, "no_such_kernel"),
                  tinytc_status_compute_runtime_error);
    zeKernelDestroy(kernel);
    zeModuleDestroy(module);
    OK(tinytc_prog_release(prog));
    for (int m = 0; m < members; ++m) zeMemFree(context, data[m]);
    zeMemFree(context, table);
    zeMemFree(context, shapes);
    zeMemFree(context, out);
    return 0;
}

/* C_i = 2 A_i^T B_i + beta C_i on shared USM. */
static int small_gemm(tinytc_core_info_t info, float beta) {
    enum { M = 8, N = 5, K = 3, howmany = 7 };
    tinytc_compiler_context_t ctx = NULL;
    tinytc_recipe_t recipe = NULL;
    tinytc_recipe_handler_t handler = NULL;
    tinytc_type_t f32;
    float *a = shared(sizeof(float) * K * M * howmany), *b = shared(sizeof(float) * K * N * howmany);
    float *c = shared(sizeof(float) * M * N * howmany);
    EXPECT(a && b && c);
    for (int i = 0; i < K * M * howmany; ++i) a[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < K * N * howmany; ++i) b[i] = (float)(i % 5) - 2.0f;
    for (int i = 0; i < M * N * howmany; ++i) c[i] = 1.0f;
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_f32_type_get(&f32, ctx));
    OK(tinytc_recipe_small_gemm_batched_create(&recipe, info, f32, tinytc_transpose_T,
                                               tinytc_transpose_N, M, N, K, K, K * M, K, K * N, M,
                                               M * N));
    OK(tinytc_ze_recipe_handler_create(&handler, context, device, recipe));
    const float alpha = 2.0f;
    OK(tinytc_recipe_small_gemm_batched_set_args(handler, howmany, sizeof(alpha), &alpha,
                                                 tinytc_mem_type_usm_pointer, a,
                                                 tinytc_mem_type_usm_pointer, b, sizeof(beta),
                                                 &beta, tinytc_mem_type_usm_pointer, c));
    OK(tinytc_ze_recipe_handler_submit(handler, list, done, 0, NULL));
    if (finish()) return 1;
    for (int h = 0; h < howmany; ++h) {
        for (int j = 0; j < N; ++j) {
            for (int i = 0; i < M; ++i) {
                float want = beta * 1.0f;
                for (int k = 0; k < K; ++k) {
                    want += alpha * a[k + i * K + h * K * M] * b[k + j * K + h * K * N];
                }
                EXPECT(c[i + j * M + h * M * N] == want);
            }
        }
    }
    /* a buffer is not a Level Zero memory kind */
    EXPECT_STATUS(tinytc_recipe_small_gemm_batched_set_args(
                      handler, howmany, sizeof(alpha), &alpha, tinytc_mem_type_buffer, a,
                      tinytc_mem_type_usm_pointer, b, sizeof(beta), &beta,
                      tinytc_mem_type_usm_pointer, c),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_ze_recipe_handler_submit(handler, NULL, NULL, 0, NULL),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_ze_recipe_handler_submit(NULL, list, NULL, 0, NULL),
                  tinytc_status_invalid_arguments);
    OK(tinytc_recipe_handler_release(handler));
    OK(tinytc_recipe_release(recipe));
    OK(tinytc_compiler_context_release(ctx));
    zeMemFree(context, a);
    zeMemFree(context, b);
    zeMemFree(context, c);
    return 0;
}

/* C = A B + 0 C for a tall A (M = 100, not a multiple of the block size) on shared USM. */
static int tall_and_skinny(tinytc_core_info_t info) {
    enum { M = 100, N = 4, K = 3 };
    tinytc_compiler_context_t ctx = NULL;
    tinytc_recipe_t recipe = NULL;
    tinytc_recipe_handler_t handler = NULL;
    tinytc_type_t f64;
    double *a = shared(sizeof(double) * M * K), *b = shared(sizeof(double) * K * N);
    double *c = shared(sizeof(double) * M * N);
    EXPECT(a && b && c);
    for (int i = 0; i < M * K; ++i) a[i] = (double)(i % 11);
    for (int i = 0; i < K * N; ++i) b[i] = (double)(i + 1);
    for (int i = 0; i < M * N; ++i) c[i] = -1.0;
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_f64_type_get(&f64, ctx));
    OK(tinytc_recipe_tall_and_skinny_create(&recipe, info, f64, N, K, 32));
    OK(tinytc_ze_recipe_handler_create(&handler, context, device, recipe));
    const double alpha = 1.0, beta = 0.0;
    OK(tinytc_recipe_tall_and_skinny_set_args(handler, M, sizeof(alpha), &alpha,
                                              tinytc_mem_type_usm_pointer, a, M,
                                              tinytc_mem_type_usm_pointer, b, K, sizeof(beta),
                                              &beta, tinytc_mem_type_usm_pointer, c, M));
    OK(tinytc_ze_recipe_handler_submit(handler, list, done, 0, NULL));
    if (finish()) return 1;
    for (int j = 0; j < N; ++j) {
        for (int i = 0; i < M; ++i) {
            double want = 0.0;
            for (int k = 0; k < K; ++k) want += a[i + k * M] * b[k + j * K];
            EXPECT(c[i + j * M] == want);
        }
    }
    OK(tinytc_recipe_handler_release(handler));
    OK(tinytc_recipe_release(recipe));
    OK(tinytc_compiler_context_release(ctx));
    zeMemFree(context, a);
    zeMemFree(context, b);
    zeMemFree(context, c);
    return 0;
}

/* f16 atomic add: the compiler emits it for a core info that claims the feature, but the CPU
 * runtime cannot link it, so the module build fails and its log reaches the reporter. */
static const char atomic_source[] = "func @k(%a: memref<f16x4>, %x: f16) {\n"
                                    "    %c0 = constant 0 : index\n"
                                    "    %y = atomic_add %x, %a[%c0] : f16\n"
                                    "}\n";

static int build_failure(void) {
    tinytc_compiler_context_t ctx = NULL;
    tinytc_core_info_t info = NULL;
    tinytc_prog_t prog = NULL;
    tinytc_binary_t bin = NULL, junk = NULL;
    ze_module_handle_t module = NULL;
    const int32_t sgs[] = {8, 16};
    const tinytc_spirv_feature_t features[] = {
        tinytc_spirv_feature_float16, tinytc_spirv_feature_groups,
        tinytc_spirv_feature_subgroup_dispatch, tinytc_spirv_feature_atomic_float16_add_global};
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_compiler_context_set_error_reporter(ctx, reporter, NULL));
    OK(tinytc_core_info_generic_create(&info, 2048, 1024, 2, sgs));
    for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); ++i) {
        OK(tinytc_core_info_set_spirv_feature(info, features[i], 1));
    }
    OK(tinytc_parse_string(&prog, sizeof(atomic_source), atomic_source, ctx));
    OK(tinytc_prog_compile_to_spirv_and_assemble(&bin, prog, info));
    reports = 0;
    EXPECT_STATUS(tinytc_ze_kernel_bundle_create_with_binary(&module, context, device, bin),
                  tinytc_status_compute_runtime_error);
    EXPECT(reports == 1);
    EXPECT(strstr(last_report, "Level Zero module") != NULL);
    EXPECT(strlen(last_report) > strlen("error: building the Level Zero module failed") + 10);
    printf("build log: %s\n", last_report);
    /* bytes that are not SPIR-V at all never reach the OpenCL runtime */
    const uint8_t garbage[16] = {1, 2, 3, 4};
    OK(tinytc_binary_create(&junk, ctx, tinytc_bundle_format_spirv, sizeof(garbage), garbage, 0));
    EXPECT_STATUS(tinytc_ze_kernel_bundle_create_with_binary(&module, context, device, junk),
                  tinytc_status_compute_runtime_error);
    EXPECT(reports == 2);
    EXPECT_STATUS(tinytc_ze_kernel_bundle_create_with_binary(NULL, context, device, bin),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_ze_kernel_bundle_create_with_binary(&module, NULL, device, bin),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_ze_kernel_bundle_create_with_binary(&module, context, device, NULL),
                  tinytc_status_invalid_arguments);
    OK(tinytc_binary_release(junk));
    OK(tinytc_binary_release(bin));
    OK(tinytc_prog_release(prog));
    OK(tinytc_core_info_release(info));
    OK(tinytc_compiler_context_release(ctx));
    return 0;
}

int main(void) {
    ze_driver_handle_t driver;
    ze_event_pool_handle_t pool;
    if (open_first_ze_device(&driver, &device, &context)) {
        return 1;
    }
    ze_command_queue_desc_t qdesc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                     NULL,
                                     0,
                                     0,
                                     0,
                                     ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                     ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    EXPECT(zeCommandListCreateImmediate(context, device, &qdesc, &list) == ZE_RESULT_SUCCESS);
    ze_event_pool_desc_t pdesc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL,
                                  ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    EXPECT(zeEventPoolCreate(context, &pdesc, 1, &device, &pool) == ZE_RESULT_SUCCESS);
    ze_event_desc_t edesc = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                             ZE_EVENT_SCOPE_FLAG_HOST};
    EXPECT(zeEventCreate(pool, &edesc, &done) == ZE_RESULT_SUCCESS);

    tinytc_support_level_t level = tinytc_support_level_none;
    OK(tinytc_ze_get_support_level(device, &level));
    EXPECT(level == tinytc_support_level_basic);
    EXPECT_STATUS(tinytc_ze_get_support_level(device, NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_ze_get_support_level(NULL, &level), tinytc_status_invalid_arguments);
    tinytc_core_info_t info = NULL;
    OK(tinytc_ze_core_info_create(&info, device));
    size_t sgs_size = 0;
    int32_t const *sgs = NULL;
    OK(tinytc_core_info_get_subgroup_sizes(info, &sgs_size, &sgs));
    EXPECT(sgs_size >= 1 && sgs[0] >= 4);
    EXPECT_STATUS(tinytc_ze_core_info_create(NULL, device), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_ze_core_info_create(&info, NULL), tinytc_status_invalid_arguments);

    if (group_kernel() || small_gemm(info, 0.0f) || small_gemm(info, 0.5f) ||
        tall_and_skinny(info) || build_failure()) {
        return 1;
    }
    OK(tinytc_core_info_release(info));
    zeEventDestroy(done);
    zeEventPoolDestroy(pool);
    zeCommandListDestroy(list);
    zeContextDestroy(context);
    printf("ok\n");
    return 0;
}
