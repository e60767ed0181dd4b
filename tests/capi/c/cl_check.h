/* The OpenCL counterpart of check.h for the C test programs that call OpenCL themselves: on an
 * error code CL_OK prints the call and the code to stderr and makes the function return 1. */
#ifndef TINYTC_TEST_CL_CHECK_H
#define TINYTC_TEST_CL_CHECK_H

#include "check.h"

#include <CL/cl.h>

#define CL_OK(expr)                                                                            \
    do {                                                                                       \
        cl_int e_ = (expr);                                                                    \
        if (e_ != CL_SUCCESS) {                                                                \
            fprintf(stderr, "%s:%d: %s gave OpenCL error %d\n", __FILE__, __LINE__, #expr, e_); \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

/* The first device of the first platform (the CPU runtime in the tests), a context and a queue
 * on it; returns 0, or 1 after printing the failing call. */
static inline int open_first_device(cl_device_id *device, cl_context *context,
                                    cl_command_queue *queue) {
    cl_platform_id platform;
    CL_OK(clGetPlatformIDs(1, &platform, NULL));
    CL_OK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, device, NULL));
    cl_int err;
    *context = clCreateContext(NULL, 1, device, NULL, NULL, &err);
    CL_OK(err);
    *queue = clCreateCommandQueueWithProperties(*context, *device, NULL, &err);
    CL_OK(err);
    return 0;
}

#endif
