/* The OpenCL counterpart of check.h for the C test programs that call OpenCL themselves: on an
 * error code CL_OK prints the call and the code to stderr and makes main() return 1. */
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

#endif
