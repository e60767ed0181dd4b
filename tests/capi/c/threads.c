/* Concurrency: `threads pthreads|openmp N ROUNDS` runs N host threads at once, each ROUNDS
 * times parsing its own program (a per-thread constant in it), building a second one with the
 * builder API, compiling both, building an OpenCL kernel bundle and launching it on a shared
 * queue-less context (one queue per thread), and checking the result. The core info and the
 * OpenCL context are shared; compiler contexts and programs belong to one thread each (the
 * documented rule). Prints "ok" when every thread succeeded. */
#include "cl_check.h"

#include <tinytc/tinytc_cl.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

static cl_context context;
static cl_device_id device;
static tinytc_core_info_t info;
static int rounds = 2;

/* fill: B[i] = A[i] + K for i < 64, K specific to the thread and round */
static int launch(cl_program bundle, cl_command_queue queue, int32_t k) {
    cl_int err;
    int32_t a[64], b[64];
    for (int i = 0; i < 64; ++i) a[i] = i;
    cl_kernel kernel = clCreateKernel(bundle, "fill", &err);
    CL_OK(err);
    cl_mem A = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(a), a,
                              &err);
    CL_OK(err);
    cl_mem B = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(b), NULL, &err);
    CL_OK(err);
    CL_OK(clSetKernelArg(kernel, 0, sizeof(A), &A));
    CL_OK(clSetKernelArg(kernel, 1, sizeof(B), &B));
    size_t ls[3], gs[3], ng[3] = {1, 1, 1};
    OK(tinytc_cl_get_group_size(kernel, ls));
    tinytc_cl_get_global_size(ng, ls, gs);
    CL_OK(clEnqueueNDRangeKernel(queue, kernel, 3, NULL, gs, ls, 0, NULL, NULL));
    CL_OK(clEnqueueReadBuffer(queue, B, CL_TRUE, 0, sizeof(b), b, 0, NULL, NULL));
    for (int i = 0; i < 64; ++i) {
        if (b[i] != i + k) {
            fprintf(stderr, "B[%d] = %d, expected %d\n", i, b[i], i + k);
            return 1;
        }
    }
    clReleaseMemObject(A);
    clReleaseMemObject(B);
    clReleaseKernel(kernel);
    return 0;
}

/* the same kernel through the builder API: %A, %B memref<i32x64>, foreach i: B[i] = A[i]+k */
static int build(tinytc_prog_t *prog, int32_t k) {
    tinytc_compiler_context_t ctx;
    tinytc_type_t i32, index, mr, void_ty, params[2];
    tinytc_func_t fun;
    tinytc_region_t body, loop_body;
    tinytc_value_t args[2], bounds[2], kv, i, x, y;
    tinytc_inst_t inst;
    size_t n = 2;
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_i32_type_get(&i32, ctx));
    OK(tinytc_index_type_get(&index, ctx));
    OK(tinytc_void_type_get(&void_ty, ctx));
    OK(tinytc_memref_type_get(&mr, i32, 1, (int64_t[]){64}, 0, NULL,
                              tinytc_address_space_global));
    params[0] = params[1] = mr;
    OK(tinytc_func_create(&fun, 4, "fill", 2, params, void_ty, NULL));
    OK(tinytc_func_get_body(fun, &body));
    OK(tinytc_region_get_parameters(body, &n, args));
    for (int b = 0; b < 2; ++b) {
        OK(tinytc_constant_inst_create_int(&inst, b ? 64 : 0, index, NULL));
        OK(tinytc_region_append(body, inst));
        n = 1;
        OK(tinytc_inst_get_values(inst, &n, &bounds[b]));
    }
    OK(tinytc_constant_inst_create_int(&inst, k, i32, NULL));
    OK(tinytc_region_append(body, inst));
    n = 1;
    OK(tinytc_inst_get_values(inst, &n, &kv));
    OK(tinytc_foreach_inst_create(&inst, 1, &bounds[0], 1, &bounds[1], NULL));
    OK(tinytc_region_append(body, inst));
    n = 1;
    OK(tinytc_inst_get_regions(inst, &n, &loop_body));
    n = 1;
    OK(tinytc_region_get_parameters(loop_body, &n, &i));
    OK(tinytc_load_inst_create(&inst, args[0], 1, &i, i32, NULL));
    OK(tinytc_region_append(loop_body, inst));
    n = 1;
    OK(tinytc_inst_get_values(inst, &n, &x));
    OK(tinytc_add_inst_create(&inst, x, kv, i32, NULL));
    OK(tinytc_region_append(loop_body, inst));
    n = 1;
    OK(tinytc_inst_get_values(inst, &n, &y));
    OK(tinytc_store_inst_create(&inst, y, args[1], 1, &i, NULL));
    OK(tinytc_region_append(loop_body, inst));
    OK(tinytc_prog_create(prog, ctx, NULL));
    OK(tinytc_prog_add_function(*prog, fun));
    OK(tinytc_compiler_context_release(ctx)); /* the program keeps it alive */
    return 0;
}

static int work(int id) {
    cl_int err;
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    CL_OK(err);
    for (int r = 0; r < rounds; ++r) {
        int32_t k = 1000 * id + 2 * r;
        char source[512];
        int len = snprintf(source, sizeof(source),
                           "func @fill(%%A: memref<i32x64>, %%B: memref<i32x64>) {\n"
                           "    %%c0 = constant 0 : index\n    %%c64 = constant 64 : index\n"
                           "    %%k = constant %d : i32\n"
                           "    foreach (%%i) = (%%c0), (%%c64) {\n"
                           "        %%x = load %%A[%%i] : i32\n        %%y = add %%x, %%k : i32\n"
                           "        store %%y, %%B[%%i]\n    }\n}\n",
                           (int)k);
        tinytc_prog_t parsed, built;
        tinytc_binary_t bin;
        cl_program bundle;
        OK(tinytc_parse_string(&parsed, (size_t)len, source, NULL));
        OK(tinytc_prog_compile_to_spirv_and_assemble(&bin, parsed, info));
        OK(tinytc_cl_kernel_bundle_create_with_binary(&bundle, context, device, bin));
        if (launch(bundle, queue, k)) return 1;
        clReleaseProgram(bundle);
        OK(tinytc_binary_release(bin));
        OK(tinytc_prog_release(parsed));
        if (build(&built, k + 1)) return 1;
        OK(tinytc_cl_kernel_bundle_create_with_program(&bundle, context, device, built, 0u));
        if (launch(bundle, queue, k + 1)) return 1;
        clReleaseProgram(bundle);
        OK(tinytc_prog_release(built));
    }
    clReleaseCommandQueue(queue);
    return 0;
}

static void *thread_main(void *arg) { return (void *)(intptr_t)work((int)(intptr_t)arg); }

int main(int argc, char **argv) {
    int n = argc > 2 ? atoi(argv[2]) : 8, failed = 0;
    rounds = argc > 3 ? atoi(argv[3]) : 2;
    cl_platform_id platforms[8];
    cl_uint num_platforms = 0;
    CL_OK(clGetPlatformIDs(8, platforms, &num_platforms));
    for (cl_uint i = 0; i < num_platforms && !device; ++i) {
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS)
            device = NULL;
    }
    EXPECT(device != NULL);
    cl_int err;
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CL_OK(err);
    OK(tinytc_cl_core_info_create(&info, device));
    if (argc > 1 && strcmp(argv[1], "openmp") == 0) {
#pragma omp parallel for num_threads(n) reduction(+ : failed)
        for (int t = 0; t < n; ++t) failed += work(t);
    } else {
        pthread_t threads[64];
        for (int t = 0; t < n; ++t) pthread_create(&threads[t], NULL, thread_main, (void *)(intptr_t)t);
        for (int t = 0; t < n; ++t) {
            void *status;
            pthread_join(threads[t], &status);
            failed += (int)(intptr_t)status;
        }
    }
    OK(tinytc_core_info_release(info));
    clReleaseContext(context);
    EXPECT(failed == 0);
    printf("%d threads x %d rounds\nok\n", n, rounds);
    return 0;
}
