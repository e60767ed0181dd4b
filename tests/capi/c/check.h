/* Assertion macros for the C API test programs: on failure they print where and why to stderr
 * and make main() return 1. */
#ifndef TINYTC_TEST_CHECK_H
#define TINYTC_TEST_CHECK_H

#include <tinytc/tinytc.h>

#include <stdio.h>
#include <string.h>

#define EXPECT_STATUS(expr, expected)                                                          \
    do {                                                                                       \
        tinytc_status_t got_ = (expr);                                                         \
        if (got_ != (expected)) {                                                              \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s)\n", __FILE__,       \
                    __LINE__, #expr, (int)got_, tinytc_status_to_string(got_), (int)(expected), \
                    tinytc_status_to_string(expected));                                        \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

#define OK(expr) EXPECT_STATUS(expr, tinytc_status_success)

#define EXPECT(cond)                                                                           \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);                \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

#define EXPECT_STR(a, b)                                                                       \
    do {                                                                                       \
        const char *a_ = (a), *b_ = (b);                                                       \
        if (!a_ || strcmp(a_, b_) != 0) {                                                      \
            fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
                    a_ ? a_ : "(null)", b_);                                                   \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

#endif
