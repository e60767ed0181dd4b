/* A C host that forks right after kernel cache misses (src/tinytc_py/kernel_cache/writer.py):
 * each round compiles a new text in the parent, forks, and the child compiles another new text
 * (a miss of its own) and leaves through exit(); the parent waits for it. A child that hung on
 * something the parent's miss left held (the GIL, a lock of a writer thread)
 * would stop the program, which the test runs with a timeout. Usage: fork_after_miss ROUNDS; prints "ok";
 * the test then finds every entry, its statistics and no lock file in the cache folder, and a
 * second run finds them all. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static const char body[] = "func @scale(%a: f32, %A: memref<f32x16>) {\n"
                           "    %c0 = constant 0 : index\n"
                           "    %x = load %A[%c0] : f32\n"
                           "    %y = mul %a, %x : f32\n"
                           "    store %y, %A[%c0]\n"
                           "}\n";

/* Compiles `body` with the comment line "; WHO ROUND" (a text of its own: a miss the first
 * time); 0 when a non-empty SPIR-V binary came out. */
static int compile(const_tinytc_core_info_t info, char const *who, int round) {
    char text[sizeof(body) + 64];
    int size = snprintf(text, sizeof(text), "%s; %s %d\n", body, who, round);
    tinytc_compiler_context_t ctx;
    tinytc_prog_t prog;
    tinytc_binary_t bin;
    tinytc_bundle_format_t format;
    size_t bytes;
    uint8_t const *data;
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_parse_string(&prog, (size_t)size, text, ctx));
    OK(tinytc_prog_compile_to_spirv_and_assemble(&bin, prog, info));
    OK(tinytc_binary_get_raw(bin, &format, &bytes, &data));
    EXPECT(format == tinytc_bundle_format_spirv && bytes > 0);
    OK(tinytc_binary_release(bin));
    OK(tinytc_prog_release(prog));
    OK(tinytc_compiler_context_release(ctx));
    return 0;
}

int main(int argc, char **argv) {
    tinytc_core_info_t info;
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    OK(tinytc_core_info_intel_create_from_name(&info, "pvc"));
    for (int round = 0; round < rounds; ++round) {
        int status;
        pid_t child;
        if (compile(info, "parent", round)) {
            return 1;
        }
        child = fork();
        EXPECT(child >= 0);
        if (child == 0) {
            exit(compile(info, "child", round) ? 3 : 0);
        }
        EXPECT(waitpid(child, &status, 0) == child);
        EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    OK(tinytc_core_info_release(info));
    printf("ok\n");
    return 0;
}
