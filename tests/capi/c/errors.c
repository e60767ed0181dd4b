/* Error paths: the reporter gets located messages, NULL and stale handles give
 * invalid_arguments, and each failure has its own status. Prints every reported message. */
#include "check.h"

struct reports {
    int count;
    tinytc_location_t last;
    char what[4096];
};

static void reporter(char const *what, const tinytc_location_t *location, void *user_data) {
    struct reports *r = (struct reports *)user_data;
    ++r->count;
    r->last = *location;
    snprintf(r->what, sizeof(r->what), "%s", what);
    printf("report %d: %s\n", r->count, what);
}

static const char bad_source[] = "func @f(%a: f32) {\n"
                                 "    %b = add %a, %c : f32\n"
                                 "}\n";

static const char good_source[] = "func @f(%a: f32) {\n}\n";

static const char f64_source[] = "func @f(%A: memref<f64x4>) {\n"
                                 "    %c = constant 1.0 : f64\n"
                                 "    %z = constant 0 : index\n"
                                 "    store %c, %A[%z]\n"
                                 "}\n";

int main(void) {
    tinytc_compiler_context_t ctx;
    tinytc_prog_t program = NULL;
    tinytc_core_info_t info = NULL;
    tinytc_binary_t bin = NULL;
    tinytc_type_t f32;
    tinytc_inst_t inst = NULL;
    struct reports r = {0};
    int32_t source_id = 0;
    size_t n = 0;
    char const *const *names = NULL;
    const tinytc_location_t loc = {{0, 2, 5}, {0, 2, 9}};

    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_compiler_context_set_error_reporter(ctx, reporter, &r));

    /* a parse error: status parse_error, one located message naming the source */
    EXPECT_STATUS(tinytc_parse_string(&program, sizeof(bad_source), bad_source, ctx),
                  tinytc_status_parse_error);
    EXPECT(program == NULL);
    EXPECT(r.count == 1);
    EXPECT(r.last.begin.line == 2 && r.last.begin.column == 18);
    EXPECT(r.last.begin.source_id >= 1);
    EXPECT(strstr(r.what, "<memory>:2.18") != NULL);
    EXPECT(strstr(r.what, "%b = add %a, %c : f32") != NULL); /* the source line is quoted */

    /* report_error formats with the registered source */
    OK(tinytc_compiler_context_add_source(ctx, "kernel.ir", "line one\nline two\n", &source_id));
    EXPECT(source_id == 2);
    {
        tinytc_location_t l = loc;
        l.begin.source_id = l.end.source_id = source_id;
        OK(tinytc_compiler_context_report_error(ctx, &l, "custom problem"));
    }
    EXPECT(r.count == 2);
    EXPECT(strstr(r.what, "kernel.ir:2.5-8: custom problem") != NULL);
    EXPECT(strstr(r.what, "line two") != NULL);

    /* a NULL reporter silences the context */
    OK(tinytc_compiler_context_set_error_reporter(ctx, NULL, NULL));
    EXPECT_STATUS(tinytc_parse_string(&program, sizeof(bad_source), bad_source, ctx),
                  tinytc_status_parse_error);
    EXPECT(r.count == 2);

    /* NULL handles and out-pointers */
    EXPECT_STATUS(tinytc_compiler_context_create(NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_prog_release(NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_prog_retain(NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_compiler_context_release(NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_core_info_release(NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_binary_release(NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_spv_mod_release(NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_recipe_release(NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_recipe_handler_release(NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_parse_string(NULL, 3, "abc", ctx), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_parse_string(&program, 0, "abc", ctx), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_parse_string(&program, 3, NULL, ctx), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_prog_compile_to_spirv_and_assemble(&bin, NULL, NULL),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_core_info_intel_create_from_arch(NULL, tinytc_intel_gpu_architecture_pvc),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_core_info_generic_create(&info, 8192, 512, 0, NULL),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_f32_type_get(NULL, ctx), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_f32_type_get(&f32, NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_list_function_passes(&n, NULL), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_compiler_context_report_error(ctx, &loc, NULL),
                  tinytc_status_invalid_arguments);

    /* a handle of the wrong kind is refused, not reinterpreted */
    EXPECT_STATUS(tinytc_prog_release((tinytc_prog_t)ctx), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_prog_dump((tinytc_prog_t)(void *)&r), tinytc_status_invalid_arguments);

    /* other failures */
    EXPECT_STATUS(tinytc_core_info_intel_create_from_arch(&info, (tinytc_intel_gpu_architecture_t)7),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_core_info_intel_create_from_name(&info, "xyz"),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_parse_file(&program, "/nonexistent/dir/k.ir", ctx),
                  tinytc_status_file_io_error);
    OK(tinytc_parse_string(&program, sizeof(good_source), good_source, ctx));
    EXPECT_STATUS(tinytc_run_function_pass("no-such-pass", program, NULL),
                  tinytc_status_unknown_pass_name);
    OK(tinytc_list_function_passes(&n, &names));
    EXPECT(n > 0);
    OK(tinytc_run_function_pass(names[0], program, NULL));
    EXPECT_STATUS(tinytc_prog_print_to_file(program, "/nonexistent/dir/out.ir"),
                  tinytc_status_file_io_error);
    OK(tinytc_prog_release(program));

    /* a compilation error goes to the reporter too: tgl has no float64 */
    OK(tinytc_compiler_context_set_error_reporter(ctx, reporter, &r));
    OK(tinytc_parse_string(&program, sizeof(f64_source), f64_source, ctx));
    OK(tinytc_core_info_intel_create_from_name(&info, "tgl"));
    EXPECT_STATUS(tinytc_prog_compile_to_spirv_and_assemble(&bin, program, info),
                  tinytc_status_spirv_required_feature_unavailable);
    EXPECT(r.count == 3);
    EXPECT(strstr(r.what, "float64") != NULL);
    OK(tinytc_core_info_release(info));
    OK(tinytc_prog_release(program));
    OK(tinytc_compiler_context_set_error_reporter(ctx, NULL, NULL));

    /* builder: an invalid combination returns its ir_* status and creates nothing */
    OK(tinytc_f32_type_get(&f32, ctx));
    EXPECT_STATUS(tinytc_constant_inst_create_int(&inst, 3, f32, NULL),
                  tinytc_status_ir_constant_mismatch);
    EXPECT(inst == NULL);
    {
        tinytc_type_t memref, void_ty;
        const int64_t shape[1] = {-5};
        EXPECT_STATUS(tinytc_memref_type_get(&memref, f32, 1, shape, 0, NULL,
                                             tinytc_address_space_global),
                      tinytc_status_ir_invalid_shape);
        OK(tinytc_void_type_get(&void_ty, ctx));
        EXPECT_STATUS(tinytc_memref_type_get(&memref, void_ty, 0, NULL, 0, NULL,
                                             tinytc_address_space_global),
                      tinytc_status_ir_expected_number);
        EXPECT_STATUS(tinytc_memref_type_get(&memref, f32, 0, NULL, 0, NULL,
                                             (tinytc_address_space_t)3),
                      tinytc_status_invalid_arguments);
    }
    EXPECT(r.count == 3); /* builder errors are not reported */

    OK(tinytc_compiler_context_release(ctx));
    printf("ok\n");
    return 0;
}
