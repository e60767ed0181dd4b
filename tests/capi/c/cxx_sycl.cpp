// The SYCL interop (tinytc_sycl.hpp, libtinytc_sycl) on the default queue's device: support
// level and core info, kernel bundles from a program and from a binary, kernels by name, group,
// global and execution ranges, launches through handler::set_args checked against host results,
// and the small GEMM recipe through parallel_for in the caller's command group and through all
// three submit overloads (event dependencies). Errors: an unknown kernel name, a recipe launched
// before set_args. Prints "ok".
#include "cxx_kernels.hpp"

#include <tinytc/tinytc_sycl.hpp>

#include <cmath>
#include <sycl/sycl.hpp>
#include <vector>

using namespace tinytc;

namespace {

template <typename F> void expect_status(status want, F &&body) {
    try {
        body();
    } catch (status got) {
        CHECK(got == want);
        return;
    }
    throw std::runtime_error("expected a tinytc::status");
}

void kernels(sycl::queue &q) {
    auto dev = q.get_device();
    auto ctx = create_compiler_context();
    auto prog = make_kernels(ctx.get());
    auto info = create_core_info(dev);
    CHECK(info && get_subgroup_sizes(info.get()).size() >= 1);

    auto bundle = create_kernel_bundle(q.get_context(), dev, prog.get());
    auto bin = compile_to_spirv_and_assemble(prog.get(), info.get());
    auto bundle_from_binary = create_kernel_bundle(q.get_context(), dev, bin.get());
    auto axpy = create_kernel(bundle, "axpy");
    auto total = create_kernel(bundle_from_binary, "total");
    expect_status(status::compute_runtime_error, [&] { create_kernel(bundle, "no_such"); });

    auto local = get_group_size(axpy);
    CHECK(local[0] == 1 && local[1] >= 1 && local[2] >= 1);
    auto global = get_global_size({1, 2, 3}, local);
    CHECK(global == (sycl::range<3u>{local[0], 2 * local[1], 3 * local[2]}));

    constexpr std::int64_t n = 100;
    float *A = sycl::malloc_shared<float>(n, q), *B = sycl::malloc_shared<float>(n, q);
    float *out = sycl::malloc_shared<float>(1, q);
    auto b0 = std::vector<float>(n);
    for (std::int64_t i = 0; i < n; ++i) {
        A[i] = float(i % 7) - 3.0f;
        B[i] = b0[i] = 0.5f * float(i);
    }
    float const alpha = 2.0f;
    auto range = get_execution_range(axpy, {1, 1, std::size_t(n)});
    CHECK(range.get_local_range() == local);
    CHECK(range.get_global_range() == (sycl::range<3u>{local[0], local[1], n * local[2]}));
    q.submit([&](sycl::handler &h) {
        h.set_args(alpha, A, n, B, n);
        h.parallel_for(range, axpy);
    });
    std::int64_t const one = 1;
    q.submit([&](sycl::handler &h) {
        h.set_args(B, n, out, one);
        h.parallel_for(get_execution_range(total, {1, 1, 1}), total);
    });
    q.wait();
    float expected = 0.0f;
    for (std::int64_t i = 0; i < n; ++i) {
        CHECK(B[i] == alpha * A[i] + b0[i]);
        expected += B[i];
    }
    CHECK(std::abs(out[0] - expected) <= 1e-5f * std::abs(expected));
    sycl::free(A, q);
    sycl::free(B, q);
    sycl::free(out, q);
}

void recipe(sycl::queue &q) {
    constexpr std::int64_t M = 4, N = 3, K = 5, howmany = 6;
    auto info = create_core_info(q.get_device());
    auto ctx = create_compiler_context();
    auto rec = create_small_gemm_batched(info.get(), get<f32_type>(ctx.get()), transpose::N,
                                         transpose::N, M, N, K, M, M * K, K, K * N, M, M * N);
    auto handler = create_recipe_handler(q.get_context(), q.get_device(), rec.get());
    auto from_queue = create_recipe_handler(q, rec.get());
    CHECK(get_recipe(handler.get()) == rec && get_recipe(from_queue.get()) == rec);
    expect_status(status::invalid_kernel_arguments, [&] { submit(from_queue.get(), q); });

    float *a = sycl::malloc_shared<float>(M * K * howmany, q);
    float *b = sycl::malloc_shared<float>(K * N * howmany, q);
    float *c = sycl::malloc_shared<float>(M * N * howmany, q);
    for (std::int64_t i = 0; i < M * K * howmany; ++i) a[i] = float(i % 5) - 2.0f;
    for (std::int64_t i = 0; i < K * N * howmany; ++i) b[i] = float(i % 3) + 0.5f;
    for (std::int64_t i = 0; i < M * N * howmany; ++i) c[i] = 1.0f;
    auto ab = std::vector<float>(M * N * howmany, 0.0f);
    for (std::int64_t h = 0; h < howmany; ++h)
        for (std::int64_t j = 0; j < N; ++j)
            for (std::int64_t i = 0; i < M; ++i)
                for (std::int64_t k = 0; k < K; ++k)
                    ab[h * M * N + j * M + i] += a[h * M * K + k * M + i] * b[h * K * N + j * K + k];

    // C = AB + 0.5 C four times, each launch after the previous one (in-order or by events):
    // the c_n = ab + 0.5 c_{n-1} recurrence starting at 1 gives 1.875 ab + 0.0625 after four.
    set_small_gemm_batched_args(handler.get(), howmany, 1.0f, a, b, 0.5f, c);
    q.submit([&](sycl::handler &h) { parallel_for(handler.get(), h); });
    auto e1 = submit(handler.get(), q);
    auto e2 = submit(handler.get(), q, e1);
    submit(handler.get(), q, std::vector<sycl::event>{e1, e2}).wait();
    for (std::size_t i = 0; i < ab.size(); ++i) {
        float const want = 1.875f * ab[i] + 0.0625f;
        CHECK(std::abs(c[i] - want) <= 1e-4f * (1.0f + std::abs(want)));
    }
    sycl::free(a, q);
    sycl::free(b, q);
    sycl::free(c, q);
}

void run() {
    auto q = sycl::queue{sycl::property::queue::in_order{}};
    CHECK(get_support_level(q.get_device()) != support_level::none);
    kernels(q);
    recipe(q);
}

} // namespace

int main() { return run_test(run); }
