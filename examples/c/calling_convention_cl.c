/* The kernel calling convention from C (docs/c-api.rst, "Calling convention of kernels"): a
 * kernel with a scalar, a memref of dynamic size and a group of dynamic size with a dynamic
 * offset, called with clSetKernelArg on the first OpenCL device.
 *
 * For each member k of the group, B_k = alpha A + B_k, where A is M x N and B_k is M x N with a
 * leading dimension of its own (M + k), stored from element `offset` of its buffer on.
 * Build: gcc calling_convention_cl.c $(pkg-config --cflags --libs tinytc_cl) */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <tinytc/tinytc.h>
#include <tinytc/tinytc_cl.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char source[] =
    "func @axpy_group(%alpha: f32, %A: memref<f32x?x?>,\n"
    "                 %Bs: group<memref<f32x?x?>x?, offset: ?>) {\n"
    "    %k = group_id.x : index\n"
    "    %B = load %Bs[%k] : memref<f32x?x?>\n"
    "    %one = constant 1.0 : f32\n"
    "    axpby.n %alpha, %A, %one, %B\n"
    "}\n";

enum { M = 5, N = 3, MEMBERS = 3 };

/* Copies `bytes` from host memory into coarse-grained SVM memory. */
static cl_int svm_write(cl_command_queue queue, void *svm, const void *data, size_t bytes) {
    cl_int err = clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_WRITE, svm, bytes, 0, NULL, NULL);
    if (err != CL_SUCCESS) return err;
    memcpy(svm, data, bytes);
    return clEnqueueSVMUnmap(queue, svm, 0, NULL, NULL);
}

static cl_int svm_read(cl_command_queue queue, void *data, void *svm, size_t bytes) {
    cl_int err = clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_READ, svm, bytes, 0, NULL, NULL);
    if (err != CL_SUCCESS) return err;
    memcpy(data, svm, bytes);
    err = clEnqueueSVMUnmap(queue, svm, 0, NULL, NULL);
    return err != CL_SUCCESS ? err : clFinish(queue);
}

static int run(cl_context context, cl_device_id device, cl_command_queue queue) {
    const int64_t m = M, n = N, members = MEMBERS, offset = 2;
    const float alpha = 2.0f;
    int64_t shape0[MEMBERS], shape1[MEMBERS], stride1[MEMBERS];
    float a[M * N], b[MEMBERS][2 + (M + MEMBERS) * N];
    float *A = NULL, *B[MEMBERS] = {NULL}, **Bs = NULL;
    int64_t *shape0_dev = NULL, *shape1_dev = NULL, *stride1_dev = NULL;
    tinytc_prog_t prog = NULL;
    cl_program bundle = NULL;
    cl_kernel kernel = NULL;
    cl_int err = CL_SUCCESS;
    int ok = 0, errors = 0;

    for (int i = 0; i < M * N; ++i) a[i] = (float)i;
    for (int k = 0; k < MEMBERS; ++k) {
        shape0[k] = m;
        shape1[k] = n;
        stride1[k] = m + k; /* each member its own leading dimension */
        for (size_t i = 0; i < sizeof b[k] / sizeof(float); ++i) b[k][i] = (float)(100 * k);
    }
    if (tinytc_parse_string(&prog, sizeof(source), source, NULL) != tinytc_status_success ||
        tinytc_cl_kernel_bundle_create_with_program(&bundle, context, device, prog, 0u) !=
            tinytc_status_success) {
        fprintf(stderr, "compiling the kernel failed\n");
        goto done;
    }
    kernel = clCreateKernel(bundle, "axpy_group", &err);
    if (err != CL_SUCCESS) goto done;

    /* Device memory: A, the members, the array of member pointers and one int64 array per
     * dynamic entry of the member type (shape 0, shape 1, stride 1). */
    A = clSVMAlloc(context, CL_MEM_READ_ONLY, sizeof a, 0);
    Bs = clSVMAlloc(context, CL_MEM_READ_ONLY, sizeof B, 0);
    shape0_dev = clSVMAlloc(context, CL_MEM_READ_ONLY, sizeof shape0, 0);
    shape1_dev = clSVMAlloc(context, CL_MEM_READ_ONLY, sizeof shape1, 0);
    stride1_dev = clSVMAlloc(context, CL_MEM_READ_ONLY, sizeof stride1, 0);
    int allocated = A && Bs && shape0_dev && shape1_dev && stride1_dev;
    for (int k = 0; k < MEMBERS; ++k) {
        B[k] = clSVMAlloc(context, CL_MEM_READ_WRITE, sizeof b[k], 0);
        allocated = allocated && B[k];
    }
    if (!allocated) {
        fprintf(stderr, "clSVMAlloc failed\n");
        goto done;
    }
    err = svm_write(queue, A, a, sizeof a);
    for (int k = 0; k < MEMBERS && err == CL_SUCCESS; ++k) {
        err = svm_write(queue, B[k], b[k], sizeof b[k]);
    }
    if (err == CL_SUCCESS) err = svm_write(queue, Bs, B, sizeof B);
    if (err == CL_SUCCESS) err = svm_write(queue, shape0_dev, shape0, sizeof shape0);
    if (err == CL_SUCCESS) err = svm_write(queue, shape1_dev, shape1, sizeof shape1);
    if (err == CL_SUCCESS) err = svm_write(queue, stride1_dev, stride1, sizeof stride1);
    if (err != CL_SUCCESS) goto done;

    /* The kernel arguments, parameter by parameter:
     * %alpha (scalar):        0 the value
     * %A (memref<f32x?x?>):   1 base pointer, 2 shape 0, 3 shape 1, 4 stride 1 (the canonical
     *                         stride of ?x? is [1, ?]; stride 0 is static)
     * %Bs (group):            5 array of base pointers, 6 int64 array of shape 0, 7 of shape 1,
     *                         8 of stride 1, 9 the group size, 10 the offset */
    err |= clSetKernelArg(kernel, 0, sizeof alpha, &alpha);
    err |= clSetKernelArgSVMPointer(kernel, 1, A);
    err |= clSetKernelArg(kernel, 2, sizeof m, &m);
    err |= clSetKernelArg(kernel, 3, sizeof n, &n);
    err |= clSetKernelArg(kernel, 4, sizeof m, &m);
    err |= clSetKernelArgSVMPointer(kernel, 5, Bs);
    err |= clSetKernelArgSVMPointer(kernel, 6, shape0_dev);
    err |= clSetKernelArgSVMPointer(kernel, 7, shape1_dev);
    err |= clSetKernelArgSVMPointer(kernel, 8, stride1_dev);
    err |= clSetKernelArg(kernel, 9, sizeof members, &members);
    err |= clSetKernelArg(kernel, 10, sizeof offset, &offset);
    /* The member pointers are read by the kernel, not passed as arguments: say so. */
    if (err == CL_SUCCESS) {
        err = clSetKernelExecInfo(kernel, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof B, B);
    }
    if (err != CL_SUCCESS) {
        fprintf(stderr, "setting the arguments failed\n");
        goto done;
    }
    size_t local[3], global[3], groups[3] = {MEMBERS, 1, 1}; /* one work-group per member */
    if (tinytc_cl_get_group_size(kernel, local) != tinytc_status_success) goto done;
    tinytc_cl_get_global_size(groups, local, global);
    err = clEnqueueNDRangeKernel(queue, kernel, 3, NULL, global, local, 0, NULL, NULL);
    for (int k = 0; k < MEMBERS && err == CL_SUCCESS; ++k) {
        float out[sizeof b[k] / sizeof(float)];
        err = svm_read(queue, out, B[k], sizeof out);
        for (size_t i = 0; err == CL_SUCCESS && i < sizeof out / sizeof(float); ++i) {
            /* element (r, c) of member k is at offset + r + c * (M + k); the rest is untouched */
            long e = (long)i - offset, ld = M + k, r = e % ld, c = e / ld;
            int inside = e >= 0 && r < M && c < N;
            float want = (float)(100 * k) + (inside ? alpha * a[r + c * M] : 0.0f);
            errors += out[i] != want;
        }
    }
    if (err != CL_SUCCESS) goto done;
    printf("calling convention: %d of %d entries wrong\n", errors,
           (int)(MEMBERS * sizeof b[0] / sizeof(float)));
    ok = errors == 0;
done:
    if (err != CL_SUCCESS) fprintf(stderr, "OpenCL error %d\n", err);
    clFinish(queue);
    for (int k = 0; k < MEMBERS; ++k) clSVMFree(context, B[k]);
    clSVMFree(context, A);
    clSVMFree(context, Bs);
    clSVMFree(context, shape0_dev);
    clSVMFree(context, shape1_dev);
    clSVMFree(context, stride1_dev);
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
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (err != CL_SUCCESS) return 1;
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    if (err != CL_SUCCESS) return 1;
    int ok = run(context, device, queue);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return ok ? 0 : 1;
}
