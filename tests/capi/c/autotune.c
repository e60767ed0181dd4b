/* The autotuner through the OpenCL C API: the compiler context's tinytc_optflag_autotune flag
 * is set, a batched GEMM (C_i = 1.5 A_i B_i + 0.5 C_i, one work-group per batch entry) is
 * compiled for the host's device with tinytc_cl_kernel_bundle_create_with_program, which tunes
 * its register blocking on that device, run, and checked against a reference computed here.
 * With the argument "off" the flag is left at its default (off). Prints the lowered program (it
 * shows the blocking the compile used) and then "ok"; the test reads the tuning cache and the
 * statistics. */
#include "cl_check.h"

#include <tinytc/tinytc_cl.h>

#include <math.h>
#include <string.h>

enum { M = 32, N = 24, K = 16, BATCH = 8 };

static const char source[] =
    "func @gemm(%A: memref<f32x32x16x8>, %B: memref<f32x16x24x8>, %C: memref<f32x32x24x8>) {\n"
    "    %gid = group_id.x : index\n"
    "    %a = subview %A[0:32,0:16,%gid] : memref<f32x32x16>\n"
    "    %b = subview %B[0:16,0:24,%gid] : memref<f32x16x24>\n"
    "    %c = subview %C[0:32,0:24,%gid] : memref<f32x32x24>\n"
    "    %alpha = constant 1.5 : f32\n"
    "    %beta = constant 0.5 : f32\n"
    "    gemm.n.n %alpha, %a, %b, %beta, %c\n"
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
    if (argc < 2 || strcmp(argv[1], "off") != 0) {
        OK(tinytc_compiler_context_set_optimization_flag(ctx, tinytc_optflag_autotune, 1));
    }
    tinytc_prog_t program;
    OK(tinytc_parse_string(&program, sizeof(source), source, ctx));
    cl_program bundle;
    OK(tinytc_cl_kernel_bundle_create_with_program(&bundle, context, device, program, 0));
    char *lowered;
    OK(tinytc_prog_print_to_string(program, &lowered));
    printf("%s", lowered);
    tinytc_string_destroy(lowered);

    static float a[BATCH][K][M], b[BATCH][N][K], c[BATCH][N][M], want[BATCH][N][M];
    for (int i = 0; i < BATCH; ++i) {
        for (int k = 0; k < K; ++k) {
            for (int m = 0; m < M; ++m) {
                a[i][k][m] = (float)((i + 2 * k + 3 * m) % 7 - 3) / 4;
            }
        }
        for (int n = 0; n < N; ++n) {
            for (int k = 0; k < K; ++k) {
                b[i][n][k] = (float)((3 * i + k + 2 * n) % 5 - 2) / 2;
            }
            for (int m = 0; m < M; ++m) {
                c[i][n][m] = (float)((i + m + n) % 3 - 1);
                double sum = 0;
                for (int k = 0; k < K; ++k) {
                    sum += (double)a[i][k][m] * b[i][n][k];
                }
                want[i][n][m] = (float)(1.5 * sum + 0.5 * c[i][n][m]);
            }
        }
    }
    cl_mem bufs[3];
    float *host[3] = {&a[0][0][0], &b[0][0][0], &c[0][0][0]};
    size_t sizes[3] = {sizeof a, sizeof b, sizeof c};
    cl_kernel kernel = clCreateKernel(bundle, "gemm", &err);
    CL_OK(err);
    for (int j = 0; j < 3; ++j) {
        bufs[j] = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizes[j],
                                 host[j], &err);
        CL_OK(err);
        CL_OK(clSetKernelArg(kernel, j, sizeof bufs[j], &bufs[j]));
    }
    size_t ls[3], gs[3], ng[3] = {BATCH, 1, 1};
    OK(tinytc_cl_get_group_size(kernel, ls));
    tinytc_cl_get_global_size(ng, ls, gs);
    CL_OK(clEnqueueNDRangeKernel(queue, kernel, 3, NULL, gs, ls, 0, NULL, NULL));
    CL_OK(clEnqueueReadBuffer(queue, bufs[2], CL_TRUE, 0, sizeof c, c, 0, NULL, NULL));
    for (int i = 0; i < BATCH; ++i) {
        for (int n = 0; n < N; ++n) {
            for (int m = 0; m < M; ++m) {
                EXPECT(fabsf(c[i][n][m] - want[i][n][m]) <= 1e-4f * K);
            }
        }
    }

    for (int j = 0; j < 3; ++j) {
        clReleaseMemObject(bufs[j]);
    }
    clReleaseKernel(kernel);
    clReleaseProgram(bundle);
    tinytc_prog_release(program);
    tinytc_compiler_context_release(ctx);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    printf("ok\n");
    return 0;
}
