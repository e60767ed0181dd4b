/* Status and enum strings, the fp16/bf16 helpers, version macros, core info queries and the
 * pass list. Prints the pass names, one per line, after "passes:". */
#include "check.h"

#include <math.h>

static int sizes_are(tinytc_core_info_t info, size_t n, const int32_t *expected) {
    size_t size = 0;
    int32_t const *sgs = NULL;
    if (tinytc_core_info_get_subgroup_sizes(info, &size, &sgs) != tinytc_status_success) {
        return 0;
    }
    return size == n && memcmp(sgs, expected, n * sizeof(int32_t)) == 0;
}

int main(void) {
    tinytc_core_info_t info;
    tinytc_bool_t available = 7;
    int32_t value = 0;
    tinytc_core_feature_flags_t flags = 5;
    size_t n = 0, i;
    char const *const *names = NULL;
    const int32_t pvc_sgs[] = {16, 32}, tgl_sgs[] = {8, 16, 32}, generic_sgs[] = {8, 16};

    /* strings */
    EXPECT_STR(tinytc_status_to_string(tinytc_status_success), "Success");
    EXPECT_STR(tinytc_status_to_string(tinytc_status_parse_error), "Parse error");
    EXPECT_STR(tinytc_status_to_string((tinytc_status_t)12345), "unknown");
    EXPECT_STR(tinytc_transpose_to_string(tinytc_transpose_T), "t");
    EXPECT_STR(tinytc_matrix_use_to_string(tinytc_matrix_use_acc), "matrix_acc");
    EXPECT_STR(tinytc_comp3_to_string(tinytc_comp3_z), "z");
    EXPECT_STR(tinytc_memory_semantics_to_string(tinytc_memory_semantics_acquire_release),
               "acquire_release");
    EXPECT_STR(tinytc_intel_gpu_architecture_to_string(tinytc_intel_gpu_architecture_pvc), "pvc");
    EXPECT_STR(tinytc_spirv_feature_to_string(tinytc_spirv_feature_subgroup_buffer_block_io),
               "subgroup_buffer_block_io");
    EXPECT_STR(tinytc_address_space_to_string((tinytc_address_space_t)3), "unknown");
    EXPECT_STR(tinytc_support_level_to_string(tinytc_support_level_tuned), "tuned");
    EXPECT(TINYTC_ENUM_NUM_STATUS == 100 && TINYTC_ENUM_NUM_SPIRV_FEATURE == 19);
    EXPECT(TINYTC_VERSION_MAJOR == 0 && TINYTC_VERSION_MINOR == 4 && TINYTC_VERSION_PATCH == 0);

    /* fp helpers */
    EXPECT(tinytc_f32_to_f16_as_ui16(1.0f) == 0x3c00);
    EXPECT(tinytc_f32_to_f16_as_ui16(-2.5f) == 0xc100);
    EXPECT(tinytc_f32_to_f16_as_ui16(65504.0f) == 0x7bff);
    EXPECT(tinytc_f32_to_f16_as_ui16(1e6f) == 0x7c00);
    EXPECT(tinytc_f32_to_f16_as_ui16(5.9604645e-8f) == 0x0001); /* smallest subnormal */
    EXPECT(tinytc_f32_to_f16_as_ui16(1.0f + 1.0f / 2048) == 0x3c00); /* tie: to even */
    EXPECT(tinytc_f32_to_f16_as_ui16(1.0f + 3.0f / 2048) == 0x3c02); /* tie: to even */
    EXPECT((tinytc_f32_to_f16_as_ui16(NAN) & 0x7c00) == 0x7c00);
    EXPECT((tinytc_f32_to_f16_as_ui16(NAN) & 0x03ff) != 0);
    EXPECT(tinytc_f16_as_ui16_to_f32(0x3c00) == 1.0f);
    EXPECT(tinytc_f16_as_ui16_to_f32(0x0001) == 5.9604645e-8f);
    EXPECT(tinytc_f16_as_ui16_to_f32(0x7bff) == 65504.0f);
    EXPECT(isinf(tinytc_f16_as_ui16_to_f32(0xfc00)));
    EXPECT(tinytc_f32_to_bf16_as_ui16(1.0f) == 0x3f80);
    EXPECT(tinytc_f32_to_bf16_as_ui16(1.0f + 1.0f / 256) == 0x3f80); /* tie: to even */
    EXPECT(tinytc_f32_to_bf16_as_ui16(1.0f + 3.0f / 256) == 0x3f82);
    EXPECT(tinytc_bf16_as_ui16_to_f32(0xc040) == -3.0f);
    EXPECT(isnan(tinytc_bf16_as_ui16_to_f32(tinytc_f32_to_bf16_as_ui16(NAN))));

    /* core info: built-in tables */
    OK(tinytc_core_info_intel_create_from_arch(&info, tinytc_intel_gpu_architecture_pvc));
    EXPECT(sizes_are(info, 2, pvc_sgs));
    OK(tinytc_core_info_have_spirv_feature(info, tinytc_spirv_feature_float64, &available));
    EXPECT(available == 1);
    OK(tinytc_core_info_have_spirv_feature(info, tinytc_spirv_feature_atomic_float16_add_local,
                                           &available));
    EXPECT(available == 0);
    OK(tinytc_core_info_set_spirv_feature(info, tinytc_spirv_feature_float64, 0));
    OK(tinytc_core_info_have_spirv_feature(info, tinytc_spirv_feature_float64, &available));
    EXPECT(available == 0);
    EXPECT_STATUS(tinytc_core_info_set_spirv_feature(info, (tinytc_spirv_feature_t)19, 1),
                  tinytc_status_invalid_arguments);
    OK(tinytc_core_info_get_register_space(info, &value));
    EXPECT(value == 64 * 128);
    OK(tinytc_core_info_get_core_features(info, &flags));
    EXPECT(flags == 0);
    OK(tinytc_core_info_set_core_features(info, tinytc_core_feature_flag_large_register_file));
    OK(tinytc_core_info_get_core_features(info, &flags));
    EXPECT(flags == tinytc_core_feature_flag_large_register_file);
    OK(tinytc_core_info_get_register_space(info, &value));
    EXPECT(value == 64 * 256);
    OK(tinytc_core_info_set_default_alignment(info, 64));
    OK(tinytc_core_info_get_default_alignment(info, &value));
    EXPECT(value == 64);
    OK(tinytc_recipe_tall_and_skinny_suggest_block_size(info, &value));
    EXPECT(value == 128);
    OK(tinytc_core_info_release(info));

    OK(tinytc_core_info_intel_create_from_name(&info, "tgl"));
    EXPECT(sizes_are(info, 3, tgl_sgs));
    OK(tinytc_core_info_have_spirv_feature(info, tinytc_spirv_feature_float64, &available));
    EXPECT(available == 0);
    OK(tinytc_core_info_release(info));

    OK(tinytc_core_info_generic_create(&info, 8192, 512, 2, generic_sgs));
    EXPECT(sizes_are(info, 2, generic_sgs));
    OK(tinytc_core_info_get_register_space(info, &value));
    EXPECT(value == 8192);
    OK(tinytc_core_info_release(info));

    OK(tinytc_core_info_intel_create(&info, tinytc_intel_gpu_architecture_bmg + 4, 8, 8, 2,
                                     pvc_sgs));
    EXPECT(sizes_are(info, 2, pvc_sgs));
    OK(tinytc_core_info_release(info));

    OK(tinytc_list_function_passes(&n, &names));
    printf("passes:\n");
    for (i = 0; i < n; ++i) {
        printf("%s\n", names[i]);
    }
    return 0;
}
