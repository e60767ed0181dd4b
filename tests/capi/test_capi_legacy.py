"""Legacy text through the C API (tinytc_parse_string), as SeisSol embeds yateto's kernels: C
string literals parsed with no flag (auto-detected), compiled and validated; the compiler-context
flag tinytc_optflag_legacy_language for legacy text; legacy errors as status + located report.
The modules are checked by spirv-val (validate())."""

from __future__ import annotations

import json
from pathlib import Path

from tinytc_py.spirv.validate import validate

CORPUS = Path(__file__).resolve().parents[1] / "exec" / "yateto"

LEGACY_SAMPLE = (CORPUS.parent.parent / "lit" / "legacy" / "sample.ir").read_text()

BAD_LEGACY = """func @k(%a: i32) {
    %0 = group_id
    %1 = arith.add %0, 1.5 : index
}
"""

PROGRAM = r"""
#include "check.h"

#include <stdint.h>

/* prints each report with the line and column the context hands over */
static void reporter(char const *what, const tinytc_location_t *location, void *user_data) {
    (void)user_data;
    printf("report at %d.%d: %s\n", location->begin.line, location->begin.column, what);
}

static const char yateto_a[] = YATETO_A;
static const char yateto_b[] = YATETO_B;
static const char legacy_sample[] = LEGACY_SAMPLE;
static const char bad_legacy[] = BAD_LEGACY;

/* parse, compile for PVC and write the SPIR-V binary to path */
static int compile(tinytc_compiler_context_t ctx, char const *src, size_t len, char const *path,
                   char const *expect) {
    tinytc_prog_t program;
    tinytc_core_info_t info;
    tinytc_binary_t bin;
    tinytc_bundle_format_t format;
    size_t size = 0;
    uint8_t const *data = NULL;
    char *text = NULL;
    FILE *f;
    OK(tinytc_parse_string(&program, len, src, ctx));
    OK(tinytc_prog_print_to_string(program, &text));
    EXPECT(strstr(text, expect) != NULL);
    tinytc_string_destroy(text);
    OK(tinytc_core_info_intel_create_from_arch(&info, tinytc_intel_gpu_architecture_pvc));
    OK(tinytc_prog_compile_to_spirv_and_assemble(&bin, program, info));
    OK(tinytc_binary_get_raw(bin, &format, &size, &data));
    EXPECT(size > 20 && *(const uint32_t *)data == 0x07230203u);
    f = fopen(path, "wb");
    EXPECT(f != NULL);
    EXPECT(fwrite(data, 1, size, f) == size);
    fclose(f);
    OK(tinytc_binary_release(bin));
    OK(tinytc_core_info_release(info));
    OK(tinytc_prog_release(program));
    return 0;
}

int main(int argc, char **argv) {
    tinytc_compiler_context_t ctx;
    tinytc_prog_t program = NULL;
    EXPECT(argc == 4);

    /* yateto's kernels: no flag at all */
    OK(tinytc_compiler_context_create(&ctx));
    if (compile(ctx, yateto_a, sizeof(yateto_a), argv[1], "axpby.t %alpha")) return 1;
    if (compile(ctx, yateto_b, sizeof(yateto_b), argv[2], "alloca : memref<f64x56x9,local>"))
        return 1;
    /* the legacy sample: with the flag */
    OK(tinytc_compiler_context_set_optimization_flag(ctx, tinytc_optflag_legacy_language, 1));
    if (compile(ctx, legacy_sample, sizeof(legacy_sample), argv[3],
                "%A: group<memref<f32x16x8>x?>"))
        return 1;

    /* a legacy error: parse_error, one located report */
    OK(tinytc_compiler_context_set_error_reporter(ctx, reporter, NULL));
    EXPECT_STATUS(tinytc_parse_string(&program, sizeof(bad_legacy), bad_legacy, ctx),
                  tinytc_status_parse_error);
    EXPECT(program == NULL);
    OK(tinytc_compiler_context_release(ctx));
    printf("ok\n");
    return 0;
}
"""


def c_string(text: str) -> str:
    """A C string literal (JSON escapes are valid C escapes for this ASCII text)."""
    return json.dumps(text)


def test_legacy_and_yateto_text_through_parse_string(compile_c, tmp_path):
    src = PROGRAM
    for name, text in (
        ("YATETO_A", (CORPUS / "copyscaleadd_3d.ir").read_text()),
        ("YATETO_B", (CORPUS / "fused_gemms.ir").read_text()),
        ("LEGACY_SAMPLE", LEGACY_SAMPLE),
        ("BAD_LEGACY", BAD_LEGACY),
    ):
        src = src.replace(f"= {name};", f"= {c_string(text)};")
    spvs = [tmp_path / f"{k}.spv" for k in range(3)]
    out = compile_c(src, name="legacy").run(*map(str, spvs)).stdout
    reports = [line for line in out.splitlines() if line.startswith("report at")]
    assert len(reports) == 1
    assert reports[0].startswith(
        "report at 3.24: <memory>:3.24-26: Type of constant does not match type or returned value (floating constant"
    )
    assert out.endswith("ok\n")
    for spv in spvs:
        validate(spv.read_bytes())  # spirv-val, with the inline-asm stand-ins of PVC's GEMMs
