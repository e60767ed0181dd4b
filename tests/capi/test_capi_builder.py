"""The builder C API through libtinytc.so: upstream's builder example flow and a wider program
(loops, ifs, attributes, iterators, ownership), printed and compiled to valid SPIR-V."""

from __future__ import annotations

import time

from .test_capi_core import spirv_val

EXAMPLE_IR = """\
func @copy(%A: memref<f32x5x16>, %B: memref<f32x5x16>) {
    %alpha = constant 0x1p+0 : f32
    %0 = constant 0x0p+0 : f32
    axpby %alpha, %A, %0, %B
}
"""

API_IR = """\
func @reduce(%A: memref<f32x?> {alignment=64}, %n: index) \
attributes{subgroup_size=16, work_group_size=[16,1]} {
    %0 = constant 0 : index
    %1 = constant 0x0p+0 : f32
    %2 = for %i=%0,%n init(%acc=%1) -> (f32) {
        %3 = load %A[%i] : f32
        %4 = add %acc, %3 : f32
        yield (%4)
    }
    %5 = less_than %2, %1 : bool
    if %5 {
        store %1, %A[%0]
    }
    store %2, %A[%0]
}
"""


def test_builder_example(compile_c):
    assert compile_c("builder_example.c").run().stdout == EXAMPLE_IR


def test_builder_api(compile_c, tmp_path):
    spv = tmp_path / "reduce.spv"
    assert compile_c("builder_api.c").run(str(spv)).stdout == API_IR
    spirv_val(spv)


def test_builder_example_as_cxx(compile_c):
    assert compile_c("builder_example.c", cxx=True).run().stdout == EXAMPLE_IR


def test_builder_call_cost(compile_c):
    """10 000 builder calls from C take well under a second (issue 5's budget)."""
    src = """
#include <tinytc/tinytc.h>
#include <stdio.h>
int main(void) {
    tinytc_compiler_context_t ctx;
    tinytc_type_t f32;
    tinytc_inst_t inst;
    int i;
    if (tinytc_compiler_context_create(&ctx) || tinytc_f32_type_get(&f32, ctx)) return 1;
    for (i = 0; i < 5000; ++i) {
        if (tinytc_constant_inst_create_float(&inst, 1.0, f32, NULL)) return 2;
        tinytc_inst_destroy(inst);
    }
    return tinytc_compiler_context_release(ctx);
}
"""
    prog = compile_c(src)
    prog.run()  # the first run pays for starting Python
    start = time.perf_counter()
    prog.run()
    assert time.perf_counter() - start < 3.0
