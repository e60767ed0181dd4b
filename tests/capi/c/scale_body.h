/* The small function the kernel cache tests compile with a comment line of their own per call
 * (marked_compile.h, writer_thread.c), so that every call is a miss. */
#ifndef TINYTC_TEST_SCALE_BODY_H
#define TINYTC_TEST_SCALE_BODY_H

static const char body[] = "func @scale(%a: f32, %A: memref<f32x16>) {\n"
                           "    %c0 = constant 0 : index\n"
                           "    %x = load %A[%c0] : f32\n"
                           "    %y = mul %a, %x : f32\n"
                           "    store %y, %A[%c0]\n"
                           "}\n";

#endif
