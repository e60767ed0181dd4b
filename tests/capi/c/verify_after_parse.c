/* A program parsed from text and then changed through the C API is verified again when it is
 * compiled: the builder adds a function whose loop does not yield to the parse, after a pass
 * ran on the parse (argv[1] "pass") or straight away ("build"). The compile must fail with the
 * check-ir error at the loop body's last instruction, reported through the context's reporter
 * (printed as "line.column-column: message"). */
#include "check.h"

#include <stdio.h>
#include <string.h>

static char const source[] = "func @k(%x: memref<f32x8>) {\n"
                             "    %c0 = constant 0 : index\n"
                             "    %c1 = constant 1.0 : f32\n"
                             "    store %c1, %x[%c0]\n"
                             "}\n";

static void report(char const *what, const tinytc_location_t *loc, void *user_data) {
    (void)user_data;
    printf("%d.%d-%d: %s\n", loc->begin.line, loc->begin.column, loc->end.column,
           strchr(what, ' ') + 1);
}

int main(int argc, char **argv) {
    tinytc_compiler_context_t ctx;
    tinytc_prog_t prg;
    tinytc_core_info_t info;
    tinytc_binary_t bin;
    tinytc_type_t index_ty, f32, void_ty;
    tinytc_func_t fun;
    tinytc_region_t body, loop_body;
    tinytc_inst_t zero, loop, one;
    tinytc_value_t n, zero_val;
    size_t count = 1;
    tinytc_location_t const loop_loc = {{0, 9, 5}, {0, 9, 40}};
    tinytc_location_t const one_loc = {{0, 10, 9}, {0, 10, 30}};
    if (argc != 2) {
        return 2;
    }
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_compiler_context_set_error_reporter(ctx, report, NULL));
    OK(tinytc_parse_string(&prg, sizeof(source), source, ctx));
    OK(tinytc_core_info_intel_create_from_arch(&info, tinytc_intel_gpu_architecture_pvc));
    if (strcmp(argv[1], "pass") == 0) {
        OK(tinytc_run_function_pass("constant-propagation", prg, info));
    }
    /* func @bad(%n: index) { %z = constant 0.0 : f32
     *   %s = for %i = %n, %n init(%a = %z) -> (f32) { %o = constant 1.0 : f32 } } */
    OK(tinytc_index_type_get(&index_ty, ctx));
    OK(tinytc_f32_type_get(&f32, ctx));
    OK(tinytc_void_type_get(&void_ty, ctx));
    OK(tinytc_func_create(&fun, 3, "bad", 1, &index_ty, void_ty, NULL));
    OK(tinytc_func_get_body(fun, &body));
    OK(tinytc_region_get_parameters(body, &count, &n));
    OK(tinytc_constant_inst_create_float(&zero, 0.0, f32, NULL));
    OK(tinytc_inst_get_values(zero, &count, &zero_val));
    OK(tinytc_region_append(body, zero));
    OK(tinytc_for_inst_create(&loop, n, n, NULL, 1, &zero_val, 1, &f32, &loop_loc));
    OK(tinytc_region_append(body, loop));
    count = 1;
    OK(tinytc_inst_get_regions(loop, &count, &loop_body));
    OK(tinytc_constant_inst_create_float(&one, 1.0, f32, &one_loc));
    OK(tinytc_region_append(loop_body, one)); /* and no yield */
    OK(tinytc_prog_add_function(prg, fun));
    EXPECT_STATUS(tinytc_prog_compile_to_spirv_and_assemble(&bin, prg, info),
                  tinytc_status_ir_must_have_yield);
    OK(tinytc_core_info_release(info));
    OK(tinytc_prog_release(prg));
    OK(tinytc_compiler_context_release(ctx));
    puts("ok");
    return 0;
}
