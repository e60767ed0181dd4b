"""Malformed builder calls through libtinytc.so reach the IR (ir/, compiled by mypyc when built)
and return the status of the violated rule, not runtime_error: what a TypeError from a run-time
check of an unverified annotation would give (tests/test_compiled_input.py has the Python side)."""

from __future__ import annotations

SOURCE = r"""
#include "check.h"

int main(void) {
    tinytc_compiler_context_t ctx;
    tinytc_type_t void_ty, f32, index, memref, coop, bad = NULL;
    tinytc_func_t fn;
    tinytc_region_t body;
    tinytc_value_t params[3];
    size_t n = 3;
    tinytc_inst_t inst = NULL;
    const tinytc_location_t loc = {{0, 1, 1}, {0, 1, 2}};
    const int64_t shape[2] = {8, 8};

    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_f32_type_get(&f32, ctx));
    OK(tinytc_index_type_get(&index, ctx));
    OK(tinytc_void_type_get(&void_ty, ctx));
    OK(tinytc_memref_type_get(&memref, f32, 2, shape, 0, NULL, tinytc_address_space_global));
    OK(tinytc_coopmatrix_type_get(&coop, f32, 8, 8, tinytc_matrix_use_a));
    {
        const tinytc_type_t types[3] = {memref, f32, index};
        OK(tinytc_func_create(&fn, 1, "k", 3, types, void_ty, &loc));
    }
    OK(tinytc_func_get_body(fn, &body));
    OK(tinytc_region_get_parameters(body, &n, params));
    const tinytc_value_t ij[2] = {params[2], params[2]};

    /* types of the wrong kind where the context makes a type */
    EXPECT_STATUS(tinytc_coopmatrix_type_get(&bad, memref, 8, 8, tinytc_matrix_use_a),
                  tinytc_status_ir_expected_number);
    EXPECT_STATUS(tinytc_coopmatrix_type_get(&bad, f32, 0, 8, tinytc_matrix_use_a),
                  tinytc_status_ir_invalid_shape);
    EXPECT_STATUS(tinytc_coopmatrix_type_get(&bad, f32, 8, 8, (tinytc_matrix_use_t)7),
                  tinytc_status_invalid_arguments);
    EXPECT_STATUS(tinytc_group_type_get(&bad, f32, 4, 0), tinytc_status_ir_expected_memref);
    EXPECT_STATUS(tinytc_memref_type_get(&bad, memref, 2, shape, 0, NULL,
                                         tinytc_address_space_global),
                  tinytc_status_ir_expected_number);
    EXPECT(bad == NULL);

    /* operands of the wrong kind: a number where a memref, coopmatrix, integer or bool goes */
    EXPECT_STATUS(tinytc_load_inst_create(&inst, params[1], 1, ij, f32, &loc),
                  tinytc_status_ir_expected_memref_or_group);
    EXPECT_STATUS(tinytc_store_inst_create(&inst, params[1], params[1], 2, ij, &loc),
                  tinytc_status_ir_expected_memref);
    EXPECT_STATUS(tinytc_cooperative_matrix_scale_inst_create(&inst, params[1], params[1], coop,
                                                              &loc),
                  tinytc_status_ir_expected_coopmatrix);
    EXPECT_STATUS(tinytc_for_inst_create(&inst, params[1], params[1], NULL, 0, NULL, 0, NULL,
                                         &loc),
                  tinytc_status_ir_expected_int);
    EXPECT_STATUS(tinytc_if_inst_create(&inst, params[1], 0, NULL, &loc),
                  tinytc_status_ir_expected_boolean);
    EXPECT_STATUS(tinytc_cast_inst_create(&inst, params[0], f32, &loc),
                  tinytc_status_ir_expected_number);
    /* a NULL value where the row needs one: the missing operand, not a crash */
    EXPECT_STATUS(tinytc_load_inst_create(&inst, NULL, 0, NULL, f32, &loc),
                  tinytc_status_invalid_arguments);
    EXPECT(inst == NULL);

    tinytc_func_destroy(fn);
    OK(tinytc_compiler_context_release(ctx));
    printf("ok\n");
    return 0;
}
"""


def test_builder_calls_with_operands_of_the_wrong_kind_return_their_status(compile_c):
    result = compile_c(SOURCE).run()
    assert result.stdout == "ok\n", result.stderr
