// Test helpers of the C++ API programs: a failing CHECK throws (main prints it and returns 1),
// and the two kernels every runtime test launches, built with tinytc's C++ builder.
#ifndef TINYTC_TEST_CXX_KERNELS_HPP
#define TINYTC_TEST_CXX_KERNELS_HPP

#include <tinytc/tinytc.hpp>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            throw std::runtime_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) +  \
                                     ": expected " #cond);                                     \
        }                                                                                      \
    } while (0)

//! Runs body; prints what it threw (a tinytc::status by its text) and gives main's exit code
template <typename F> int run_test(F &&body) {
    try {
        body();
    } catch (tinytc::status s) {
        std::fprintf(stderr, "tinytc::status %d: %s\n", int(s), tinytc::to_string(s));
        return 1;
    } catch (std::exception const &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    std::printf("ok\n");
    return 0;
}

/**
 * Two kernels over memref<f32x?>:
 *   axpy(alpha: f32, A, B)   work-group g sets B[g] = alpha * A[g] + B[g]
 *   total(A, out)            out[0] = sum of A[i] (a for loop carrying the sum)
 */
inline auto make_kernels(tinytc_compiler_context_t ctx) -> tinytc::shared_handle<tinytc_prog_t> {
    using namespace tinytc;
    auto f32 = get<f32_type>(ctx);
    auto index = get<index_type>(ctx);
    auto vec = get<memref_type>(f32, array_view<std::int64_t>{dynamic},
                                array_view<std::int64_t>{1}, address_space::global);
    auto void_ty = get<void_type>(ctx);
    auto prog = create_prog(ctx);

    auto axpy = create_func("axpy", {f32, vec, vec}, void_ty);
    auto params = std::vector<tinytc_value_t>(3);
    CHECK(get_parameters(get_body(axpy.get()), params) == 3);
    set_name(params[0], "alpha");
    auto bb = region_builder{get_body(axpy.get())};
    auto gid = bb.create<group_id_inst>(comp3::x, index);
    auto a = bb.create<load_inst>(params[1], array_view<tinytc_value_t>{gid}, f32);
    auto b = bb.create<load_inst>(params[2], array_view<tinytc_value_t>{gid}, f32);
    auto ax = bb.create<mul_inst>(params[0], a, f32);
    auto sum = bb.create<add_inst>(ax, b, f32);
    bb.create<store_inst>(sum, params[2], array_view<tinytc_value_t>{gid});
    add_function(prog.get(), std::move(axpy));

    auto total = create_func("total", {vec, vec}, void_ty);
    auto tp = std::vector<tinytc_value_t>(2);
    get_parameters(get_body(total.get()), tp);
    auto tb = region_builder{get_body(total.get())};
    auto zero_i = tb.constant_zero(index);
    auto n = tb.create<size_inst>(std::int64_t{0}, tp[0], index);
    auto one_i = tb.constant_one(index);
    auto acc0 = tb.constant_zero(f32);
    auto results = tb.for_loop(zero_i, n, one_i, {acc0}, {f32},
                               [&](region_builder &body, array_view<tinytc_value_t> p) {
                                   auto x = body.create<load_inst>(
                                       tp[0], array_view<tinytc_value_t>{p[0]}, f32);
                                   auto next = body.create<add_inst>(p[1], x, f32);
                                   body.create<yield_inst>(array_view<tinytc_value_t>{next});
                               });
    CHECK(results.size() == 1);
    tb.create<store_inst>(results[0], tp[1], array_view<tinytc_value_t>{zero_i});
    add_function(prog.get(), std::move(total));
    return prog;
}

#endif // TINYTC_TEST_CXX_KERNELS_HPP
