/* Builds `func @copy(%A: memref<f32x8x8>, %B: memref<f32x8x8>)`, which sets B = A with one
 * axpby, through the builder C API, and prints the program (tinytc_prog_dump writes to stderr).
 * Needs no device. Build: gcc builder.c $(pkg-config --cflags --libs tinytc) */
#include <tinytc/builder.h>
#include <tinytc/tinytc.h>

#include <stdio.h>
#include <string.h>

#define CHECK(X)                                                                               \
    do {                                                                                       \
        tinytc_status_t s_ = (X);                                                              \
        if (s_ != tinytc_status_success) {                                                     \
            fprintf(stderr, "%s failed: %s\n", #X, tinytc_status_to_string(s_));               \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

static int append_constant(tinytc_region_t body, tinytc_type_t ty, int one, tinytc_value_t *v) {
    tinytc_inst_t inst;
    size_t n = 1;
    if (one) {
        CHECK(tinytc_constant_inst_create_one(&inst, ty, NULL));
    } else {
        CHECK(tinytc_constant_inst_create_zero(&inst, ty, NULL));
    }
    CHECK(tinytc_inst_get_values(inst, &n, v));
    CHECK(tinytc_region_append(body, inst));
    return 0;
}

int main(void) {
    tinytc_compiler_context_t ctx;
    tinytc_prog_t prog;
    tinytc_type_t f32, mat, void_ty;
    const int64_t shape[2] = {8, 8};
    const char name[] = "copy";

    CHECK(tinytc_compiler_context_create(&ctx));
    CHECK(tinytc_prog_create(&prog, ctx, NULL));
    CHECK(tinytc_f32_type_get(&f32, ctx));
    CHECK(tinytc_memref_type_get(&mat, f32, 2, shape, 0, NULL, tinytc_address_space_global));
    CHECK(tinytc_void_type_get(&void_ty, ctx));

    tinytc_type_t params_ty[2] = {mat, mat};
    tinytc_func_t fun;
    CHECK(tinytc_func_create(&fun, strlen(name), name, 2, params_ty, void_ty, NULL));
    CHECK(tinytc_prog_add_function(prog, fun)); /* the program owns it; the handle stays usable */

    tinytc_region_t body;
    tinytc_value_t params[2];
    size_t num_params = 2;
    CHECK(tinytc_func_get_body(fun, &body));
    CHECK(tinytc_region_get_parameters(body, &num_params, params));
    CHECK(tinytc_value_set_name(params[0], "A"));
    CHECK(tinytc_value_set_name(params[1], "B"));

    tinytc_value_t alpha, beta;
    if (append_constant(body, f32, 1, &alpha) || append_constant(body, f32, 0, &beta)) {
        return 1;
    }
    tinytc_inst_t axpby;
    CHECK(tinytc_axpby_inst_create(&axpby, 0, tinytc_transpose_N, alpha, params[0], beta,
                                   params[1], NULL));
    CHECK(tinytc_region_append(body, axpby));

    CHECK(tinytc_prog_dump(prog));
    tinytc_prog_release(prog);
    tinytc_compiler_context_release(ctx);
    return 0;
}
