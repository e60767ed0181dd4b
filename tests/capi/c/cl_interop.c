/* OpenCL interop on the host's own OpenCL objects: core info and support level from a
 * cl_device_id, kernel bundles from a program and from a binary on the host's cl_context,
 * group/global size helpers, a launch with clSetKernelArg (memref = buffer + dynamic extent as
 * int64), and both recipes (small GEMM batched, tall and skinny) on the host's queue with
 * every memory kind (cl_mem buffers, Intel USM shared pointers, SVM pointers), checked against C.
 * Prints one line per recipe run and then "ok". */
#include "cl_check.h"

#include <CL/cl_ext.h>
#include <tinytc/tinytc_cl.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static const char source[] = "func @copy(%A: memref<i32x64x?>, %B: memref<i32x64x?>) {\n"
                             "    %gid = group_id.x : index\n"
                             "    %a = subview %A[0:64, %gid] : memref<i32x64>\n"
                             "    %b = subview %B[0:64, %gid] : memref<i32x64>\n"
                             "    %two = constant 2 : i32\n"
                             "    %zero = constant 0 : i32\n"
                             "    axpby.n %two, %a, %zero, %b\n"
                             "}\n";

/* Device memory of one tinytc_mem_type_t kind, filled from and read back into host arrays. */
struct dev_mem {
    tinytc_mem_type_t type;
    cl_context context;
    cl_command_queue queue;
    cl_mem buffer;
    void *ptr;
    size_t size;
};

static clSharedMemAllocINTEL_fn shared_alloc = NULL;
static clMemBlockingFreeINTEL_fn usm_free = NULL;

static int mem_create(struct dev_mem *m, tinytc_mem_type_t type, cl_context context,
                      cl_device_id device, cl_command_queue queue, const void *host,
                      size_t size) {
    cl_int err = CL_SUCCESS;
    m->type = type;
    m->context = context;
    m->queue = queue;
    m->size = size;
    m->buffer = NULL;
    m->ptr = NULL;
    if (type == tinytc_mem_type_buffer) {
        m->buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, size,
                                   (void *)host, &err);
        CL_OK(err);
    } else if (type == tinytc_mem_type_usm_pointer) {
        m->ptr = shared_alloc(context, device, NULL, size, 64, &err);
        CL_OK(err);
        EXPECT(m->ptr != NULL);
        memcpy(m->ptr, host, size); /* shared USM is host-accessible */
    } else {
        m->ptr = clSVMAlloc(context, CL_MEM_READ_WRITE, size, 64);
        EXPECT(m->ptr != NULL);
        CL_OK(clEnqueueSVMMemcpy(queue, CL_TRUE, m->ptr, host, size, 0, NULL, NULL));
    }
    return 0;
}

/* What set_args takes: the cl_mem handle itself for buffers, else the pointer. */
static const void *mem_value(const struct dev_mem *m) {
    return m->type == tinytc_mem_type_buffer ? (const void *)m->buffer : m->ptr;
}

static int mem_read(struct dev_mem *m, void *host) {
    if (m->type == tinytc_mem_type_buffer) {
        CL_OK(clEnqueueReadBuffer(m->queue, m->buffer, CL_TRUE, 0, m->size, host, 0, NULL, NULL));
    } else if (m->type == tinytc_mem_type_usm_pointer) {
        CL_OK(clFinish(m->queue));
        memcpy(host, m->ptr, m->size);
    } else {
        CL_OK(clEnqueueSVMMemcpy(m->queue, CL_TRUE, host, m->ptr, m->size, 0, NULL, NULL));
    }
    return 0;
}

static int mem_release(struct dev_mem *m) {
    if (m->type == tinytc_mem_type_buffer) {
        CL_OK(clReleaseMemObject(m->buffer));
    } else if (m->type == tinytc_mem_type_usm_pointer) {
        CL_OK(usm_free(m->context, m->ptr));
    } else {
        clSVMFree(m->context, m->ptr);
    }
    return 0;
}

static int check_close(const float *got, const float *ref, int n, const char *what) {
    for (int i = 0; i < n; ++i) {
        if (fabsf(got[i] - ref[i]) > 1e-4f * (1.0f + fabsf(ref[i]))) {
            fprintf(stderr, "%s: C[%d] = %g, expected %g\n", what, i, got[i], ref[i]);
            return 1;
        }
    }
    return 0;
}

static int reports = 0;
static void reporter(char const *what, const tinytc_location_t *loc, void *user) {
    (void)loc;
    (void)user;
    (void)what;
    ++reports;
}

static int run_copy(cl_context context, cl_command_queue queue, cl_program bundle, int64_t n) {
    cl_int err;
    cl_kernel kernel = clCreateKernel(bundle, "copy", &err);
    CL_OK(err);
    size_t count = 64 * (size_t)n;
    int32_t *host = malloc(count * sizeof(int32_t));
    for (size_t i = 0; i < count; ++i) {
        host[i] = (int32_t)i - 7;
    }
    cl_mem A = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              count * sizeof(int32_t), host, &err);
    CL_OK(err);
    cl_mem B = clCreateBuffer(context, CL_MEM_READ_WRITE, count * sizeof(int32_t), NULL, &err);
    CL_OK(err);
    CL_OK(clSetKernelArg(kernel, 0, sizeof(A), &A));
    CL_OK(clSetKernelArg(kernel, 1, sizeof(n), &n));
    CL_OK(clSetKernelArg(kernel, 2, sizeof(B), &B));
    CL_OK(clSetKernelArg(kernel, 3, sizeof(n), &n));
    size_t ls[3], gs[3], ng[3] = {(size_t)n, 1, 1};
    OK(tinytc_cl_get_group_size(kernel, ls));
    EXPECT(ls[0] >= 1 && ls[1] >= 1 && ls[2] == 1);
    tinytc_cl_get_global_size(ng, ls, gs);
    EXPECT(gs[0] == (size_t)n * ls[0] && gs[1] == ls[1] && gs[2] == 1);
    CL_OK(clEnqueueNDRangeKernel(queue, kernel, 3, NULL, gs, ls, 0, NULL, NULL));
    int32_t *result = malloc(count * sizeof(int32_t));
    CL_OK(clEnqueueReadBuffer(queue, B, CL_TRUE, 0, count * sizeof(int32_t), result, 0, NULL,
                              NULL));
    for (size_t i = 0; i < count; ++i) {
        EXPECT(result[i] == 2 * host[i]);
    }
    free(result);
    free(host);
    clReleaseMemObject(A);
    clReleaseMemObject(B);
    clReleaseKernel(kernel);
    return 0;
}

static int run_recipe(cl_context context, cl_device_id device, cl_command_queue queue,
                      tinytc_core_info_t info, float beta, tinytc_mem_type_t mem) {
    enum { M = 8, N = 5, K = 6, howmany = 7 };
    tinytc_compiler_context_t ctx;
    tinytc_type_t f32;
    tinytc_recipe_t recipe;
    tinytc_recipe_handler_t handler;
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_f32_type_get(&f32, ctx));
    EXPECT_STATUS(tinytc_recipe_small_gemm_batched_create(&recipe, info, f32, tinytc_transpose_N,
                                                          tinytc_transpose_N, M, N, TINYTC_DYNAMIC,
                                                          M, M * K, K, K * N, M, M * N),
                  tinytc_status_invalid_arguments);
    OK(tinytc_recipe_small_gemm_batched_create(&recipe, info, f32, tinytc_transpose_N,
                                               tinytc_transpose_T, M, N, K, M, M * K, N, K * N, M,
                                               M * N));
    OK(tinytc_compiler_context_release(ctx)); /* the recipe keeps it alive */
    OK(tinytc_cl_recipe_handler_create(&handler, context, device, recipe));
    tinytc_recipe_t got;
    OK(tinytc_recipe_handler_get_recipe(handler, &got));
    EXPECT(got == recipe);
    tinytc_prog_t prog;
    tinytc_binary_t bin;
    OK(tinytc_recipe_get_prog(recipe, &prog));
    OK(tinytc_recipe_get_binary(recipe, &bin));
    EXPECT(prog != NULL && bin != NULL);

    float a[M * K * howmany], b[K * N * howmany], c[M * N * howmany], ref[M * N * howmany];
    for (int i = 0; i < M * K * howmany; ++i) a[i] = (float)((i * 7) % 11) - 5.0f;
    for (int i = 0; i < K * N * howmany; ++i) b[i] = (float)((i * 5) % 9) - 4.0f;
    for (int i = 0; i < M * N * howmany; ++i) c[i] = (float)(i % 3);
    float alpha = 1.5f;
    for (int h = 0; h < howmany; ++h) {
        for (int n = 0; n < N; ++n) {
            for (int m = 0; m < M; ++m) {
                float acc = 0.0f;
                for (int k = 0; k < K; ++k) {
                    /* B is transposed: B_h is N x K with leading dimension N */
                    acc += a[m + k * M + h * M * K] * b[n + k * N + h * K * N];
                }
                int idx = m + n * M + h * M * N;
                ref[idx] = alpha * acc + (beta != 0.0f ? beta * c[idx] : 0.0f);
            }
        }
    }
    struct dev_mem A, B, C;
    if (mem_create(&A, mem, context, device, queue, a, sizeof(a)) ||
        mem_create(&B, mem, context, device, queue, b, sizeof(b)) ||
        mem_create(&C, mem, context, device, queue, c, sizeof(c))) {
        return 1;
    }
    double wrong = 1.0;
    EXPECT_STATUS(tinytc_recipe_small_gemm_batched_set_args(
                      handler, howmany, sizeof(wrong), &wrong, mem, mem_value(&A), mem,
                      mem_value(&B), sizeof(beta), &beta, mem, mem_value(&C)),
                  tinytc_status_invalid_kernel_arguments);
    OK(tinytc_recipe_small_gemm_batched_set_args(handler, howmany, sizeof(alpha), &alpha, mem,
                                                 mem_value(&A), mem, mem_value(&B), sizeof(beta),
                                                 &beta, mem, mem_value(&C)));
    cl_event done;
    OK(tinytc_recipe_handler_retain(handler));
    OK(tinytc_cl_recipe_handler_submit(handler, queue, 0, NULL, &done));
    OK(tinytc_recipe_handler_release(handler));
    CL_OK(clWaitForEvents(1, &done));
    clReleaseEvent(done);
    if (mem_read(&C, c) || check_close(c, ref, M * N * howmany, "small_gemm_batched")) {
        return 1;
    }
    if (mem_release(&A) || mem_release(&B) || mem_release(&C)) return 1;
    OK(tinytc_recipe_release(recipe)); /* the handler keeps it alive */
    OK(tinytc_recipe_handler_release(handler));
    printf("small_gemm_batched %s beta=%g: %d entries ok\n", tinytc_mem_type_to_string(mem),
           (double)beta, M * N * howmany);
    return 0;
}

/* C = alpha * A * B + beta * C with A M x K (ldA = M + 3), B K x N, C M x N (ldC = M + 1); M is
 * dynamic in the recipe and not a multiple of the block size. */
static int run_tall_and_skinny(cl_context context, cl_device_id device, cl_command_queue queue,
                               tinytc_core_info_t info, float beta, tinytc_mem_type_t mem) {
    enum { M = 300, N = 6, K = 5, ldA = M + 3, ldB = K, ldC = M + 1 };
    static float a[ldA * K], b[ldB * N], c[ldC * N], ref[ldC * N];
    const float alpha = 0.75f;
    tinytc_compiler_context_t ctx;
    tinytc_type_t f32;
    tinytc_recipe_t recipe;
    tinytc_recipe_handler_t handler;
    int32_t block = 0;
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_f32_type_get(&f32, ctx));
    OK(tinytc_recipe_tall_and_skinny_suggest_block_size(info, &block));
    OK(tinytc_recipe_tall_and_skinny_create(&recipe, info, f32, N, K, block));
    OK(tinytc_compiler_context_release(ctx));
    OK(tinytc_cl_recipe_handler_create(&handler, context, device, recipe));
    OK(tinytc_recipe_release(recipe));

    for (int i = 0; i < ldA * K; ++i) a[i] = (float)((i * 7) % 13) - 6.0f;
    for (int i = 0; i < ldB * N; ++i) b[i] = (float)((i * 3) % 7) - 3.0f;
    for (int i = 0; i < ldC * N; ++i) c[i] = ref[i] = (float)(i % 5);
    for (int n = 0; n < N; ++n) {
        for (int m = 0; m < M; ++m) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k) acc += a[m + k * ldA] * b[k + n * ldB];
            ref[m + n * ldC] = alpha * acc + (beta != 0.0f ? beta * c[m + n * ldC] : 0.0f);
        }
    }
    struct dev_mem A, B, C;
    if (mem_create(&A, mem, context, device, queue, a, sizeof(a)) ||
        mem_create(&B, mem, context, device, queue, b, sizeof(b)) ||
        mem_create(&C, mem, context, device, queue, c, sizeof(c))) {
        return 1;
    }
    OK(tinytc_recipe_tall_and_skinny_set_args(handler, M, sizeof(alpha), &alpha, mem,
                                              mem_value(&A), ldA, mem, mem_value(&B), ldB,
                                              sizeof(beta), &beta, mem, mem_value(&C), ldC));
    OK(tinytc_cl_recipe_handler_submit(handler, queue, 0, NULL, NULL));
    CL_OK(clFinish(queue));
    /* rows M..ldC-1 of C are padding the kernel must not touch: compare everything */
    if (mem_read(&C, c) || check_close(c, ref, ldC * N, "tall_and_skinny")) {
        return 1;
    }
    if (mem_release(&A) || mem_release(&B) || mem_release(&C)) return 1;
    OK(tinytc_recipe_handler_release(handler));
    printf("tall_and_skinny %s beta=%g: %d entries ok\n", tinytc_mem_type_to_string(mem),
           (double)beta, ldC * N);
    return 0;
}

int main(void) {
    cl_platform_id platforms[8];
    cl_uint num_platforms = 0;
    CL_OK(clGetPlatformIDs(8, platforms, &num_platforms));
    cl_device_id device = NULL;
    for (cl_uint i = 0; i < num_platforms && !device; ++i) {
        cl_uint n = 0;
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &device, &n) != CL_SUCCESS) {
            device = NULL;
        }
    }
    EXPECT(device != NULL);
    cl_int err;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CL_OK(err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    CL_OK(err);

    tinytc_support_level_t level;
    OK(tinytc_cl_get_support_level(device, &level));
    EXPECT(level != tinytc_support_level_none);
    EXPECT_STATUS(tinytc_cl_get_support_level(device, NULL), tinytc_status_invalid_arguments);
    tinytc_core_info_t info;
    OK(tinytc_cl_core_info_create(&info, device));
    EXPECT_STATUS(tinytc_cl_core_info_create(NULL, device), tinytc_status_invalid_arguments);
    int32_t alignment = 0;
    OK(tinytc_core_info_get_default_alignment(info, &alignment));
    EXPECT(alignment > 0);

    /* bundle from a program (parse with a NULL context, as simple_cl does) */
    tinytc_prog_t program;
    OK(tinytc_parse_string(&program, sizeof(source), source, NULL));
    cl_program bundle;
    OK(tinytc_cl_kernel_bundle_create_with_program(&bundle, context, device, program, 0u));
    if (run_copy(context, queue, bundle, 13)) return 1;
    clReleaseProgram(bundle);

    /* bundle from a binary */
    tinytc_binary_t bin;
    OK(tinytc_prog_compile_to_spirv_and_assemble(&bin, program, info));
    OK(tinytc_cl_kernel_bundle_create_with_binary(&bundle, context, device, bin));
    if (run_copy(context, queue, bundle, 3)) return 1;
    clReleaseProgram(bundle);

    /* a binary that is no SPIR-V: build failure, log to the reporter */
    tinytc_compiler_context_t ctx;
    tinytc_binary_t junk;
    const uint8_t garbage[16] = {1, 2, 3, 4};
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_compiler_context_set_error_reporter(ctx, reporter, NULL));
    OK(tinytc_binary_create(&junk, ctx, tinytc_bundle_format_spirv, sizeof(garbage), garbage, 0));
    EXPECT_STATUS(tinytc_cl_kernel_bundle_create_with_binary(&bundle, context, device, junk),
                  tinytc_status_compute_runtime_error);
    EXPECT(reports == 1);
    EXPECT_STATUS(tinytc_cl_kernel_bundle_create_with_binary(NULL, context, device, bin),
                  tinytc_status_invalid_arguments);
    OK(tinytc_binary_release(junk));
    OK(tinytc_compiler_context_release(ctx));
    OK(tinytc_binary_release(bin));
    OK(tinytc_prog_release(program));

    /* the recipes with every memory kind the OpenCL handler accepts */
    cl_platform_id platform;
    CL_OK(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof(platform), &platform, NULL));
    shared_alloc = (clSharedMemAllocINTEL_fn)clGetExtensionFunctionAddressForPlatform(
        platform, "clSharedMemAllocINTEL");
    usm_free = (clMemBlockingFreeINTEL_fn)clGetExtensionFunctionAddressForPlatform(
        platform, "clMemBlockingFreeINTEL");
    EXPECT(shared_alloc != NULL && usm_free != NULL); /* cl_intel_unified_shared_memory */
    const tinytc_mem_type_t kinds[3] = {tinytc_mem_type_buffer, tinytc_mem_type_usm_pointer,
                                        tinytc_mem_type_svm_pointer};
    for (int k = 0; k < 3; ++k) {
        if (run_recipe(context, device, queue, info, 0.0f, kinds[k])) return 1;
        if (run_recipe(context, device, queue, info, 0.5f, kinds[k])) return 1;
        if (run_tall_and_skinny(context, device, queue, info, 0.0f, kinds[k])) return 1;
        if (run_tall_and_skinny(context, device, queue, info, 1.0f, kinds[k])) return 1;
    }
    OK(tinytc_core_info_release(info));
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    printf("ok\n");
    return 0;
}
