/* The program the fork tests compile (fork_after_miss.c, fork_from_thread.c): a small function
 * whose text gets a comment line of its own per call, so that every call is a kernel cache miss. */
#ifndef TINYTC_TEST_MARKED_COMPILE_H
#define TINYTC_TEST_MARKED_COMPILE_H

#include "check.h"
#include "scale_body.h"

#include <stdint.h>
#include <stdio.h>

/* Compiles `body` with the comment line "; WHO ROUND" (a text of its own: a miss the first
 * time); 0 when a non-empty SPIR-V binary came out. */
static int compile_marked(const_tinytc_core_info_t info, char const *who, int round) {
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

#endif
