/* Recipes in bounds-checked mode from a C host, on OpenCL (cl_mem buffers) or, compiled with
 * -DTINYTC_TEST_ZE, on Level Zero (shared USM): the recipe handler owns the report records and
 * passes them in set_args; tinytc_recipe_handler_get_bounds_report gives the located message
 * after the launch and clears the records.
 *
 * A tall_and_skinny recipe specialized for M = 64 rows (block size 32) computes C = A B; set_args
 * with M = 64 is in bounds, with M = 96 the third work-group's views lie outside A and C, which
 * is reported and skipped (the first 64 rows stay right). A recipe of a context without the
 * flag has no records. Prints the message of the oversized launch, then "ok". */
#ifdef TINYTC_TEST_ZE
#include "ze_check.h"

#include <tinytc/tinytc_ze.h>
#else
#include "cl_check.h"

#include <tinytc/tinytc_cl.h>
#endif

#include <stdint.h>
#include <string.h>

enum { M = 64, N = 4, K = 3, BLOCK = 32 };

#ifdef TINYTC_TEST_ZE
static ze_context_handle_t context;
static ze_device_handle_t device;
static ze_command_list_handle_t list;
static ze_event_pool_handle_t pool;
static ze_event_handle_t done;
static float *a, *b, *c;
#define MEM_TYPE tinytc_mem_type_usm_pointer
#define A_VALUE a
#define B_VALUE b
#define C_VALUE c

static void *shared(size_t bytes) {
    ze_device_mem_alloc_desc_t d = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    ze_host_mem_alloc_desc_t h = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    void *ptr = NULL;
    return zeMemAllocShared(context, &d, &h, bytes, 64, device, &ptr) == ZE_RESULT_SUCCESS ? ptr
                                                                                         : NULL;
}

static int open_device(void) {
    ze_driver_handle_t driver;
    if (open_first_ze_device(&driver, &device, &context)) return 1;
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
    a = shared(sizeof(float) * M * K);
    b = shared(sizeof(float) * K * N);
    c = shared(sizeof(float) * M * N);
    EXPECT(a && b && c);
    return 0;
}

static int core_info(tinytc_core_info_t *info) {
    OK(tinytc_ze_core_info_create(info, device));
    return 0;
}

static int handler_create(tinytc_recipe_handler_t *handler, tinytc_recipe_t recipe) {
    OK(tinytc_ze_recipe_handler_create(handler, context, device, recipe));
    return 0;
}

static int upload(float const *ha, float const *hb, float const *hc) {
    memcpy(a, ha, sizeof(float) * M * K);
    memcpy(b, hb, sizeof(float) * K * N);
    memcpy(c, hc, sizeof(float) * M * N);
    return 0;
}

/* Runs the handler and waits for it (its signal event), then reads C. */
static int run(tinytc_recipe_handler_t handler, float *hc) {
    OK(tinytc_ze_recipe_handler_submit(handler, list, done, 0, NULL));
    EXPECT(zeEventHostSynchronize(done, UINT64_MAX) == ZE_RESULT_SUCCESS);
    EXPECT(zeEventHostReset(done) == ZE_RESULT_SUCCESS);
    memcpy(hc, c, sizeof(float) * M * N);
    return 0;
}

static void close_device(void) {
    zeMemFree(context, a);
    zeMemFree(context, b);
    zeMemFree(context, c);
    zeEventDestroy(done);
    zeEventPoolDestroy(pool);
    zeCommandListDestroy(list);
    zeContextDestroy(context);
}
#else
static cl_device_id device;
static cl_context context;
static cl_command_queue queue;
static cl_mem a, b, c;
#define MEM_TYPE tinytc_mem_type_buffer
#define A_VALUE a
#define B_VALUE b
#define C_VALUE c

static int open_device(void) {
    cl_int err;
    if (open_first_device(&device, &context, &queue)) return 1;
    a = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(float) * M * K, NULL, &err);
    CL_OK(err);
    b = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(float) * K * N, NULL, &err);
    CL_OK(err);
    c = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(float) * M * N, NULL, &err);
    CL_OK(err);
    return 0;
}

static int core_info(tinytc_core_info_t *info) {
    OK(tinytc_cl_core_info_create(info, device));
    return 0;
}

static int handler_create(tinytc_recipe_handler_t *handler, tinytc_recipe_t recipe) {
    OK(tinytc_cl_recipe_handler_create(handler, context, device, recipe));
    return 0;
}

static int upload(float const *ha, float const *hb, float const *hc) {
    CL_OK(clEnqueueWriteBuffer(queue, a, CL_TRUE, 0, sizeof(float) * M * K, ha, 0, NULL, NULL));
    CL_OK(clEnqueueWriteBuffer(queue, b, CL_TRUE, 0, sizeof(float) * K * N, hb, 0, NULL, NULL));
    CL_OK(clEnqueueWriteBuffer(queue, c, CL_TRUE, 0, sizeof(float) * M * N, hc, 0, NULL, NULL));
    return 0;
}

/* Runs the handler and waits for it (clFinish), then reads C. */
static int run(tinytc_recipe_handler_t handler, float *hc) {
    OK(tinytc_cl_recipe_handler_submit(handler, queue, 0, NULL, NULL));
    CL_OK(clFinish(queue));
    CL_OK(clEnqueueReadBuffer(queue, c, CL_TRUE, 0, sizeof(float) * M * N, hc, 0, NULL, NULL));
    return 0;
}

static void close_device(void) {
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
}
#endif

/* set_args for `rows` rows of the M-row operands, launch, wait; C is read back into hc. */
static int gemm(tinytc_recipe_handler_t handler, int64_t rows, float *hc) {
    const float alpha = 1.0f, beta = 0.0f;
    OK(tinytc_recipe_tall_and_skinny_set_args(handler, rows, sizeof(alpha), &alpha, MEM_TYPE,
                                              A_VALUE, M, MEM_TYPE, B_VALUE, K, sizeof(beta),
                                              &beta, MEM_TYPE, C_VALUE, M));
    return run(handler, hc);
}

static int recipe_create(tinytc_recipe_t *recipe, tinytc_core_info_t info, int checked) {
    tinytc_compiler_context_t ctx;
    tinytc_type_t f32;
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_compiler_context_set_optimization_flag(ctx, tinytc_optflag_bounds_checks, checked));
    OK(tinytc_f32_type_get(&f32, ctx));
    OK(tinytc_recipe_tall_and_skinny_create_specialized(recipe, info, f32, M, N, K, M, K, M, 0, 0,
                                                        0, BLOCK));
    OK(tinytc_compiler_context_release(ctx)); /* the recipe keeps it */
    return 0;
}

int main(void) {
    static float ha[M * K], hb[K * N], hc[M * N], want[M * N];
    if (open_device()) return 1;
    tinytc_core_info_t info;
    if (core_info(&info)) return 1;
    for (int i = 0; i < M * K; ++i) ha[i] = (float)(i % 7);
    for (int i = 0; i < K * N; ++i) hb[i] = (float)(i + 1);
    for (int j = 0; j < N; ++j) {
        for (int i = 0; i < M; ++i) {
            want[i + j * M] = 0.0f;
            for (int k = 0; k < K; ++k) want[i + j * M] += ha[i + k * M] * hb[k + j * K];
        }
    }

    tinytc_recipe_t recipe;
    tinytc_recipe_handler_t handler;
    char *message = NULL;
    if (recipe_create(&recipe, info, 1) || handler_create(&handler, recipe)) return 1;

    for (int i = 0; i < M * N; ++i) hc[i] = -1.0f;
    if (upload(ha, hb, hc) || gemm(handler, M, hc)) return 1; /* in bounds */
    OK(tinytc_recipe_handler_get_bounds_report(handler, &message));
    EXPECT(message == NULL);
    for (int i = 0; i < M * N; ++i) EXPECT(hc[i] == want[i]);

    for (int i = 0; i < M * N; ++i) hc[i] = -1.0f;
    if (upload(ha, hb, hc) || gemm(handler, M + BLOCK, hc)) return 1; /* group 2 is outside */
    OK(tinytc_recipe_handler_get_bounds_report(handler, &message));
    EXPECT(message != NULL);
    printf("%s\n", message);
    tinytc_string_destroy(message);
    for (int i = 0; i < M * N; ++i) EXPECT(hc[i] == want[i]); /* groups 0 and 1 ran */
    OK(tinytc_recipe_handler_get_bounds_report(handler, &message)); /* the report cleared them */
    EXPECT(message == NULL);
    EXPECT_STATUS(tinytc_recipe_handler_get_bounds_report(handler, NULL),
                  tinytc_status_invalid_arguments);
    OK(tinytc_recipe_handler_release(handler));
    OK(tinytc_recipe_release(recipe));

    /* without the flag: no records, nothing to report */
    if (recipe_create(&recipe, info, 0) || handler_create(&handler, recipe)) return 1;
    for (int i = 0; i < M * N; ++i) hc[i] = -1.0f;
    if (upload(ha, hb, hc) || gemm(handler, M, hc)) return 1;
    for (int i = 0; i < M * N; ++i) EXPECT(hc[i] == want[i]);
    EXPECT_STATUS(tinytc_recipe_handler_get_bounds_report(handler, &message),
                  tinytc_status_invalid_arguments);
    OK(tinytc_recipe_handler_release(handler));
    OK(tinytc_recipe_release(recipe));

    OK(tinytc_core_info_release(info));
    close_device();
    printf("ok\n");
    return 0;
}
