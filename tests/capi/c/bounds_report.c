/* Bounds-checked mode from a C host on its own OpenCL objects: the context flag
 * tinytc_optflag_bounds_checks, the trailing report record argument (TINYTC_BOUNDS_RECORD_LENGTH
 * int64, zeroed), and tinytc_binary_get_bounds_report turning the record read back into the
 * located message (recipes in this mode: recipe_bounds.c). The kernel copies A[g] to B[g] for
 * work-group g; launched on more work-groups than A has elements, the extra groups' loads are
 * reported and skipped.
 * Prints the message of the oversized launch, then "ok". */
#include "cl_check.h"

#include <tinytc/tinytc_cl.h>

#include <stdint.h>
#include <string.h>

static const char source[] = "func @copy(%A: memref<f32x?>, %B: memref<f32x?>) {\n"
                             "    %g = group_id.x : index\n"
                             "    %x = load %A[%g] : f32\n"
                             "    store %x, %B[%g]\n"
                             "}\n";

/* Launches copy on `groups` work-groups with A of 4 and B of 8 elements; B and the record
 * are read back. */
static int launch(cl_context context, cl_command_queue queue, cl_kernel kernel, size_t groups,
                  float *B, int64_t *record) {
    cl_int err;
    float A[4] = {1, 2, 3, 4};
    int64_t n = 4, m = 8;
    memset(record, 0, TINYTC_BOUNDS_RECORD_LENGTH * sizeof(int64_t));
    cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(A), A,
                              &err);
    CL_OK(err);
    cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, m * sizeof(float),
                              B, &err);
    CL_OK(err);
    cl_mem r = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              TINYTC_BOUNDS_RECORD_LENGTH * sizeof(int64_t), record, &err);
    CL_OK(err);
    CL_OK(clSetKernelArg(kernel, 0, sizeof(a), &a));
    CL_OK(clSetKernelArg(kernel, 1, sizeof(n), &n));
    CL_OK(clSetKernelArg(kernel, 2, sizeof(b), &b));
    CL_OK(clSetKernelArg(kernel, 3, sizeof(m), &m));
    CL_OK(clSetKernelArg(kernel, 4, sizeof(r), &r)); /* the report record comes last */
    size_t ls[3], gs[3], ng[3] = {groups, 1, 1};
    OK(tinytc_cl_get_group_size(kernel, ls));
    tinytc_cl_get_global_size(ng, ls, gs);
    CL_OK(clEnqueueNDRangeKernel(queue, kernel, 3, NULL, gs, ls, 0, NULL, NULL));
    CL_OK(clEnqueueReadBuffer(queue, b, CL_TRUE, 0, m * sizeof(float), B, 0, NULL, NULL));
    CL_OK(clEnqueueReadBuffer(queue, r, CL_TRUE, 0, TINYTC_BOUNDS_RECORD_LENGTH * sizeof(int64_t),
                              record, 0, NULL, NULL));
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(r);
    return 0;
}

int main(void) {
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    if (open_first_device(&device, &context, &queue)) return 1;
    tinytc_core_info_t info;
    OK(tinytc_cl_core_info_create(&info, device));

    tinytc_compiler_context_t ctx;
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_compiler_context_set_optimization_flag(ctx, tinytc_optflag_bounds_checks, 1));
    tinytc_prog_t program;
    OK(tinytc_parse_string(&program, sizeof(source), source, ctx));
    tinytc_binary_t bin;
    OK(tinytc_prog_compile_to_spirv_and_assemble(&bin, program, info));
    cl_program bundle;
    OK(tinytc_cl_kernel_bundle_create_with_binary(&bundle, context, device, bin));
    cl_int err;
    cl_kernel kernel = clCreateKernel(bundle, "copy", &err);
    CL_OK(err);

    float B[8] = {0, 0, 0, 0, -1, -1, -1, -1};
    int64_t record[TINYTC_BOUNDS_RECORD_LENGTH];
    char *message = NULL;
    if (launch(context, queue, kernel, 4, B, record)) return 1; /* in bounds */
    OK(tinytc_binary_get_bounds_report(bin, "copy", record, &message));
    EXPECT(message == NULL);
    for (int i = 0; i < 4; ++i) EXPECT(B[i] == (float)(i + 1) && B[i + 4] == -1.0f);

    if (launch(context, queue, kernel, 5, B, record)) return 1; /* group 4 is out of bounds */
    OK(tinytc_binary_get_bounds_report(bin, "copy", record, &message));
    EXPECT(message != NULL);
    printf("%s\n", message);
    tinytc_string_destroy(message);
    EXPECT(record[0] >= 1);
    for (int i = 0; i < 4; ++i) EXPECT(B[i] == (float)(i + 1));
    EXPECT(B[4] == 0.0f); /* the skipped load gives 0 */

    EXPECT_STATUS(tinytc_binary_get_bounds_report(bin, "nope", record, &message),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_binary_get_bounds_report(bin, "copy", NULL, &message),
                  tinytc_status_invalid_arguments);

    clReleaseKernel(kernel);
    clReleaseProgram(bundle);
    OK(tinytc_binary_release(bin));
    OK(tinytc_prog_release(program));
    OK(tinytc_compiler_context_release(ctx));
    OK(tinytc_core_info_release(info));
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    printf("ok\n");
    return 0;
}
