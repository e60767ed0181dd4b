/* The builder API beyond the upstream example: attributes, a loop with loop-carried values, an
 * if, iterators, erase/insert, names, ownership of instructions and functions. Prints the
 * program; argv[1] receives its SPIR-V. */
#include "check.h"

static int count_insts(tinytc_region_t reg, size_t *count) {
    tinytc_inst_iterator_t it, end;
    *count = 0;
    if (tinytc_region_begin(reg, &it) || tinytc_region_end(reg, &end)) {
        return 1;
    }
    while (it != end) {
        ++*count;
        if (tinytc_next_inst(&it)) {
            return 1;
        }
    }
    return 0;
}

#define CREATE(var, call)                                                                      \
    do {                                                                                       \
        tinytc_inst_t i_;                                                                      \
        size_t one_ = 1;                                                                       \
        tinytc_inst_t *instr = &i_;                                                            \
        OK(call);                                                                              \
        OK(tinytc_inst_get_values(i_, &one_, &(var)));                                         \
        OK(tinytc_region_append(where, i_));                                                   \
    } while (0)

int main(int argc, char **argv) {
    tinytc_compiler_context_t ctx;
    tinytc_prog_t program;
    tinytc_type_t f32, index_ty, bool_ty, void_ty, vec, types[2], got_ty;
    tinytc_func_t fun, unused_fun;
    tinytc_region_t body, loop_body, branches[2], where, parent;
    tinytc_value_t params[2], c0, zero, sum, i_acc[2], v, t, cond, results[2];
    tinytc_inst_t loop, if_inst, tmp, store;
    tinytc_inst_iterator_t it, end;
    tinytc_attr_t sgs_name, wgs_name, align_name, i16, i1, i64, wgs, dict, align_dict, arr[2];
    tinytc_named_attr_t items[2];
    tinytc_core_info_t info;
    tinytc_binary_t bin;
    tinytc_bundle_format_t format;
    const uint8_t *data;
    size_t n, size;
    const int64_t shape[1] = {TINYTC_DYNAMIC};
    char const *name = NULL;
    char *text;
    FILE *f;

    EXPECT(argc == 2);
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_prog_create(&program, ctx, NULL));
    OK(tinytc_f32_type_get(&f32, ctx));
    OK(tinytc_index_type_get(&index_ty, ctx));
    OK(tinytc_boolean_type_get(&bool_ty, ctx));
    OK(tinytc_void_type_get(&void_ty, ctx));
    OK(tinytc_memref_type_get(&vec, f32, 1, shape, 0, NULL, tinytc_address_space_global));
    types[0] = vec;
    types[1] = index_ty;
    OK(tinytc_func_create(&fun, 6, "reduce", 2, types, void_ty, NULL));
    OK(tinytc_func_get_body(fun, &body));
    n = 2;
    OK(tinytc_region_get_parameters(body, &n, params));
    OK(tinytc_value_set_name(params[0], "A"));
    OK(tinytc_value_set_name(params[1], "n"));
    OK(tinytc_value_get_name(params[1], &name));
    EXPECT_STR(name, "n");
    OK(tinytc_value_get_type(params[1], &got_ty));
    EXPECT(got_ty == index_ty);

    /* attributes: dictionary_attr_get sorts the caller's items by name */
    OK(tinytc_string_attr_get(&sgs_name, ctx, 13, "subgroup_sizeXYZ"));
    OK(tinytc_string_attr_get(&wgs_name, ctx, 15, "work_group_size"));
    OK(tinytc_integer_attr_get(&i16, ctx, 16));
    OK(tinytc_integer_attr_get(&i1, ctx, 1));
    arr[0] = i16;
    arr[1] = i1;
    OK(tinytc_array_attr_get(&wgs, ctx, 2, arr));
    items[0].name = wgs_name;
    items[0].attr = wgs;
    items[1].name = sgs_name;
    items[1].attr = i16;
    OK(tinytc_dictionary_attr_get(&dict, ctx, 2, items));
    EXPECT(items[0].name == sgs_name && items[1].name == wgs_name);
    OK(tinytc_func_set_attr(fun, dict));
    EXPECT_STATUS(tinytc_func_set_attr(fun, i16), tinytc_status_ir_expected_dictionary_attribute);
    items[1] = items[0];
    EXPECT_STATUS(tinytc_dictionary_attr_get(&dict, ctx, 2, items),
                  tinytc_status_ir_duplicate_key_in_dictionary);
    OK(tinytc_string_attr_get(&align_name, ctx, 9, "alignment"));
    OK(tinytc_integer_attr_get(&i64, ctx, 64));
    items[0].name = align_name;
    items[0].attr = i64;
    OK(tinytc_dictionary_attr_get_with_sorted(&align_dict, ctx, 1, items));
    OK(tinytc_func_set_parameter_attr(fun, 0, align_dict));
    EXPECT_STATUS(tinytc_func_set_parameter_attr(fun, 2, align_dict),
                  tinytc_status_invalid_arguments);

    where = body;
    CREATE(c0, tinytc_constant_inst_create_int(instr, 0, index_ty, NULL));
    CREATE(zero, tinytc_constant_inst_create_float(instr, 0.0, f32, NULL));
    /* for %i = %c0, %n init(%acc = %zero) -> (f32) { yield (%acc + A[%i]) } */
    EXPECT_STATUS(tinytc_for_inst_create(&loop, c0, params[1], NULL, 1, &zero, 1, &index_ty, NULL),
                  tinytc_status_ir_init_return_type_mismatch);
    OK(tinytc_for_inst_create(&loop, c0, params[1], NULL, 1, &zero, 1, &f32, NULL));
    n = 0;
    OK(tinytc_inst_get_regions(loop, &n, NULL));
    EXPECT(n == 1);
    OK(tinytc_inst_get_regions(loop, &n, &loop_body));
    n = 5;
    OK(tinytc_region_get_parameters(loop_body, &n, i_acc));
    EXPECT(n == 2);
    OK(tinytc_value_set_name(i_acc[0], "i"));
    OK(tinytc_value_set_name(i_acc[1], "acc"));
    where = loop_body;
    CREATE(v, tinytc_load_inst_create(instr, params[0], 1, &i_acc[0], f32, NULL));
    CREATE(t, tinytc_add_inst_create(instr, i_acc[1], v, f32, NULL));
    OK(tinytc_yield_inst_create(&tmp, 1, &t, NULL));
    OK(tinytc_region_append(loop_body, tmp));
    n = 1;
    OK(tinytc_inst_get_values(loop, &n, &sum));
    OK(tinytc_region_append(body, loop));
    OK(tinytc_inst_get_parent_region(loop, &parent));
    EXPECT(parent == body);
    EXPECT_STATUS(tinytc_region_append(body, loop), tinytc_status_invalid_arguments);

    where = body;
    CREATE(cond, tinytc_less_than_inst_create(instr, sum, zero, bool_ty, NULL));
    OK(tinytc_if_inst_create(&if_inst, cond, 0, NULL, NULL));
    n = 2;
    OK(tinytc_inst_get_regions(if_inst, &n, branches));
    EXPECT(n == 2);
    OK(tinytc_store_inst_create(&store, zero, params[0], 1, &c0, NULL));
    OK(tinytc_region_append(branches[0], store));
    OK(tinytc_region_append(body, if_inst));
    n = 1;
    OK(tinytc_inst_get_values(if_inst, &n, results));
    EXPECT(n == 0);
    OK(tinytc_store_inst_create(&store, sum, params[0], 1, &c0, NULL));
    OK(tinytc_inst_get_parent_region(store, &parent));
    EXPECT(parent == NULL);
    OK(tinytc_region_append(body, store));

    /* iterators: 6 instructions; prev(end) is the last one */
    OK(count_insts(body, &n) == 0 ? tinytc_status_success : tinytc_status_runtime_error);
    EXPECT(n == 6);
    OK(tinytc_region_end(body, &it));
    OK(tinytc_prev_inst(&it));
    EXPECT(it == store);
    OK(tinytc_region_end(body, &end));
    EXPECT_STATUS(tinytc_next_inst(&end), tinytc_status_invalid_arguments);
    /* insert an unused constant at the beginning, then erase it again */
    OK(tinytc_constant_inst_create_boolean(&tmp, 1, bool_ty, NULL));
    OK(tinytc_region_begin(body, &it));
    OK(tinytc_region_insert(body, &it, tmp));
    EXPECT(it == tmp);
    OK(count_insts(body, &n) == 0 ? tinytc_status_success : tinytc_status_runtime_error);
    EXPECT(n == 7);
    OK(tinytc_region_erase(body, &it));
    OK(tinytc_region_begin(body, &end));
    EXPECT(it == end); /* erase advanced to the old first instruction */
    EXPECT_STATUS(tinytc_inst_get_values(tmp, &n, results), tinytc_status_invalid_arguments);
    /* erasing an instruction whose result is used fails */
    EXPECT_STATUS(tinytc_region_erase(body, &it), tinytc_status_ir_value_still_has_uses);

    /* unique objects that nobody took over are destroyed by their creator */
    OK(tinytc_constant_inst_create_complex(&tmp, 1.0, 2.0, f32, NULL) ==
               tinytc_status_ir_constant_mismatch
           ? tinytc_status_success
           : tinytc_status_runtime_error);
    OK(tinytc_constant_inst_create_one(&tmp, index_ty, NULL));
    tinytc_inst_destroy(tmp);
    EXPECT_STATUS(tinytc_inst_get_parent_region(tmp, &parent), tinytc_status_invalid_arguments);
    OK(tinytc_func_create(&unused_fun, 1, "g", 0, NULL, void_ty, NULL));
    tinytc_func_destroy(unused_fun);
    EXPECT_STATUS(tinytc_func_get_body(unused_fun, &parent), tinytc_status_invalid_arguments);

    OK(tinytc_prog_add_function(program, fun));
    EXPECT_STATUS(tinytc_prog_add_function(program, fun), tinytc_status_invalid_arguments);
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
    OK(tinytc_core_info_release(info));
    OK(tinytc_prog_release(program));
    /* the program took the function with it */
    EXPECT_STATUS(tinytc_func_get_body(fun, &parent), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_value_get_name(params[0], &name), tinytc_status_invalid_arguments);
    OK(tinytc_compiler_context_release(ctx));
    return 0;
}
