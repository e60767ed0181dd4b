/* OpenCL example: runs the small GEMM batched recipe and a custom kernel written in the tensor
 * language on the first OpenCL device, using the program's own cl_context and queue.
 * Build: gcc simple_cl.c $(pkg-config --cflags --libs tinytc_cl) */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <tinytc/tinytc.h>
#include <tinytc/tinytc_cl.h>

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
#define CL_CHECK(X)                                                                            \
    do {                                                                                       \
        cl_int e_ = (X);                                                                       \
        if (e_ != CL_SUCCESS) {                                                                \
            fprintf(stderr, "%s failed: OpenCL error %d\n", #X, e_);                          \
            goto fail;                                                                         \
        }                                                                                      \
    } while (0)

/* C_i = A_i B_i for 100 batches of 16x16 matrices; A_i is all ones, B_i the identity * i. */
static int gemm(cl_context context, cl_device_id device, cl_command_queue queue) {
    enum { n = 16, howmany = 100 };
    int ok = 0;
    tinytc_core_info_t info = NULL;
    tinytc_compiler_context_t ctx = NULL;
    tinytc_recipe_t recipe = NULL;
    tinytc_recipe_handler_t handler = NULL;
    tinytc_type_t f32;
    cl_mem A = NULL, B = NULL, C = NULL;
    float *a = calloc(n * n * howmany, sizeof(float));
    float *b = calloc(n * n * howmany, sizeof(float));
    float *c = calloc(n * n * howmany, sizeof(float));
    for (int h = 0; h < howmany; ++h) {
        for (int i = 0; i < n * n; ++i) a[i + h * n * n] = 1.0f;
        for (int i = 0; i < n; ++i) b[i + i * n + h * n * n] = (float)h;
    }
    cl_int err;
    CHECK(tinytc_cl_core_info_create(&info, device));
    CHECK(tinytc_compiler_context_create(&ctx));
    CHECK(tinytc_f32_type_get(&f32, ctx));
    CHECK(tinytc_recipe_small_gemm_batched_create(&recipe, info, f32, tinytc_transpose_N,
                                                  tinytc_transpose_N, n, n, n, n, n * n, n, n * n,
                                                  n, n * n));
    CHECK(tinytc_cl_recipe_handler_create(&handler, context, device, recipe));
    size_t bytes = sizeof(float) * n * n * howmany;
    A = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a, &err);
    CL_CHECK(err);
    B = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b, &err);
    CL_CHECK(err);
    C = clCreateBuffer(context, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
    CL_CHECK(err);
    const float alpha = 1.0f, beta = 0.0f;
    CHECK(tinytc_recipe_small_gemm_batched_set_args(handler, howmany, sizeof(alpha), &alpha,
                                                    tinytc_mem_type_buffer, A,
                                                    tinytc_mem_type_buffer, B, sizeof(beta), &beta,
                                                    tinytc_mem_type_buffer, C));
    CHECK(tinytc_cl_recipe_handler_submit(handler, queue, 0, NULL, NULL));
    CL_CHECK(clEnqueueReadBuffer(queue, C, CL_TRUE, 0, bytes, c, 0, NULL, NULL));
    int errors = 0;
    for (int h = 0; h < howmany; ++h) {
        for (int i = 0; i < n * n; ++i) errors += c[i + h * n * n] != (float)h;
    }
    printf("gemm: %d of %d entries wrong\n", errors, n * n * howmany);
    ok = errors == 0;
fail:
    if (A) clReleaseMemObject(A);
    if (B) clReleaseMemObject(B);
    if (C) clReleaseMemObject(C);
    tinytc_recipe_handler_release(handler);
    tinytc_recipe_release(recipe);
    tinytc_compiler_context_release(ctx);
    tinytc_core_info_release(info);
    free(a);
    free(b);
    free(c);
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
static int custom_kernel(cl_context context, cl_device_id device, cl_command_queue queue) {
    enum { rows = 32 };
    const int64_t cols = 50;
    int ok = 0;
    tinytc_prog_t prog = NULL;
    cl_program bundle = NULL;
    cl_kernel kernel = NULL;
    cl_mem A = NULL, B = NULL;
    int32_t a[rows * 50], b[rows * 50];
    for (int i = 0; i < rows * cols; ++i) a[i] = i;
    cl_int err;
    CHECK(tinytc_parse_string(&prog, sizeof(source), source, NULL));
    CHECK(tinytc_cl_kernel_bundle_create_with_program(&bundle, context, device, prog, 0u));
    kernel = clCreateKernel(bundle, "scale", &err);
    CL_CHECK(err);
    A = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(a), a, &err);
    CL_CHECK(err);
    B = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof(b), NULL, &err);
    CL_CHECK(err);
    /* each memref is its buffer, then its dynamic extents as int64 (docs/c-api.rst, "Calling
     * convention of kernels"; examples/c/calling_convention_cl.c shows groups too) */
    CL_CHECK(clSetKernelArg(kernel, 0, sizeof(A), &A));
    CL_CHECK(clSetKernelArg(kernel, 1, sizeof(cols), &cols));
    CL_CHECK(clSetKernelArg(kernel, 2, sizeof(B), &B));
    CL_CHECK(clSetKernelArg(kernel, 3, sizeof(cols), &cols));
    size_t ls[3], gs[3], ng[3] = {(size_t)cols, 1, 1};
    CHECK(tinytc_cl_get_group_size(kernel, ls));
    tinytc_cl_get_global_size(ng, ls, gs);
    CL_CHECK(clEnqueueNDRangeKernel(queue, kernel, 3, NULL, gs, ls, 0, NULL, NULL));
    CL_CHECK(clEnqueueReadBuffer(queue, B, CL_TRUE, 0, sizeof(b), b, 0, NULL, NULL));
    int errors = 0;
    for (int i = 0; i < rows * cols; ++i) errors += b[i] != 3 * a[i];
    printf("custom kernel: %d of %d entries wrong\n", errors, (int)(rows * cols));
    ok = errors == 0;
fail:
    if (A) clReleaseMemObject(A);
    if (B) clReleaseMemObject(B);
    if (kernel) clReleaseKernel(kernel);
    if (bundle) clReleaseProgram(bundle);
    tinytc_prog_release(prog);
    return ok;
}

int main(void) {
    cl_platform_id platform;
    cl_device_id device;
    cl_uint count;
    cl_int err;
    if (clGetPlatformIDs(1, &platform, &count) != CL_SUCCESS || count == 0 ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, &count) != CL_SUCCESS) {
        fprintf(stderr, "no OpenCL device\n");
        return 1;
    }
    tinytc_support_level_t level;
    if (tinytc_cl_get_support_level(device, &level) != tinytc_status_success ||
        level == tinytc_support_level_none) {
        fprintf(stderr, "the device is not supported by tinytc\n");
        return 1;
    }
    printf("support level: %d\n", (int)level);
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (err != CL_SUCCESS) return 1;
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    if (err != CL_SUCCESS) return 1;
    int ok = gemm(context, device, queue) && custom_kernel(context, device, queue);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return ok ? 0 : 1;
}
