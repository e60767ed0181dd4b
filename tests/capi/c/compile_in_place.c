/* A parsed program compiled through the C API is changed in place, as the API says: what the
 * program shows after a compile (print, a pass, a second compile) is the lowered program.
 *
 * compile_in_place <source.ir> <mode> [out1 out2]
 *   print  compile for PVC, set the optimization level to 0, print the program
 *   pass   compile for PVC, run constant-propagation, print the program
 *   twice  compile for PVC, then for TGL: the binaries to out1 and out2 */
#include "check.h"

#include <stdlib.h>

static int write_binary(tinytc_binary_t bin, char const *path) {
    tinytc_bundle_format_t format;
    size_t size;
    uint8_t const *data;
    FILE *f;
    OK(tinytc_binary_get_raw(bin, &format, &size, &data));
    f = fopen(path, "wb");
    EXPECT(f != NULL);
    EXPECT(fwrite(data, 1, size, f) == size);
    EXPECT(fclose(f) == 0);
    return 0;
}

static int print_prog(tinytc_prog_t prg) {
    char *str;
    OK(tinytc_prog_print_to_string(prg, &str));
    fputs(str, stdout);
    tinytc_string_destroy(str);
    return 0;
}

int main(int argc, char **argv) {
    tinytc_compiler_context_t ctx;
    tinytc_prog_t prg;
    tinytc_core_info_t pvc, tgl;
    tinytc_binary_t bin, bin2;
    char const *mode;
    EXPECT(argc >= 3);
    mode = argv[2];
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_parse_file(&prg, argv[1], ctx));
    OK(tinytc_core_info_intel_create_from_arch(&pvc, tinytc_intel_gpu_architecture_pvc));
    OK(tinytc_core_info_intel_create_from_arch(&tgl, tinytc_intel_gpu_architecture_tgl));
    OK(tinytc_prog_compile_to_spirv_and_assemble(&bin, prg, pvc));
    if (strcmp(mode, "print") == 0) {
        /* the program shows the compile's pipeline, run at the level of the compile */
        OK(tinytc_compiler_context_set_optimization_level(ctx, 0));
        if (print_prog(prg)) {
            return 1;
        }
    } else if (strcmp(mode, "pass") == 0) {
        OK(tinytc_run_function_pass("constant-propagation", prg, pvc));
        if (print_prog(prg)) {
            return 1;
        }
    } else if (strcmp(mode, "twice") == 0) {
        EXPECT(argc == 5);
        OK(tinytc_prog_compile_to_spirv_and_assemble(&bin2, prg, tgl));
        if (write_binary(bin, argv[3]) || write_binary(bin2, argv[4])) {
            return 1;
        }
        OK(tinytc_binary_release(bin2));
    } else {
        EXPECT(0);
    }
    OK(tinytc_binary_release(bin));
    OK(tinytc_core_info_release(tgl));
    OK(tinytc_core_info_release(pvc));
    OK(tinytc_prog_release(prg));
    OK(tinytc_compiler_context_release(ctx));
    puts("ok");
    return 0;
}
