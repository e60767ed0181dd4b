/* Parse a program from text, compile it to a SPIR-V module and to a binary, and hand the binary
 * to the test (argv[1] receives its bytes; the test runs spirv-val on them). */
#include "check.h"

#include <stdint.h>

static const char source_text[] =
    "func @copy(%A: memref<i32x64x?>, %B: memref<i32x64x?>) {\n"
    "    %gid = group_id.x : index\n"
    "    %a = subview %A[0:64, %gid] : memref<i32x64>\n"
    "    %b = subview %B[0:64, %gid] : memref<i32x64>\n"
    "    %one = constant 1 : i32\n"
    "    %zero = constant 0 : i32\n"
    "    axpby.n %one, %a, %zero, %b\n"
    "}\n";

int main(int argc, char **argv) {
    tinytc_compiler_context_t ctx, got_ctx;
    tinytc_prog_t program;
    tinytc_core_info_t info;
    tinytc_spv_mod_t mod;
    tinytc_binary_t bin, bin2;
    tinytc_bundle_format_t format;
    tinytc_core_feature_flags_t features = 99;
    size_t size = 0, size2 = 0;
    uint8_t const *data = NULL, *data2 = NULL;
    char *text = NULL;
    FILE *f;

    EXPECT(argc == 2);
    OK(tinytc_compiler_context_create(&ctx));
    /* the length includes the trailing NUL, as upstream's examples pass sizeof(source_text) */
    OK(tinytc_parse_string(&program, sizeof(source_text), source_text, ctx));
    OK(tinytc_prog_get_compiler_context(program, &got_ctx));
    EXPECT(got_ctx == ctx);
    OK(tinytc_prog_print_to_string(program, &text));
    EXPECT(strstr(text, "func @copy(") != NULL);
    tinytc_string_destroy(text);

    OK(tinytc_core_info_intel_create_from_arch(&info, tinytc_intel_gpu_architecture_pvc));
    OK(tinytc_prog_compile_to_spirv(&mod, program, info));
    OK(tinytc_spv_mod_print_to_string(mod, &text));
    EXPECT(strstr(text, "OpEntryPoint Kernel") != NULL);
    EXPECT(strstr(text, "\"copy\"") != NULL);
    tinytc_string_destroy(text);
    OK(tinytc_spirv_assemble(&bin, mod));
    OK(tinytc_spv_mod_release(mod));

    OK(tinytc_binary_get_raw(bin, &format, &size, &data));
    EXPECT(format == tinytc_bundle_format_spirv);
    EXPECT(size >= 20 && size % 4 == 0);
    EXPECT(*(const uint32_t *)data == 0x07230203u);
    OK(tinytc_binary_get_core_features(bin, &features));
    EXPECT(features == 0);
    OK(tinytc_binary_get_compiler_context(bin, &got_ctx));
    EXPECT(got_ctx == ctx);

    /* the one-step variant gives the same bytes (compiling again re-runs the passes, which
     * leave an already lowered program as it is) */
    OK(tinytc_prog_compile_to_spirv_and_assemble(&bin2, program, info));
    OK(tinytc_binary_get_raw(bin2, &format, &size2, &data2));
    EXPECT(size2 == size && memcmp(data, data2, size) == 0);
    OK(tinytc_binary_release(bin2));

    /* a binary made from user bytes keeps a copy */
    OK(tinytc_binary_create(&bin2, ctx, tinytc_bundle_format_native, size, data,
                            tinytc_core_feature_flag_large_register_file));
    OK(tinytc_binary_get_raw(bin2, &format, &size2, &data2));
    EXPECT(format == tinytc_bundle_format_native && size2 == size && data2 != data);
    EXPECT(memcmp(data, data2, size) == 0);
    OK(tinytc_binary_get_core_features(bin2, &features));
    EXPECT(features == tinytc_core_feature_flag_large_register_file);
    OK(tinytc_binary_release(bin2));

    f = fopen(argv[1], "wb");
    EXPECT(f != NULL);
    EXPECT(fwrite(data, 1, size, f) == size);
    fclose(f);

    OK(tinytc_binary_release(bin));
    OK(tinytc_core_info_release(info));
    OK(tinytc_prog_release(program));
    OK(tinytc_compiler_context_release(ctx));
    printf("spirv %zu bytes\n", size);
    return 0;
}
