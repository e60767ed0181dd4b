/* The language extensions through the C API: tinytc_prog_add_global, the derived creators of
 * global_ref, subgroup_shuffle_xor, work_group_reduce_add, printf, select, bitcast, sqrt, pow
 * and fma, their restrictions as status codes, and the extensions flag (off: compiling fails
 * with tinytc_status_ext_disabled, reported with the instruction's location). Prints the
 * program, then the reporter's message; argv[1] receives the SPIR-V. */
#include "check.h"

#define CREATE(var, call)                                                                      \
    do {                                                                                       \
        tinytc_inst_t i_;                                                                      \
        size_t one_ = 1;                                                                       \
        tinytc_inst_t *instr = &i_;                                                            \
        OK(call);                                                                              \
        OK(tinytc_inst_get_values(i_, &one_, &(var)));                                         \
        OK(tinytc_region_append(where, i_));                                                   \
    } while (0)

typedef tinytc_status_t (*unary_create_t)(tinytc_inst_t *, tinytc_value_t, tinytc_type_t,
                                           const tinytc_location_t *);
typedef tinytc_status_t (*binary_create_t)(tinytc_inst_t *, tinytc_value_t, tinytc_value_t,
                                            tinytc_type_t, const tinytc_location_t *);
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The same-signature creators of the extensions: (a) -> result and (a, b) -> result. */
static const unary_create_t float_unary[] = {
    tinytc_sqrt_inst_create,  tinytc_rsqrt_inst_create, tinytc_tanh_inst_create,
    tinytc_erf_inst_create,   tinytc_floor_inst_create, tinytc_ceil_inst_create,
    tinytc_round_inst_create, tinytc_trunc_inst_create};
static const unary_create_t work_group[] = {
    tinytc_work_group_exclusive_scan_add_inst_create,
    tinytc_work_group_exclusive_scan_max_inst_create,
    tinytc_work_group_exclusive_scan_min_inst_create,
    tinytc_work_group_inclusive_scan_add_inst_create,
    tinytc_work_group_inclusive_scan_max_inst_create,
    tinytc_work_group_inclusive_scan_min_inst_create,
    tinytc_work_group_reduce_add_inst_create,
    tinytc_work_group_reduce_max_inst_create,
    tinytc_work_group_reduce_min_inst_create};
static const binary_create_t with_lane[] = {
    tinytc_subgroup_shuffle_inst_create, tinytc_subgroup_shuffle_xor_inst_create,
    tinytc_subgroup_shuffle_up_inst_create, tinytc_subgroup_shuffle_down_inst_create,
    tinytc_work_group_broadcast_inst_create};

static void report(char const *what, const tinytc_location_t *loc, void *user_data) {
    (void)user_data;
    printf("reported at %d.%d: %s\n", (int)loc->begin.line, (int)loc->begin.column, what);
}

/* func @k(%o: memref<f32x4>, %x: f32, %n: i32) { %t = global_ref @tab; parallel { ... } } */
static int build(tinytc_compiler_context_t ctx, tinytc_prog_t program) {
    tinytc_type_t f32, f64, i32, bool_ty, void_ty, vec, types[3];
    tinytc_func_t fun;
    tinytc_region_t body, where;
    tinytc_value_t params[3], t, l, s, q, w, c, sel, bits, p, fm, v;
    tinytc_inst_t par, inst;
    tinytc_location_t loc = {{1, 7, 5}, {1, 7, 30}};
    const int64_t shape[1] = {4};
    size_t n = 3, k;

    OK(tinytc_f32_type_get(&f32, ctx));
    OK(tinytc_f64_type_get(&f64, ctx));
    OK(tinytc_i32_type_get(&i32, ctx));
    OK(tinytc_boolean_type_get(&bool_ty, ctx));
    OK(tinytc_void_type_get(&void_ty, ctx));
    OK(tinytc_memref_type_get(&vec, f32, 1, shape, 0, NULL, tinytc_address_space_global));
    types[0] = vec;
    types[1] = f32;
    types[2] = i32;
    OK(tinytc_func_create(&fun, 1, "k", 3, types, void_ty, NULL));
    OK(tinytc_func_get_body(fun, &body));
    OK(tinytc_region_get_parameters(body, &n, params));
    OK(tinytc_value_set_name(params[0], "o"));
    OK(tinytc_value_set_name(params[1], "x"));
    OK(tinytc_value_set_name(params[2], "n"));
    where = body;
    CREATE(t, tinytc_global_ref_inst_create(instr, "tab", vec, &loc));
    OK(tinytc_parallel_inst_create(&par, NULL));
    n = 1;
    OK(tinytc_inst_get_regions(par, &n, &where));
    CREATE(l, tinytc_subgroup_local_id_inst_create(instr, i32, NULL));
    CREATE(s, tinytc_subgroup_shuffle_xor_inst_create(instr, params[1], params[2], f32, NULL));
    CREATE(q, tinytc_sqrt_inst_create(instr, s, f32, NULL));
    CREATE(w, tinytc_work_group_reduce_add_inst_create(instr, q, f32, NULL));
    CREATE(c, tinytc_less_than_inst_create(instr, w, params[1], bool_ty, NULL));
    CREATE(sel, tinytc_select_inst_create(instr, c, w, q, f32, NULL));
    CREATE(bits, tinytc_bitcast_inst_create(instr, sel, i32, NULL));
    CREATE(p, tinytc_pow_inst_create(instr, sel, params[1], f32, NULL));
    CREATE(fm, tinytc_fma_inst_create(instr, p, p, sel, f32, NULL));
    OK(tinytc_printf_inst_create(&inst, "lane %d: %f %d\\n", 3, (tinytc_value_t[]){l, fm, bits},
                                 NULL));
    OK(tinytc_region_append(where, inst));
    for (k = 0; k < COUNT(float_unary); ++k) {
        CREATE(v, float_unary[k](instr, params[1], f32, NULL));
    }
    for (k = 0; k < COUNT(work_group); ++k) {
        CREATE(v, work_group[k](instr, params[1], f32, NULL));
    }
    for (k = 0; k < COUNT(with_lane); ++k) {
        CREATE(v, with_lane[k](instr, params[1], params[2], f32, NULL));
    }

    /* restrictions of the extensions as status codes */
    EXPECT_STATUS(tinytc_bitcast_inst_create(&inst, sel, f64, NULL),
                  tinytc_status_ext_bitcast_size_mismatch);
    EXPECT_STATUS(tinytc_printf_inst_create(&inst, "%d", 1, &sel, NULL),
                  tinytc_status_ext_printf_format_mismatch);
    EXPECT_STATUS(tinytc_printf_inst_create(&inst, NULL, 0, NULL, NULL),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_select_inst_create(&inst, l, w, q, f32, NULL),
                  tinytc_status_ir_expected_boolean);
    EXPECT_STATUS(tinytc_subgroup_shuffle_inst_create(&inst, w, w, f32, NULL),
                  tinytc_status_ir_expected_i32);
    EXPECT_STATUS(tinytc_sqrt_inst_create(&inst, l, i32, NULL), tinytc_status_ir_int_unsupported);

    OK(tinytc_region_append(body, par));
    OK(tinytc_prog_add_function(program, fun));
    return 0;
}

int main(int argc, char **argv) {
    tinytc_compiler_context_t ctx, off;
    tinytc_prog_t program, portable;
    tinytc_type_t f32, c32, void_ty, vec, vec3, cvec;
    tinytc_func_t named_tab;
    tinytc_core_info_t info;
    tinytc_binary_t bin;
    tinytc_bundle_format_t format;
    const uint8_t *data;
    size_t size;
    const int64_t shape[1] = {4}, shape3[1] = {3};
    const float tab[4] = {1.0f, 2.5f, -3.0f, 0.25f};
    const float ctab[4] = {1.0f, -2.0f, 0.5f, 0.0f}; /* two c32: (re, im) pairs */
    const int64_t shape2[1] = {2};
    char *text;
    FILE *f;

    EXPECT(argc == 2);
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_prog_create(&program, ctx, NULL));
    OK(tinytc_f32_type_get(&f32, ctx));
    OK(tinytc_memref_type_get(&vec, f32, 1, shape, 0, NULL, tinytc_address_space_global));
    OK(tinytc_memref_type_get(&vec3, f32, 1, shape3, 0, NULL, tinytc_address_space_global));
    OK(tinytc_prog_add_global(program, "tab", vec, sizeof tab, tab, NULL));
    EXPECT_STATUS(tinytc_prog_add_global(program, "tab", vec, sizeof tab, tab, NULL),
                  tinytc_status_ext_global_redefined);
    EXPECT_STATUS(tinytc_prog_add_global(program, "short", vec3, sizeof tab, tab, NULL),
                  tinytc_status_ext_invalid_global);
    EXPECT_STATUS(tinytc_prog_add_global(program, "odd", vec, 6, tab, NULL),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_prog_add_global(program, "scalar", f32, 4, tab, NULL),
                  tinytc_status_ext_invalid_global);
    EXPECT_STATUS(tinytc_prog_add_global(program, NULL, vec, sizeof tab, tab, NULL),
                  tinytc_status_invalid_arguments);
    OK(tinytc_c32_type_get(&c32, ctx));
    OK(tinytc_memref_type_get(&cvec, c32, 1, shape2, 0, NULL, tinytc_address_space_global));
    OK(tinytc_prog_add_global(program, "ctab", cvec, sizeof ctab, ctab, NULL));
    if (build(ctx, program)) {
        return 1;
    }
    /* globals and functions share one namespace, in either order */
    EXPECT_STATUS(tinytc_prog_add_global(program, "k", vec, sizeof tab, tab, NULL),
                  tinytc_status_ext_global_redefined);
    OK(tinytc_void_type_get(&void_ty, ctx));
    OK(tinytc_func_create(&named_tab, 3, "tab", 0, NULL, void_ty, NULL));
    EXPECT_STATUS(tinytc_prog_add_function(program, named_tab),
                  tinytc_status_ext_global_redefined);
    tinytc_func_destroy(named_tab);
    OK(tinytc_prog_print_to_string(program, &text));
    printf("%s", text);
    tinytc_string_destroy(text);
    OK(tinytc_core_info_intel_create_from_arch(&info, tinytc_intel_gpu_architecture_pvc));
    OK(tinytc_prog_compile_to_spirv_and_assemble(&bin, program, info));
    OK(tinytc_binary_get_raw(bin, &format, &size, &data));
    f = fopen(argv[1], "wb");
    EXPECT(f != NULL);
    EXPECT(fwrite(data, 1, size, f) == size);
    fclose(f);
    OK(tinytc_binary_release(bin));

    /* extensions off: the same program does not compile; a global cannot be defined */
    OK(tinytc_compiler_context_create(&off));
    OK(tinytc_compiler_context_set_optimization_flag(off, tinytc_optflag_extensions, 0));
    OK(tinytc_compiler_context_set_error_reporter(off, report, NULL));
    OK(tinytc_prog_create(&portable, off, NULL));
    OK(tinytc_f32_type_get(&f32, off));
    OK(tinytc_memref_type_get(&vec, f32, 1, shape, 0, NULL, tinytc_address_space_global));
    EXPECT_STATUS(tinytc_prog_add_global(portable, "tab", vec, sizeof tab, tab, NULL),
                  tinytc_status_ext_disabled);
    if (build(off, portable)) {
        return 1;
    }
    EXPECT_STATUS(tinytc_prog_compile_to_spirv_and_assemble(&bin, portable, info),
                  tinytc_status_ext_disabled);
    OK(tinytc_prog_release(portable));
    OK(tinytc_compiler_context_release(off));
    OK(tinytc_core_info_release(info));
    OK(tinytc_prog_release(program));
    OK(tinytc_compiler_context_release(ctx));
    return 0;
}
