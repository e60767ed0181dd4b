/* C API fuzzer: `fuzz SEED N` makes N random calls with random and invalid arguments (NULL
 * handles and out-pointers, sizes with NULL arrays, shapes at the int64 edges, unknown enum
 * values, random source bytes and mutated programs, values of the wrong type), building
 * instructions into a function and compiling it now and then. Every call must return a known
 * status code; a crash is the test's failure. Prints the number of calls and of successes. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>

static uint64_t state;

static uint64_t next(void) { /* xorshift64* */
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 2685821657736338717ULL;
}

static int64_t pick_int(void) {
    static const int64_t edges[] = {0, 1, -1, 2, 16, 1000, INT32_MAX, INT64_MAX, INT64_MIN,
                                    INT64_MIN + 1, (int64_t)1 << 62, -((int64_t)1 << 40)};
    return next() % 2 ? edges[next() % (sizeof(edges) / sizeof(edges[0]))] : (int64_t)next();
}

#define POOL 64
static tinytc_type_t types[POOL];
static tinytc_value_t values[POOL];
static size_t num_types, num_values;
static long calls, successes;

static tinytc_type_t any_type(void) { return next() % 8 ? types[next() % num_types] : NULL; }
static tinytc_value_t any_value(void) { return next() % 8 ? values[next() % num_values] : NULL; }

static int known(tinytc_status_t s, const char *what) {
    ++calls;
    if (s == tinytc_status_success) {
        ++successes;
        return 1;
    }
    if (strcmp(tinytc_status_to_string(s), "unknown") == 0) {
        fprintf(stderr, "%s returned the unknown status %d\n", what, (int)s);
        exit(1);
    }
    return 0;
}

static void add_value(tinytc_inst_t inst, tinytc_region_t body) {
    size_t n = 1;
    tinytc_value_t v = NULL;
    if (known(tinytc_region_append(body, inst), "region_append") &&
        known(tinytc_inst_get_values(inst, &n, &v), "inst_get_values") && n == 1 &&
        num_values < POOL) {
        values[num_values++] = v;
    }
}

static void random_call(tinytc_compiler_context_t ctx, tinytc_region_t body) {
    tinytc_type_t ty = NULL;
    tinytc_inst_t inst = NULL;
    int64_t shape[3] = {pick_int(), pick_int(), pick_int()};
    tinytc_value_t idx[2] = {any_value(), any_value()};
    size_t rank = next() % 4;
    switch (next() % 10) {
    case 0:
        if (known(tinytc_memref_type_get(&ty, any_type(), rank, next() % 16 ? shape : NULL,
                                         next() % 2 ? rank : 0, shape,
                                         (tinytc_address_space_t)(next() % 4)),
                  "memref_type_get") && num_types < POOL)
            types[num_types++] = ty;
        break;
    case 1:
        known(tinytc_group_type_get(&ty, any_type(), pick_int(), pick_int()), "group_type_get");
        break;
    case 2:
        if (known(tinytc_constant_inst_create_int(&inst, pick_int(), any_type(), NULL),
                  "constant_inst_create_int"))
            add_value(inst, body);
        break;
    case 3:
        if (known(tinytc_constant_inst_create_float(&inst, (double)pick_int() / 3, any_type(),
                                                    NULL),
                  "constant_inst_create_float"))
            add_value(inst, body);
        break;
    case 4:
        if (known(tinytc_add_inst_create(&inst, any_value(), any_value(), any_type(), NULL),
                  "add_inst_create"))
            add_value(inst, body);
        break;
    case 5:
        if (known(tinytc_cast_inst_create(&inst, any_value(), any_type(), NULL),
                  "cast_inst_create"))
            add_value(inst, body);
        break;
    case 6:
        if (known(tinytc_load_inst_create(&inst, any_value(), next() % 3, next() % 8 ? idx : NULL,
                                          any_type(), NULL),
                  "load_inst_create"))
            add_value(inst, body);
        break;
    case 7:
        if (known(tinytc_store_inst_create(&inst, any_value(), any_value(), next() % 3,
                                           next() % 8 ? idx : NULL, NULL),
                  "store_inst_create"))
            known(tinytc_region_append(body, inst), "region_append");
        break;
    case 8: /* NULL out-pointers and handles */
        known(tinytc_add_inst_create(NULL, any_value(), any_value(), any_type(), NULL),
              "add_inst_create(NULL)");
        known(tinytc_region_append(next() % 2 ? body : NULL, NULL), "region_append(NULL)");
        known(tinytc_i32_type_get(NULL, ctx), "i32_type_get(NULL)");
        known(tinytc_prog_release(NULL), "prog_release(NULL)");
        break;
    default: { /* random bytes, then a valid program with one byte changed */
        static const char valid[] = "func @k(%a: memref<f32x8>, %b: f32) {\n"
                                    "  %c = constant 3 : index\n  store %b, %a[%c]\n}\n";
        char text[sizeof(valid)];
        tinytc_prog_t prog = NULL;
        memcpy(text, valid, sizeof(valid));
        if (next() % 2) {
            for (size_t i = 0; i < sizeof(text); ++i)
                text[i] = (char)next();
        } else {
            text[next() % sizeof(text)] = (char)next();
        }
        if (known(tinytc_parse_string(&prog, next() % (sizeof(text) + 1), text, ctx), "parse"))
            known(tinytc_prog_release(prog), "prog_release");
    }
    }
}

static void compile(tinytc_compiler_context_t ctx, tinytc_func_t fun, tinytc_core_info_t info) {
    tinytc_prog_t prog = NULL;
    tinytc_spv_mod_t mod = NULL;
    char *text = NULL;
    known(tinytc_prog_create(&prog, ctx, NULL), "prog_create");
    known(tinytc_prog_add_function(prog, fun), "prog_add_function");
    if (known(tinytc_prog_print_to_string(prog, &text), "prog_print_to_string"))
        tinytc_string_destroy(text);
    if (known(tinytc_prog_compile_to_spirv(&mod, prog, info), "prog_compile_to_spirv"))
        known(tinytc_spv_mod_release(mod), "spv_mod_release");
    known(tinytc_prog_release(prog), "prog_release");
}

static void quiet(char const *what, const tinytc_location_t *loc, void *user_data) {
    (void)what, (void)loc, (void)user_data;
}

int main(int argc, char **argv) {
    tinytc_compiler_context_t ctx = NULL;
    tinytc_core_info_t info = NULL;
    long n = argc > 2 ? atol(argv[2]) : 1000;
    state = (argc > 1 ? strtoull(argv[1], NULL, 10) : 1) * 0x9E3779B97F4A7C15ULL + 1;
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_compiler_context_set_error_reporter(ctx, quiet, NULL));
    OK(tinytc_core_info_intel_create_from_arch(&info, tinytc_intel_gpu_architecture_pvc));
    for (long done = 0; done < n;) {
        tinytc_func_t fun = NULL;
        tinytc_region_t body = NULL;
        tinytc_type_t params[4], void_ty = NULL;
        size_t num_params = 4;
        num_types = num_values = 0;
        OK(tinytc_f32_type_get(&params[0], ctx));
        OK(tinytc_index_type_get(&params[1], ctx));
        OK(tinytc_memref_type_get(&params[2], params[0], 1, (int64_t[]){8}, 0, NULL,
                                  tinytc_address_space_global));
        OK(tinytc_i32_type_get(&params[3], ctx));
        memcpy(types, params, sizeof(params));
        num_types = 4;
        OK(tinytc_void_type_get(&void_ty, ctx));
        OK(tinytc_func_create(&fun, 1, "k", num_params, params, void_ty, NULL));
        OK(tinytc_func_get_body(fun, &body));
        OK(tinytc_region_get_parameters(body, &num_params, values));
        num_values = num_params;
        for (int k = 0; k < 20 && done < n; ++k, ++done)
            random_call(ctx, body);
        compile(ctx, fun, info);
    }
    OK(tinytc_core_info_release(info));
    OK(tinytc_compiler_context_release(ctx));
    printf("calls=%ld successes=%ld\nok\n", calls, successes);
    return 0;
}
