/* Times builder C API calls: each row makes N calls (argv[1], default 10000) of one function
 * after one untimed warm-up call and prints "name<TAB>total ms" (benchmarks/capi_calls.py makes
 * the table). Every call's status is checked; the program exits 1 on the first failure. */
#include <tinytc/tinytc.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(X)                                                                               \
    do {                                                                                       \
        tinytc_status_t s_ = (X);                                                              \
        if (s_ != tinytc_status_success) {                                                     \
            fprintf(stderr, "%s: %s\n", #X, tinytc_status_to_string(s_));                      \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

#define TIME(name, body)                                                                       \
    do {                                                                                       \
        double t0_;                                                                            \
        body;                                                                                  \
        t0_ = now_ms();                                                                        \
        for (i = 0; i < n; ++i) {                                                              \
            body;                                                                              \
        }                                                                                      \
        printf("%s\t%.3f\n", name, now_ms() - t0_);                                            \
    } while (0)

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 10000, i;
    tinytc_compiler_context_t ctx;
    tinytc_type_t f32, memref, void_ty;
    tinytc_inst_t inst, *insts;
    tinytc_value_t a, b;
    tinytc_func_t fun;
    tinytc_region_t body;
    size_t one = 1;
    const int64_t shape[2] = {32, 32};

    CHECK(tinytc_compiler_context_create(&ctx));
    CHECK(tinytc_f32_type_get(&f32, ctx));
    CHECK(tinytc_void_type_get(&void_ty, ctx));
    CHECK(tinytc_func_create(&fun, 1, "f", 0, NULL, void_ty, NULL));
    CHECK(tinytc_func_get_body(fun, &body));
    CHECK(tinytc_constant_inst_create_float(&inst, 1.0, f32, NULL));
    CHECK(tinytc_inst_get_values(inst, &one, &a));
    CHECK(tinytc_region_append(body, inst));
    b = a;
    insts = malloc((size_t)(n + 1) * sizeof(*insts));

    TIME("tinytc_f32_type_get", CHECK(tinytc_f32_type_get(&f32, ctx)));
    TIME("tinytc_memref_type_get",
         CHECK(tinytc_memref_type_get(&memref, f32, 2, shape, 0, NULL,
                                      tinytc_address_space_global)));
    TIME("tinytc_constant_inst_create_float + tinytc_inst_destroy", {
        CHECK(tinytc_constant_inst_create_float(&inst, 2.0, f32, NULL));
        tinytc_inst_destroy(inst);
    });
    TIME("tinytc_add_inst_create + tinytc_inst_destroy", {
        CHECK(tinytc_add_inst_create(&inst, a, b, f32, NULL));
        tinytc_inst_destroy(inst);
    });
    {
        long k = 0;
        TIME("tinytc_add_inst_create", CHECK(tinytc_add_inst_create(&insts[k++], a, b, f32, NULL)));
        k = 0;
        TIME("tinytc_region_append", CHECK(tinytc_region_append(body, insts[k++])));
    }
    TIME("tinytc_inst_get_values", CHECK(tinytc_inst_get_values(insts[0], &one, &a)));
    TIME("tinytc_value_get_type", CHECK(tinytc_value_get_type(a, &f32)));

    free(insts);
    tinytc_func_destroy(fun);
    CHECK(tinytc_compiler_context_release(ctx));
    return 0;
}
