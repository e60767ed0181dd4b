/* One program through every function group of the core and builder C API, for the tests and
 * for valgrind (test_capi_all_groups.py). The other programs of tests/capi/c go deeper into a
 * group each (refcount.c, errors.c, builder_api.c, core_compile.c, info_strings.c,
 * cl_interop.c); this one adds what they leave out. Sections, in order:
 *   1. Common             every enum's to_string that the others do not call
 *   2. Reference counts   retain/release of each shared handle kind; NULL is refused
 *   3. Compiler context   optimization level/flag, error reporter with locations
 *   4. Errors             parse error (status + located report), NULL handles in each group,
 *                         invalid IR from the builder gives its ir_* status and creates nothing
 *   5. Data types         every type getter, uniquing, coopmatrix and group types
 *   6. Attributes         boolean, dictionary_attr_sort, inst_set_attr
 *   7. Instructions       a kernel using every instruction family (table-driven for the
 *                         same-signature arithmetic, math, comparison and subgroup creators)
 *   8. Ownership (1.6)    regions own appended instructions, the program owns its functions
 *   9. Core info, compile, SPIR-V module, binary
 *  10. Recipes            small GEMM batched and tall-and-skinny creation, getters, refcounts
 * Prints the kernel's text, then "spirv <bytes>" and "ok"; argv[1] receives the SPIR-V binary,
 * argv[2] its text (tinytc_spv_mod_print_to_file), stderr the same text (tinytc_spv_mod_dump). */
#include "check.h"

#include <stdint.h>

typedef tinytc_status_t (*binary_create_t)(tinytc_inst_t *, tinytc_value_t, tinytc_value_t,
                                           tinytc_type_t, const tinytc_location_t *);
typedef tinytc_status_t (*unary_create_t)(tinytc_inst_t *, tinytc_value_t, tinytc_type_t,
                                          const tinytc_location_t *);

struct reports {
    int count;
    tinytc_location_t last;
};

static void reporter(char const *what, const tinytc_location_t *location, void *user_data) {
    struct reports *r = (struct reports *)user_data;
    ++r->count;
    r->last = *location;
    fprintf(stderr, "report %d: %s\n", r->count, what);
}

/* Appends a freshly created instruction to *where and returns its first result (if any). */
static tinytc_status_t emit(tinytc_region_t where, tinytc_inst_t inst, tinytc_value_t *result) {
    size_t n = 1;
    tinytc_value_t v = NULL;
    if (result) {
        tinytc_status_t s = tinytc_inst_get_values(inst, &n, &v);
        if (s != tinytc_status_success) return s;
        if (n != 1) return tinytc_status_runtime_error;
        *result = v;
    }
    return tinytc_region_append(where, inst);
}
#define EMIT(result, call)                                                                     \
    do {                                                                                       \
        OK(call);                                                                              \
        OK(emit(where, inst, result));                                                         \
    } while (0)

static int common_strings(void) {
    EXPECT_STR(tinytc_reduce_mode_to_string(tinytc_reduce_mode_column), "column");
    EXPECT_STR(tinytc_checked_flag_to_string(tinytc_checked_flag_both), "both");
    EXPECT_STR(tinytc_memory_scope_to_string(tinytc_memory_scope_work_group), "work_group");
    EXPECT_STR(tinytc_core_feature_flag_to_string(tinytc_core_feature_flag_large_register_file),
               "large_register_file");
    EXPECT_STR(tinytc_bundle_format_to_string(tinytc_bundle_format_native), "native");
    EXPECT_STR(tinytc_optflag_to_string(tinytc_optflag_unsafe_fp_math), "unsafe_fp_math");
    EXPECT_STR(tinytc_mem_type_to_string(tinytc_mem_type_svm_pointer), "svm_pointer");
    EXPECT_STR(tinytc_mem_type_to_string((tinytc_mem_type_t)-1), "unknown");
    return 0;
}

static int reference_counts(tinytc_compiler_context_t ctx, tinytc_core_info_t info) {
    static const char text[] = "func @f() {\n}\n";
    tinytc_prog_t prog;
    tinytc_spv_mod_t mod;
    tinytc_binary_t bin;
    const uint8_t byte = 0;
    /* every shared kind: one retain + two releases frees it, a third release is refused */
    OK(tinytc_parse_string(&prog, sizeof(text), text, ctx));
    OK(tinytc_prog_compile_to_spirv(&mod, prog, info));
    OK(tinytc_binary_create(&bin, ctx, tinytc_bundle_format_spirv, 1, &byte, 0));
    OK(tinytc_prog_retain(prog));
    OK(tinytc_spv_mod_retain(mod));
    OK(tinytc_binary_retain(bin));
    OK(tinytc_prog_release(prog));
    OK(tinytc_spv_mod_release(mod));
    OK(tinytc_binary_release(bin));
    OK(tinytc_prog_dump(prog) == tinytc_status_success ? tinytc_status_success
                                                       : tinytc_status_runtime_error);
    OK(tinytc_prog_release(prog));
    OK(tinytc_spv_mod_release(mod));
    OK(tinytc_binary_release(bin));
    EXPECT_STATUS(tinytc_prog_release(prog), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_spv_mod_release(mod), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_binary_release(bin), tinytc_status_invalid_arguments);
    /* NULL for every retain */
    EXPECT_STATUS(tinytc_compiler_context_retain(NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_core_info_retain(NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_spv_mod_retain(NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_binary_retain(NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_recipe_retain(NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_recipe_handler_retain(NULL), tinytc_status_invalid_arguments);
    return 0;
}

static int compiler_context(tinytc_compiler_context_t ctx) {
    OK(tinytc_compiler_context_set_optimization_level(ctx, 1));
    OK(tinytc_compiler_context_set_optimization_flag(ctx, tinytc_optflag_unsafe_fp_math, 1));
    OK(tinytc_compiler_context_set_optimization_flag(ctx, tinytc_optflag_unsafe_fp_math, -1));
    EXPECT_STATUS(tinytc_compiler_context_set_optimization_flag(ctx, (tinytc_optflag_t)6, 1),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_compiler_context_set_optimization_flag(NULL, tinytc_optflag_unsafe_fp_math,
                                                                1),
                  tinytc_status_invalid_arguments);
    OK(tinytc_compiler_context_set_optimization_level(ctx, 2));
    return 0;
}

static int errors(tinytc_compiler_context_t ctx, struct reports *r) {
    static const char bad[] = "func @f() {\n  %x = constant 1 : i32\n  %y = foo %x\n}\n";
    tinytc_prog_t prog = NULL;
    tinytc_type_t i32, f32, ty = NULL;
    tinytc_value_t params[2];
    tinytc_func_t fun;
    tinytc_region_t body;
    tinytc_inst_t inst = NULL;
    tinytc_attr_t attr = NULL;
    size_t n = 2;
    const int count = r->count;

    EXPECT_STATUS(tinytc_parse_string(&prog, sizeof(bad), bad, ctx), tinytc_status_parse_error);
    EXPECT(prog == NULL);
    EXPECT(r->count == count + 1);
    EXPECT(r->last.begin.line == 3 && r->last.begin.column > 1);

    /* NULL handles and out-pointers, one per group */
    EXPECT_STATUS(tinytc_prog_print_to_string(NULL, NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_spv_mod_dump(NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_core_info_get_register_space(NULL, NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_compiler_context_add_source(NULL, "x", "y", NULL),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_binary_get_raw(NULL, NULL, NULL, NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_boolean_attr_get(&attr, NULL, 1), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_i32_type_get(&ty, NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_value_get_type(NULL, &ty), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_add_inst_create(NULL, NULL, NULL, NULL, NULL),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_inst_get_regions(NULL, &n, NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_region_append(NULL, NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_func_get_body(NULL, &body), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_prog_create(NULL, ctx, NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_recipe_get_prog(NULL, &prog), tinytc_status_invalid_arguments);

    /* invalid IR from the builder: the specific ir_* status, nothing created, nothing reported */
    OK(tinytc_i32_type_get(&i32, ctx));
    OK(tinytc_f32_type_get(&f32, ctx));
    {
        tinytc_type_t types[2] = {i32, f32};
        OK(tinytc_func_create(&fun, 1, "g", 2, types, NULL, NULL) == tinytc_status_success
               ? tinytc_status_runtime_error /* a NULL return type is refused */
               : tinytc_status_success);
        OK(tinytc_void_type_get(&ty, ctx));
        OK(tinytc_func_create(&fun, 1, "g", 2, types, ty, NULL));
    }
    OK(tinytc_func_get_body(fun, &body));
    OK(tinytc_region_get_parameters(body, &n, params));
    EXPECT_STATUS(tinytc_add_inst_create(&inst, params[0], params[1], i32, NULL),
                  tinytc_status_ir_number_mismatch);
    EXPECT(inst == NULL);
    EXPECT_STATUS(tinytc_sin_inst_create(&inst, params[0], i32, NULL),
                  tinytc_status_ir_int_unsupported);
    EXPECT_STATUS(tinytc_load_inst_create(&inst, params[0], 0, NULL, i32, NULL),
                  tinytc_status_ir_expected_memref_or_group);
    EXPECT_STATUS(tinytc_coopmatrix_type_get(&ty, f32, 16, 16, (tinytc_matrix_use_t)9),
                  tinytc_status_invalid_arguments);
    EXPECT(inst == NULL);
    EXPECT(r->count == count + 1);
    tinytc_func_destroy(fun);
    return 0;
}

static int data_types(tinytc_compiler_context_t ctx, tinytc_type_t *types) {
    tinytc_type_t again, coop, group, memref;
    tinytc_compiler_context_t got;
    const int64_t shape[2] = {16, 16};
    int i;
    OK(tinytc_boolean_type_get(&types[0], ctx));
    OK(tinytc_i8_type_get(&types[1], ctx));
    OK(tinytc_i16_type_get(&types[2], ctx));
    OK(tinytc_i32_type_get(&types[3], ctx));
    OK(tinytc_i64_type_get(&types[4], ctx));
    OK(tinytc_index_type_get(&types[5], ctx));
    OK(tinytc_bf16_type_get(&types[6], ctx));
    OK(tinytc_f16_type_get(&types[7], ctx));
    OK(tinytc_f32_type_get(&types[8], ctx));
    OK(tinytc_f64_type_get(&types[9], ctx));
    OK(tinytc_c32_type_get(&types[10], ctx));
    OK(tinytc_c64_type_get(&types[11], ctx));
    OK(tinytc_void_type_get(&types[12], ctx));
    for (i = 0; i < 13; ++i) {
        int j;
        for (j = 0; j < i; ++j) EXPECT(types[i] != types[j]);
        OK(tinytc_type_get_compiler_context(types[i], &got));
        EXPECT(got == ctx);
    }
    OK(tinytc_f64_type_get(&again, ctx));
    EXPECT(again == types[9]); /* uniqued: equal arguments give the same handle */
    OK(tinytc_coopmatrix_type_get(&coop, types[8], 16, 8, tinytc_matrix_use_acc));
    OK(tinytc_coopmatrix_type_get(&again, types[8], 16, 8, tinytc_matrix_use_acc));
    EXPECT(coop == again);
    OK(tinytc_coopmatrix_type_get(&again, types[8], 16, 8, tinytc_matrix_use_a));
    EXPECT(coop != again);
    OK(tinytc_memref_type_get(&memref, types[8], 2, shape, 0, NULL, tinytc_address_space_global));
    OK(tinytc_group_type_get(&group, memref, TINYTC_DYNAMIC, 0));
    OK(tinytc_group_type_get(&again, memref, TINYTC_DYNAMIC, 0));
    EXPECT(group == again);
    OK(tinytc_type_get_compiler_context(group, &got));
    EXPECT(got == ctx);
    EXPECT_STATUS(tinytc_group_type_get(&again, types[8], 4, 0), tinytc_status_ir_expected_memref);
    return 0;
}

static int attributes(tinytc_compiler_context_t ctx, tinytc_attr_t *dict) {
    tinytc_attr_t yes, no, again, zeta, alpha;
    tinytc_named_attr_t items[2];
    OK(tinytc_boolean_attr_get(&yes, ctx, 1));
    OK(tinytc_boolean_attr_get(&no, ctx, 0));
    OK(tinytc_boolean_attr_get(&again, ctx, 7)); /* any non-zero is true */
    EXPECT(yes != no && again == yes);
    OK(tinytc_string_attr_get(&zeta, ctx, 4, "zeta"));
    OK(tinytc_string_attr_get(&alpha, ctx, 5, "alpha"));
    items[0].name = zeta;
    items[0].attr = yes;
    items[1].name = alpha;
    items[1].attr = no;
    OK(tinytc_dictionary_attr_sort(2, items));
    EXPECT(items[0].name == alpha && items[1].name == zeta && items[1].attr == yes);
    OK(tinytc_dictionary_attr_get_with_sorted(dict, ctx, 2, items));
    EXPECT_STATUS(tinytc_dictionary_attr_sort(2, NULL), tinytc_status_invalid_arguments);
    return 0;
}

/* The same-signature creators: (a, b) -> result and (a) -> result. */
static const binary_create_t int_binary[] = {
    tinytc_add_inst_create, tinytc_sub_inst_create, tinytc_mul_inst_create,
    tinytc_div_inst_create, tinytc_rem_inst_create, tinytc_max_inst_create,
    tinytc_min_inst_create, tinytc_shl_inst_create, tinytc_shr_inst_create,
    tinytc_and_inst_create, tinytc_or_inst_create,  tinytc_xor_inst_create};
static const binary_create_t comparisons[] = {
    tinytc_equal_inst_create,        tinytc_not_equal_inst_create,
    tinytc_greater_than_inst_create, tinytc_greater_than_equal_inst_create,
    tinytc_less_than_inst_create,    tinytc_less_than_equal_inst_create};
static const unary_create_t float_unary[] = {
    tinytc_abs_inst_create,        tinytc_neg_inst_create,         tinytc_cos_inst_create,
    tinytc_native_cos_inst_create, tinytc_sin_inst_create,         tinytc_native_sin_inst_create,
    tinytc_exp_inst_create,        tinytc_native_exp_inst_create,  tinytc_exp2_inst_create,
    tinytc_native_exp2_inst_create, tinytc_log_inst_create,        tinytc_native_log_inst_create,
    tinytc_log2_inst_create,       tinytc_native_log2_inst_create};
static const unary_create_t subgroup_ops[] = {
    tinytc_subgroup_exclusive_scan_add_inst_create, tinytc_subgroup_exclusive_scan_max_inst_create,
    tinytc_subgroup_exclusive_scan_min_inst_create, tinytc_subgroup_inclusive_scan_add_inst_create,
    tinytc_subgroup_inclusive_scan_max_inst_create, tinytc_subgroup_inclusive_scan_min_inst_create,
    tinytc_subgroup_reduce_add_inst_create,         tinytc_subgroup_reduce_max_inst_create,
    tinytc_subgroup_reduce_min_inst_create};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Builds func @all(%A: memref<f32x16x16>, %B: memref<f32x16x16>, %x: memref<f32x16>,
 * %y: memref<f32x16>, %n: i32, %z: memref<c32x16>) into prog. */
static int instructions(tinytc_compiler_context_t ctx, tinytc_prog_t prog, const tinytc_type_t *t,
                        tinytc_attr_t dict) {
    const tinytc_type_t i32 = t[3], index_ty = t[5], f32 = t[8], c32 = t[10], bool_ty = t[0];
    tinytc_type_t mat, vec, cvec, local_vec, vec4x4, flat, ca, cb, cc, group_ty;
    tinytc_type_t param_types[7];
    tinytc_func_t fun;
    tinytc_region_t body, where, regions[2];
    tinytc_inst_t inst, parallel;
    tinytc_value_t p[7], one, zero, c0, c4, c16, n2, v, fv, res, zv, gi;
    size_t n, i;
    const int64_t shape2[2] = {16, 16}, shape1[1] = {16}, four[2] = {4, 4};
    const int64_t off[2] = {0, 0}, sizes[2] = {16, 16}, tile[2] = {16, 8};

    OK(tinytc_memref_type_get(&mat, f32, 2, shape2, 0, NULL, tinytc_address_space_global));
    OK(tinytc_memref_type_get(&vec, f32, 1, shape1, 0, NULL, tinytc_address_space_global));
    OK(tinytc_memref_type_get(&cvec, c32, 1, shape1, 0, NULL, tinytc_address_space_global));
    OK(tinytc_memref_type_get(&local_vec, f32, 1, shape1, 0, NULL, tinytc_address_space_local));
    OK(tinytc_memref_type_get(&vec4x4, f32, 2, four, 0, NULL, tinytc_address_space_global));
    OK(tinytc_group_type_get(&group_ty, vec, 4, 0));
    param_types[0] = param_types[1] = mat;
    param_types[2] = param_types[3] = vec;
    param_types[4] = i32;
    param_types[5] = cvec;
    param_types[6] = group_ty;
    OK(tinytc_func_create(&fun, 3, "all", 7, param_types, t[12], NULL));
    OK(tinytc_func_set_attr(fun, dict));
    OK(tinytc_func_get_body(fun, &body));
    n = 7;
    OK(tinytc_region_get_parameters(body, &n, p));
    EXPECT(n == 7);
    where = body;

    /* constants and the collective BLAS family */
    EMIT(&one, tinytc_constant_inst_create_one(&inst, f32, NULL));
    EMIT(&zero, tinytc_constant_inst_create_zero(&inst, f32, NULL));
    EMIT(&c0, tinytc_constant_inst_create_int(&inst, 0, index_ty, NULL));
    EMIT(&c4, tinytc_constant_inst_create_int(&inst, 4, index_ty, NULL));
    EMIT(&c16, tinytc_constant_inst_create_int(&inst, 16, index_ty, NULL));
    EMIT(&n2, tinytc_constant_inst_create_int(&inst, 2, i32, NULL));
    EMIT(NULL, tinytc_gemm_inst_create(&inst, 0, tinytc_transpose_N, tinytc_transpose_T, one, p[0],
                                       p[0], zero, p[1], NULL));
    EMIT(NULL, tinytc_gemv_inst_create(&inst, 0, tinytc_transpose_N, one, p[0], p[2], zero, p[3],
                                       NULL));
    EMIT(NULL, tinytc_ger_inst_create(&inst, 0, one, p[2], p[3], one, p[1], NULL));
    EMIT(NULL, tinytc_hadamard_inst_create(&inst, 0, one, p[2], p[2], zero, p[3], NULL));
    EMIT(NULL, tinytc_sum_inst_create(&inst, 0, tinytc_transpose_N, one, p[1], zero, p[2], NULL));
    EMIT(NULL, tinytc_cumsum_inst_create(&inst, 0, 0, one, p[2], zero, p[3], NULL));
    EMIT(&v, tinytc_alloca_inst_create(&inst, local_vec, NULL));
    EMIT(NULL, tinytc_lifetime_stop_inst_create(&inst, v, NULL));
    EMIT(NULL, tinytc_barrier_inst_create(
                   &inst, tinytc_address_space_global | tinytc_address_space_local, NULL));

    /* memref views and queries */
    EMIT(&v, tinytc_size_inst_create(&inst, 1, p[0], index_ty, NULL));
    EMIT(&v, tinytc_subview_inst_create(&inst, 2, off, 2, sizes, p[0], 0, NULL, 0, NULL, mat, NULL));
    OK(tinytc_memref_type_get(&flat, f32, 1, (const int64_t[]){256}, 0, NULL,
                              tinytc_address_space_global));
    EMIT(&v, tinytc_fuse_inst_create(&inst, 0, 1, p[0], flat, NULL));
    EMIT(&v, tinytc_expand_inst_create(&inst, 0, 2, four, p[2], 0, NULL, vec4x4, NULL));
    EMIT(&gi, tinytc_group_id_inst_create(&inst, tinytc_comp3_x, index_ty, NULL));
    EMIT(&v, tinytc_num_groups_inst_create(&inst, tinytc_comp3_y, index_ty, NULL));
    EMIT(&v, tinytc_num_subgroups_inst_create(&inst, tinytc_comp3_x, i32, NULL));
    EMIT(&v, tinytc_subgroup_size_inst_create(&inst, i32, NULL));
    EMIT(&v, tinytc_load_inst_create(&inst, p[6], 1, &c0, vec, NULL)); /* group -> memref */
    EMIT(&v, tinytc_associated_inst_create(&inst, v, bool_ty, NULL));

    /* scalar arithmetic, math and comparisons (mixed: valid in the collective body) */
    EMIT(&fv, tinytc_load_inst_create(&inst, p[2], 1, &c0, f32, NULL));
    for (i = 0; i < COUNT(int_binary); ++i) EMIT(&v, int_binary[i](&inst, p[4], n2, i32, NULL));
    for (i = 0; i < COUNT(comparisons); ++i) EMIT(&v, comparisons[i](&inst, fv, one, bool_ty, NULL));
    for (i = 0; i < COUNT(float_unary); ++i) EMIT(&v, float_unary[i](&inst, fv, f32, NULL));
    EMIT(&v, tinytc_not_inst_create(&inst, p[4], i32, NULL));
    EMIT(&v, tinytc_cast_inst_create(&inst, fv, c32, NULL));
    EMIT(&zv, tinytc_load_inst_create(&inst, p[5], 1, &c0, c32, NULL));
    EMIT(&v, tinytc_conj_inst_create(&inst, zv, c32, NULL));
    EMIT(&v, tinytc_re_inst_create(&inst, zv, f32, NULL));
    EMIT(&v, tinytc_im_inst_create(&inst, zv, f32, NULL));
    EMIT(&v, tinytc_atomic_load_inst_create(&inst, tinytc_memory_scope_device,
                                            tinytc_memory_semantics_relaxed, p[3], 1, &c0, f32,
                                            NULL));
    EMIT(NULL, tinytc_atomic_store_inst_create(&inst, tinytc_memory_scope_device,
                                               tinytc_memory_semantics_release, v, p[3], 1, &c4,
                                               NULL));
    EMIT(&v, tinytc_atomic_add_inst_create(&inst, tinytc_memory_scope_work_group,
                                           tinytc_memory_semantics_relaxed, one, p[3], 1, &c0, f32,
                                           NULL));
    EMIT(&v, tinytc_atomic_max_inst_create(&inst, tinytc_memory_scope_work_group,
                                           tinytc_memory_semantics_relaxed, one, p[3], 1, &c0, f32,
                                           NULL));
    EMIT(&v, tinytc_atomic_min_inst_create(&inst, tinytc_memory_scope_work_group,
                                           tinytc_memory_semantics_relaxed, one, p[3], 1, &c0, f32,
                                           NULL));

    /* foreach and foreach_tile: store into x */
    OK(tinytc_foreach_inst_create(&inst, 1, &c0, 1, &c16, NULL));
    OK(emit(body, inst, NULL));
    n = 1;
    OK(tinytc_inst_get_regions(inst, &n, regions));
    OK(tinytc_region_get_parameters(regions[0], &n, &v));
    where = regions[0];
    EMIT(NULL, tinytc_store_inst_create(&inst, one, p[2], 1, &v, NULL));
    {
        tinytc_value_t from[2] = {c0, c0}, to[2] = {c16, c16}, ij[2];
        OK(tinytc_foreach_tile_inst_create(&inst, 2, tile, 2, from, 2, to, NULL));
        OK(emit(body, inst, NULL));
        n = 1;
        OK(tinytc_inst_get_regions(inst, &n, regions));
        n = 2;
        OK(tinytc_region_get_parameters(regions[0], &n, ij));
        EXPECT(n == 2);
        where = regions[0];
        EMIT(NULL, tinytc_store_inst_create(&inst, zero, p[1], 2, ij, NULL));
    }

    /* parallel: subgroup (spmd) instructions and cooperative matrices */
    OK(tinytc_parallel_inst_create(&parallel, NULL));
    OK(emit(body, parallel, NULL));
    n = 1;
    OK(tinytc_inst_get_regions(parallel, &n, regions));
    where = regions[0];
    EMIT(&v, tinytc_subgroup_id_inst_create(&inst, tinytc_comp3_x, i32, NULL));
    EMIT(&v, tinytc_subgroup_linear_id_inst_create(&inst, i32, NULL));
    EMIT(&v, tinytc_subgroup_local_id_inst_create(&inst, i32, NULL));
    EMIT(&fv, tinytc_load_inst_create(&inst, p[2], 1, &c0, f32, NULL));
    EMIT(&res, tinytc_subgroup_broadcast_inst_create(&inst, fv, n2, f32, NULL));
    for (i = 0; i < COUNT(subgroup_ops); ++i) EMIT(&v, subgroup_ops[i](&inst, fv, f32, NULL));

    OK(tinytc_coopmatrix_type_get(&ca, f32, 16, 8, tinytc_matrix_use_a));
    OK(tinytc_coopmatrix_type_get(&cb, f32, 8, 16, tinytc_matrix_use_b));
    OK(tinytc_coopmatrix_type_get(&cc, f32, 16, 16, tinytc_matrix_use_acc));
    {
        tinytc_value_t a, b, c, col;
        tinytc_type_t row_ty;
        tinytc_region_t apply_body;
        tinytc_value_t rcv[3];
        EMIT(NULL, tinytc_cooperative_matrix_prefetch_inst_create(&inst, 0, 16, 8, p[0], c0, c0,
                                                                  NULL));
        EMIT(&a, tinytc_cooperative_matrix_load_inst_create(&inst, tinytc_transpose_N,
                                                            tinytc_checked_flag_none, p[0], c0, c0,
                                                            ca, NULL));
        EMIT(&b, tinytc_cooperative_matrix_load_inst_create(&inst, tinytc_transpose_N,
                                                            tinytc_checked_flag_both, p[0], c0, c0,
                                                            cb, NULL));
        EMIT(&c, tinytc_cooperative_matrix_construct_inst_create(&inst, zero, cc, NULL));
        EMIT(&c, tinytc_cooperative_matrix_mul_add_inst_create(&inst, a, b, c, cc, NULL));
        EMIT(&c, tinytc_cooperative_matrix_scale_inst_create(&inst, fv, c, cc, NULL));
        EMIT(&v, tinytc_cooperative_matrix_extract_inst_create(&inst, 0, c, f32, NULL));
        EMIT(&c, tinytc_cooperative_matrix_insert_inst_create(&inst, 1, v, c, cc, NULL));
        OK(tinytc_cooperative_matrix_apply_inst_create(&inst, c, cc, NULL));
        OK(emit(where, inst, &c));
        n = 1;
        OK(tinytc_inst_get_regions(inst, &n, &apply_body));
        n = 3;
        OK(tinytc_region_get_parameters(apply_body, &n, rcv));
        EXPECT(n == 3);
        {
            tinytc_region_t outer = where;
            where = apply_body;
            EMIT(&v, tinytc_add_inst_create(&inst, rcv[2], one, f32, NULL));
            OK(tinytc_yield_inst_create(&inst, 1, &v, NULL));
            OK(emit(where, inst, NULL));
            where = outer;
        }
        OK(tinytc_coopmatrix_type_get(&row_ty, f32, 16, 1, tinytc_matrix_use_acc));
        EMIT(&col, tinytc_cooperative_matrix_reduce_add_inst_create(&inst, tinytc_reduce_mode_row,
                                                                    c, row_ty, NULL));
        EMIT(&col, tinytc_cooperative_matrix_reduce_max_inst_create(&inst, tinytc_reduce_mode_row,
                                                                    c, row_ty, NULL));
        EMIT(&col, tinytc_cooperative_matrix_reduce_min_inst_create(&inst, tinytc_reduce_mode_row,
                                                                    c, row_ty, NULL));
        EMIT(NULL, tinytc_cooperative_matrix_store_inst_create(&inst, tinytc_transpose_N,
                                                               tinytc_checked_flag_none, c, p[1],
                                                               c0, c0, NULL));
        EMIT(&v, tinytc_cooperative_matrix_atomic_load_inst_create(
                     &inst, tinytc_transpose_N, tinytc_checked_flag_none,
                     tinytc_memory_scope_device, tinytc_memory_semantics_relaxed, p[1], c0, c0,
                     cc, NULL));
        EMIT(NULL, tinytc_cooperative_matrix_atomic_store_inst_create(
                       &inst, tinytc_transpose_N, tinytc_checked_flag_none,
                       tinytc_memory_scope_device, tinytc_memory_semantics_relaxed, c, p[1], c0,
                       c0, NULL));
        EMIT(&v, tinytc_cooperative_matrix_atomic_add_inst_create(
                     &inst, tinytc_transpose_N, tinytc_checked_flag_none,
                     tinytc_memory_scope_device, tinytc_memory_semantics_relaxed, c, p[1], c0, c0,
                     cc, NULL));
        EMIT(&v, tinytc_cooperative_matrix_atomic_max_inst_create(
                     &inst, tinytc_transpose_N, tinytc_checked_flag_none,
                     tinytc_memory_scope_device, tinytc_memory_semantics_relaxed, c, p[1], c0, c0,
                     cc, NULL));
        EMIT(&v, tinytc_cooperative_matrix_atomic_min_inst_create(
                     &inst, tinytc_transpose_N, tinytc_checked_flag_none,
                     tinytc_memory_scope_device, tinytc_memory_semantics_relaxed, c, p[1], c0, c0,
                     cc, NULL));
    }
    (void)gi;
    (void)res;
    (void)ctx;

    /* 1.6: the program takes the function; handles stay usable as borrowed pointers */
    OK(tinytc_prog_add_function(prog, fun));
    OK(tinytc_func_get_body(fun, &where));
    EXPECT(where == body);
    OK(tinytc_inst_get_parent_region(parallel, &where));
    EXPECT(where == body);
    return 0;
}

static int ownership(tinytc_compiler_context_t ctx, const tinytc_type_t *t) {
    tinytc_inst_t inst, cst;
    tinytc_value_t v;
    tinytc_type_t ty;
    tinytc_attr_t name, val, dict;
    tinytc_named_attr_t item;
    tinytc_region_t parent;
    size_t n = 1;
    /* an instruction nobody took over is destroyed by its creator; its values go with it */
    OK(tinytc_constant_inst_create_float(&cst, 2.0, t[9], NULL));
    OK(tinytc_inst_get_values(cst, &n, &v));
    OK(tinytc_value_get_type(v, &ty));
    EXPECT(ty == t[9]);
    OK(tinytc_string_attr_get(&name, ctx, 4, "note"));
    OK(tinytc_integer_attr_get(&val, ctx, 7));
    item.name = name;
    item.attr = val;
    OK(tinytc_dictionary_attr_get(&dict, ctx, 1, &item));
    OK(tinytc_inst_set_attr(cst, dict));
    EXPECT_STATUS(tinytc_inst_set_attr(cst, val), tinytc_status_ir_expected_dictionary_attribute);
    OK(tinytc_inst_get_parent_region(cst, &parent));
    EXPECT(parent == NULL);
    tinytc_inst_destroy(cst);
    EXPECT_STATUS(tinytc_value_get_type(v, &ty), tinytc_status_invalid_arguments);
    tinytc_inst_destroy(NULL); /* no-op */
    /* an instruction with regions owns them */
    OK(tinytc_parallel_inst_create(&inst, NULL));
    n = 1;
    OK(tinytc_inst_get_regions(inst, &n, &parent));
    tinytc_inst_destroy(inst);
    EXPECT_STATUS(tinytc_region_append(parent, inst), tinytc_status_invalid_arguments);
    return 0;
}

static int compile(tinytc_prog_t prog, tinytc_core_info_t info, const char *spv_path,
                   const char *text_path) {
    FILE *f;
    tinytc_spv_mod_t mod;
    tinytc_binary_t bin;
    tinytc_bundle_format_t format;
    size_t size;
    const uint8_t *data;
    char *text;
    OK(tinytc_prog_print_to_string(prog, &text));
    printf("%s", text);
    tinytc_string_destroy(text);
    OK(tinytc_prog_compile_to_spirv(&mod, prog, info));
    OK(tinytc_spv_mod_print_to_file(mod, text_path));
    OK(tinytc_spv_mod_dump(mod));
    OK(tinytc_spirv_assemble(&bin, mod));
    OK(tinytc_spv_mod_release(mod));
    OK(tinytc_binary_get_raw(bin, &format, &size, &data));
    EXPECT(format == tinytc_bundle_format_spirv && *(const uint32_t *)data == 0x07230203u);
    printf("spirv %zu\n", size);
    f = fopen(spv_path, "wb");
    EXPECT(f != NULL && fwrite(data, 1, size, f) == size);
    fclose(f);
    OK(tinytc_binary_release(bin));
    return 0;
}

static int recipes(tinytc_compiler_context_t ctx, tinytc_core_info_t info, tinytc_type_t f32,
                   tinytc_type_t f64) {
    tinytc_recipe_t recipe, ts, ts2;
    tinytc_prog_t prog;
    tinytc_binary_t bin;
    tinytc_compiler_context_t got;
    char *text;
    int32_t block = 0;
    OK(tinytc_recipe_small_gemm_batched_create(&recipe, info, f64, tinytc_transpose_T,
                                               tinytc_transpose_N, 4, 5, 6, 6, 24, 6, 30, 4, 20));
    OK(tinytc_recipe_get_prog(recipe, &prog)); /* borrowed */
    OK(tinytc_recipe_get_binary(recipe, &bin)); /* borrowed */
    OK(tinytc_prog_print_to_string(prog, &text));
    EXPECT(strstr(text, "func @gemm(") != NULL && strstr(text, "func @gemm_beta0(") != NULL);
    tinytc_string_destroy(text);
    OK(tinytc_binary_get_compiler_context(bin, &got));
    EXPECT(got == ctx); /* from the number type */
    OK(tinytc_recipe_retain(recipe));
    OK(tinytc_recipe_release(recipe));
    OK(tinytc_prog_retain(prog)); /* keep the program beyond the recipe */
    OK(tinytc_recipe_release(recipe));
    EXPECT_STATUS(tinytc_recipe_get_binary(recipe, &bin), tinytc_status_invalid_arguments);
    OK(tinytc_prog_print_to_string(prog, &text));
    tinytc_string_destroy(text);
    OK(tinytc_prog_release(prog));

    OK(tinytc_recipe_tall_and_skinny_suggest_block_size(info, &block));
    EXPECT(block > 0);
    OK(tinytc_recipe_tall_and_skinny_create(&ts, info, f32, 8, 4, block));
    OK(tinytc_recipe_tall_and_skinny_create_specialized(&ts2, info, f32, 256, 8, 4, 256, 4, 256, 0,
                                                        0, 0, 0));
    OK(tinytc_recipe_get_prog(ts2, &prog));
    OK(tinytc_prog_print_to_string(prog, &text));
    EXPECT(strstr(text, "memref<f32x256x4") != NULL); /* M and ldA are static */
    tinytc_string_destroy(text);
    EXPECT_STATUS(tinytc_recipe_tall_and_skinny_create(&recipe, info, f32, TINYTC_DYNAMIC, 4, 0),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_recipe_small_gemm_batched_create(&recipe, info, f32, tinytc_transpose_N,
                                                          tinytc_transpose_N, 4, 4, 4, 4, 16, 4, 16,
                                                          4, TINYTC_DYNAMIC),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_recipe_tall_and_skinny_set_args(NULL, 1, 4, &block, tinytc_mem_type_buffer,
                                                         NULL, 1, tinytc_mem_type_buffer, NULL, 1,
                                                         4, &block, tinytc_mem_type_buffer, NULL,
                                                         1),
                  tinytc_status_invalid_arguments);
    OK(tinytc_recipe_release(ts));
    OK(tinytc_recipe_release(ts2));
    return 0;
}

int main(int argc, char **argv) {
    tinytc_compiler_context_t ctx;
    tinytc_core_info_t info;
    tinytc_prog_t prog;
    tinytc_type_t types[13];
    tinytc_attr_t dict;
    struct reports r = {0, {{0, 0, 0}, {0, 0, 0}}};

    EXPECT(argc == 3);
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_compiler_context_set_error_reporter(ctx, reporter, &r));
    OK(tinytc_core_info_intel_create_from_arch(&info, tinytc_intel_gpu_architecture_pvc));
    if (common_strings() || reference_counts(ctx, info) || compiler_context(ctx) ||
        errors(ctx, &r) || data_types(ctx, types) || attributes(ctx, &dict) ||
        ownership(ctx, types)) {
        return 1;
    }
    OK(tinytc_prog_create(&prog, ctx, NULL));
    if (instructions(ctx, prog, types, dict) || compile(prog, info, argv[1], argv[2]) ||
        recipes(ctx, info, types[8], types[9])) {
        return 1;
    }
    OK(tinytc_prog_release(prog));
    OK(tinytc_core_info_release(info));
    OK(tinytc_compiler_context_release(ctx));
    printf("ok\n");
    return 0;
}
