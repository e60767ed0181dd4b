/* Reference counts and internal references (docs/design.md §C1.5): an object lives while anyone (the
 * caller or another object) holds a reference, and a handle whose last reference is gone is
 * refused with invalid_arguments. */
#include "check.h"

static const char source_text[] = "func @f(%a: f32) {\n}\n";

/* A cheap call that succeeds exactly when ctx is a live compiler context. */
static tinytc_status_t ctx_alive(tinytc_compiler_context_t ctx) {
    return tinytc_compiler_context_set_optimization_level(ctx, 2);
}

int main(void) {
    tinytc_compiler_context_t ctx, got;
    tinytc_prog_t program;
    tinytc_core_info_t info;
    tinytc_binary_t bin;
    tinytc_spv_mod_t mod;
    tinytc_type_t f32;
    uint8_t byte = 0;

    /* retain/release pairs */
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_compiler_context_retain(ctx));
    OK(tinytc_compiler_context_release(ctx));
    OK(ctx_alive(ctx));
    OK(tinytc_compiler_context_release(ctx));
    EXPECT_STATUS(ctx_alive(ctx), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_compiler_context_release(ctx), tinytc_status_invalid_arguments);

    /* prog -> ctx: the program keeps its context alive */
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_f32_type_get(&f32, ctx));
    OK(tinytc_parse_string(&program, sizeof(source_text), source_text, ctx));
    OK(tinytc_compiler_context_release(ctx));
    OK(tinytc_prog_get_compiler_context(program, &got)); /* borrowed */
    EXPECT(got == ctx);
    OK(ctx_alive(ctx));
    OK(tinytc_type_get_compiler_context(f32, &got)); /* types live as long as their context */
    EXPECT(got == ctx);
    OK(tinytc_prog_retain(program));
    OK(tinytc_prog_release(program));
    OK(tinytc_prog_release(program)); /* last reference: prog and then ctx go */
    EXPECT_STATUS(tinytc_prog_dump(program), tinytc_status_invalid_arguments);
    EXPECT_STATUS(ctx_alive(ctx), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_type_get_compiler_context(f32, &got), tinytc_status_invalid_arguments);

    /* parse with NULL ctx: the program owns a fresh context; retaining it keeps it */
    OK(tinytc_parse_string(&program, sizeof(source_text), source_text, NULL));
    OK(tinytc_prog_get_compiler_context(program, &ctx));
    OK(tinytc_compiler_context_retain(ctx));
    OK(tinytc_prog_release(program));
    OK(ctx_alive(ctx));
    OK(tinytc_compiler_context_release(ctx));
    EXPECT_STATUS(ctx_alive(ctx), tinytc_status_invalid_arguments);

    /* binary -> ctx and spv_mod -> ctx */
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_binary_create(&bin, ctx, tinytc_bundle_format_spirv, 1, &byte, 0));
    OK(tinytc_parse_string(&program, sizeof(source_text), source_text, ctx));
    OK(tinytc_compiler_context_release(ctx));
    OK(tinytc_core_info_intel_create_from_name(&info, "pvc"));
    OK(tinytc_prog_compile_to_spirv(&mod, program, info));
    OK(tinytc_prog_release(program));
    OK(tinytc_core_info_release(info));
    OK(ctx_alive(ctx));
    OK(tinytc_binary_get_compiler_context(bin, &got));
    EXPECT(got == ctx);
    OK(tinytc_binary_release(bin));
    OK(ctx_alive(ctx)); /* the module still holds it */
    OK(tinytc_spv_mod_retain(mod));
    OK(tinytc_spv_mod_release(mod));
    OK(tinytc_spv_mod_release(mod));
    EXPECT_STATUS(ctx_alive(ctx), tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_spv_mod_release(mod), tinytc_status_invalid_arguments);

    /* core info */
    OK(tinytc_core_info_intel_create_from_name(&info, "bmg"));
    OK(tinytc_core_info_retain(info));
    OK(tinytc_core_info_release(info));
    OK(tinytc_core_info_release(info));
    EXPECT_STATUS(tinytc_core_info_release(info), tinytc_status_invalid_arguments);
    printf("ok\n");
    return 0;
}
