/* The kernel cache through the OpenCL C API: parse, compile to a binary, build a kernel bundle
 * from it (tinytc_cl_kernel_bundle_create_with_binary) on the host's context, run the kernel
 * (B = 3 A) and check the result. With the argument "off" the compiler context's
 * tinytc_optflag_kernel_cache flag is cleared first. Prints "ok"; the test reads the cache
 * folder and its statistics. */
#include "cl_check.h"

#include <tinytc/tinytc_cl.h>

#include <stdint.h>
#include <string.h>

static const char source[] = "func @triple(%A: memref<i32x32>, %B: memref<i32x32>) {\n"
                             "    %three = constant 3 : i32\n"
                             "    %zero = constant 0 : i32\n"
                             "    axpby.n %three, %A, %zero, %B\n"
                             "}\n";

int main(int argc, char **argv) {
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    if (open_first_device(&device, &context, &queue)) {
        return 1;
    }
    cl_int err;

    tinytc_compiler_context_t ctx;
    OK(tinytc_compiler_context_create(&ctx));
    if (argc > 1 && strcmp(argv[1], "off") == 0) {
        OK(tinytc_compiler_context_set_optimization_flag(ctx, tinytc_optflag_kernel_cache, 0));
    }
    tinytc_core_info_t info;
    OK(tinytc_cl_core_info_create(&info, device));
    tinytc_prog_t program;
    OK(tinytc_parse_string(&program, sizeof(source), source, ctx));
    tinytc_binary_t bin;
    OK(tinytc_prog_compile_to_spirv_and_assemble(&bin, program, info));
    cl_program bundle;
    OK(tinytc_cl_kernel_bundle_create_with_binary(&bundle, context, device, bin));

    cl_kernel kernel = clCreateKernel(bundle, "triple", &err);
    CL_OK(err);
    int32_t a[32], b[32];
    for (int i = 0; i < 32; ++i) {
        a[i] = i - 5;
    }
    cl_mem A = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
    CL_OK(err);
    cl_mem B = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof b, NULL, &err);
    CL_OK(err);
    CL_OK(clSetKernelArg(kernel, 0, sizeof A, &A));
    CL_OK(clSetKernelArg(kernel, 1, sizeof B, &B));
    size_t ls[3], gs[3], ng[3] = {1, 1, 1};
    OK(tinytc_cl_get_group_size(kernel, ls));
    tinytc_cl_get_global_size(ng, ls, gs);
    CL_OK(clEnqueueNDRangeKernel(queue, kernel, 3, NULL, gs, ls, 0, NULL, NULL));
    CL_OK(clEnqueueReadBuffer(queue, B, CL_TRUE, 0, sizeof b, b, 0, NULL, NULL));
    for (int i = 0; i < 32; ++i) {
        EXPECT(b[i] == 3 * a[i]);
    }

    clReleaseMemObject(A);
    clReleaseMemObject(B);
    clReleaseKernel(kernel);
    clReleaseProgram(bundle);
    tinytc_binary_release(bin);
    tinytc_prog_release(program);
    tinytc_core_info_release(info);
    tinytc_compiler_context_release(ctx);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    printf("ok\n");
    return 0;
}
