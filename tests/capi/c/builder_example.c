/* The flow of upstream's examples/builder/main.c (upstream's builder example), with every status checked: build
 * @copy(A, B) { B := 1 * A + 0 * B } through the builder API, print it, compile it. */
#include "check.h"

int main(void) {
    tinytc_compiler_context_t ctx = NULL;
    tinytc_prog_t program = NULL;
    tinytc_type_t element_ty, ty, void_ty, f32_again;
    tinytc_func_t copy_fun;
    tinytc_region_t copy_body;
    tinytc_value_t params[2], alpha, beta;
    tinytc_inst_t tmp;
    size_t num_params = 0, num_results;
    char const *copy_fun_name = "copy";
    char *text = NULL;
    const int64_t shape[2] = {5, 16};
    tinytc_core_info_t info;
    tinytc_binary_t bin;

    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_prog_create(&program, ctx, NULL));
    OK(tinytc_f32_type_get(&element_ty, ctx));
    OK(tinytc_f32_type_get(&f32_again, ctx));
    EXPECT(element_ty == f32_again); /* types are uniqued */
    OK(tinytc_memref_type_get(&ty, element_ty, 2, shape, 0, NULL, tinytc_address_space_global));
    OK(tinytc_void_type_get(&void_ty, ctx));
    tinytc_type_t param_types[2] = {ty, ty};
    /* upstream passes sizeof(pointer) - 1 = 7 for "copy": only the part before the NUL counts */
    OK(tinytc_func_create(&copy_fun, sizeof(copy_fun_name) - 1, copy_fun_name, 2, param_types,
                          void_ty, NULL));
    OK(tinytc_prog_add_function(program, copy_fun));
    OK(tinytc_func_get_body(copy_fun, &copy_body));
    OK(tinytc_region_get_parameters(copy_body, &num_params, NULL)); /* size 0: query the count */
    EXPECT(num_params == 2);
    OK(tinytc_region_get_parameters(copy_body, &num_params, params));
    OK(tinytc_value_set_name(params[0], "A"));
    OK(tinytc_value_set_name_n(params[1], 1, "Bxyz"));

    OK(tinytc_constant_inst_create_one(&tmp, element_ty, NULL));
    num_results = 1;
    OK(tinytc_inst_get_values(tmp, &num_results, &alpha));
    EXPECT(num_results == 1);
    OK(tinytc_region_append(copy_body, tmp));
    OK(tinytc_constant_inst_create_zero(&tmp, element_ty, NULL));
    num_results = 1;
    OK(tinytc_inst_get_values(tmp, &num_results, &beta));
    OK(tinytc_region_append(copy_body, tmp));
    OK(tinytc_value_set_name(alpha, "alpha"));
    OK(tinytc_axpby_inst_create(&tmp, 0, tinytc_transpose_N, alpha, params[0], beta, params[1],
                                NULL));
    OK(tinytc_region_append(copy_body, tmp));

    OK(tinytc_prog_print_to_string(program, &text));
    printf("%s", text);
    tinytc_string_destroy(text);

    OK(tinytc_core_info_intel_create_from_arch(&info, tinytc_intel_gpu_architecture_pvc));
    OK(tinytc_prog_compile_to_spirv_and_assemble(&bin, program, info));
    OK(tinytc_binary_release(bin));
    OK(tinytc_core_info_release(info));
    OK(tinytc_prog_release(program));
    OK(tinytc_compiler_context_release(ctx));
    return 0;
}
