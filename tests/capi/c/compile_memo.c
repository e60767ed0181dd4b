/* The kernel cache's source-text memo through the C API: parsing and compiling a text the
 * process compiled before gives the very same binary (the same bytes at the same address), and
 * everything that changes the result misses: a program changed after parsing, a core info
 * changed in place, a context flag or optimisation level set after parsing. A handle made
 * without parsing (its text parsed before) is parsed when the program is needed, under the
 * flags of its parse call. Prints "ok"; the test counts the compiles in the cache folder. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>

static const char text[] = "func @scale(%a: f32, %A: memref<f32x16>) {\n"
                           "    %c0 = constant 0 : index\n"
                           "    %x = load %A[%c0] : f32\n"
                           "    %y = mul %a, %x : f32\n"
                           "    store %y, %A[%c0]\n"
                           "}\n";

struct raw {
    tinytc_binary_t bin;
    size_t size;
    uint8_t const *data;
};

/* Parses `text` into `ctx` and compiles it; the binary stays alive (released at the end). */
static int compile(tinytc_compiler_context_t ctx, const_tinytc_core_info_t info, struct raw *r) {
    tinytc_prog_t prog;
    tinytc_bundle_format_t format;
    OK(tinytc_parse_string(&prog, sizeof(text), text, ctx));
    OK(tinytc_prog_compile_to_spirv_and_assemble(&r->bin, prog, info));
    OK(tinytc_binary_get_raw(r->bin, &format, &r->size, &r->data));
    OK(tinytc_prog_release(prog));
    return 0;
}

#define COMPILE(ctx, info, r)                                                                  \
    do {                                                                                       \
        if (compile(ctx, info, r)) {                                                           \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

#define SAME(a, b) ((a).size == (b).size && memcmp((a).data, (b).data, (a).size) == 0)

int main(void) {
    tinytc_compiler_context_t ctx, flagged, level0;
    tinytc_core_info_t info;
    tinytc_prog_t prog;
    tinytc_func_t extra;
    tinytc_type_t void_ty;
    tinytc_core_feature_flags_t features;
    tinytc_bundle_format_t format;
    struct raw first, hit, printed, added, large, back, no_fp16, fp16, flag, level;
    char *str;

    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_core_info_intel_create_from_name(&info, "pvc"));
    COMPILE(ctx, info, &first); /* compile 1 */
    COMPILE(ctx, info, &hit);   /* the memo: the same binary object */
    EXPECT(hit.data == first.data && hit.size == first.size);

    /* the program of a handle made without parsing is there when asked for; the handle is
     * then keyed by its printed program: compiled again (compile 2), to the same bytes */
    OK(tinytc_parse_string(&prog, sizeof(text), text, ctx));
    OK(tinytc_prog_print_to_string(prog, &str));
    EXPECT(strstr(str, "func @scale(") != NULL);
    tinytc_string_destroy(str);
    OK(tinytc_prog_compile_to_spirv_and_assemble(&printed.bin, prog, info));
    OK(tinytc_binary_get_raw(printed.bin, &format, &printed.size, &printed.data));
    EXPECT(printed.data != first.data && SAME(printed, first));
    OK(tinytc_prog_release(prog));

    /* a function added after parsing: compile 3, another binary */
    OK(tinytc_parse_string(&prog, sizeof(text), text, ctx));
    OK(tinytc_void_type_get(&void_ty, ctx));
    OK(tinytc_func_create(&extra, 5, "extra", 0, NULL, void_ty, NULL));
    OK(tinytc_prog_add_function(prog, extra));
    OK(tinytc_prog_compile_to_spirv_and_assemble(&added.bin, prog, info));
    OK(tinytc_binary_get_raw(added.bin, &format, &added.size, &added.data));
    EXPECT(added.size > first.size);
    OK(tinytc_prog_release(prog));

    /* the core info changed in place: compiles 4 and 5; changed back: the first binary */
    OK(tinytc_core_info_set_core_features(info, tinytc_core_feature_flag_large_register_file));
    COMPILE(ctx, info, &large);
    EXPECT(large.data != first.data);
    OK(tinytc_binary_get_core_features(large.bin, &features));
    EXPECT(features == tinytc_core_feature_flag_large_register_file);
    OK(tinytc_core_info_set_core_features(info, 0));
    COMPILE(ctx, info, &back);
    EXPECT(back.data == first.data);
    OK(tinytc_core_info_set_spirv_feature(info, tinytc_spirv_feature_float16, 0));
    COMPILE(ctx, info, &no_fp16);
    EXPECT(no_fp16.data != first.data);
    OK(tinytc_core_info_set_spirv_feature(info, tinytc_spirv_feature_float16, 1));
    COMPILE(ctx, info, &fp16);
    EXPECT(fp16.data == first.data);

    /* a flag set after parsing (compile 6); the optimisation level (compile 7) */
    OK(tinytc_compiler_context_create(&flagged));
    OK(tinytc_parse_string(&prog, sizeof(text), text, flagged));
    OK(tinytc_compiler_context_set_optimization_flag(flagged, tinytc_optflag_unsafe_fp_math, 1));
    OK(tinytc_prog_compile_to_spirv_and_assemble(&flag.bin, prog, info));
    OK(tinytc_binary_get_raw(flag.bin, &format, &flag.size, &flag.data));
    EXPECT(flag.data != first.data);
    OK(tinytc_prog_release(prog));
    OK(tinytc_compiler_context_create(&level0));
    OK(tinytc_compiler_context_set_optimization_level(level0, 0));
    COMPILE(level0, info, &level);
    EXPECT(level.data != first.data);

    /* made without parsing, then the legacy flag is set: the program is still read as the
     * current language it was parsed as */
    OK(tinytc_parse_string(&prog, sizeof(text), text, ctx));
    OK(tinytc_compiler_context_set_optimization_flag(ctx, tinytc_optflag_legacy_language, 1));
    OK(tinytc_prog_print_to_string(prog, &str));
    EXPECT(strstr(str, "func @scale(") != NULL);
    tinytc_string_destroy(str);
    OK(tinytc_prog_release(prog));

    tinytc_binary_t all[] = {first.bin, hit.bin, printed.bin, added.bin, large.bin,
                             back.bin,  no_fp16.bin, fp16.bin, flag.bin, level.bin};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
        OK(tinytc_binary_release(all[i]));
    }
    OK(tinytc_core_info_release(info));
    OK(tinytc_compiler_context_release(ctx));
    OK(tinytc_compiler_context_release(flagged));
    OK(tinytc_compiler_context_release(level0));
    printf("ok\n");
    return 0;
}
