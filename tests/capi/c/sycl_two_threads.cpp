// Two host threads use the SYCL interop at once, each with its own in-order queue: each
// creates small GEMM recipes of its own sizes (so both compile at the same time through the
// library), their handlers, and launches them through tinytc::submit, while the other thread
// does the same; every result is checked against the host's. Prints "ok".
#include "cxx_kernels.hpp"

#include <tinytc/tinytc_sycl.hpp>

#include <atomic>
#include <cmath>
#include <exception>
#include <sycl/sycl.hpp>
#include <thread>
#include <vector>

using namespace tinytc;

namespace {

constexpr int rounds = 4;
constexpr std::int64_t howmany = 8;
std::atomic<int> waiting{2};

//! Round r of thread t: C = A B (+ 0 C) for M x K and K x N matrices of sizes that no other
//! round or thread uses, launched twice (the second launch's result is the same).
void gemm_round(sycl::queue &q, int t, int r) {
    std::int64_t const M = 3 + 2 * r + t, N = 2 + t, K = 4 + r;
    auto info = create_core_info(q.get_device());
    auto ctx = create_compiler_context();
    auto rec = create_small_gemm_batched(info.get(), get<f32_type>(ctx.get()), transpose::N,
                                         transpose::N, M, N, K, M, M * K, K, K * N, M, M * N);
    auto handler = create_recipe_handler(q, rec.get());
    float *a = sycl::malloc_shared<float>(M * K * howmany, q);
    float *b = sycl::malloc_shared<float>(K * N * howmany, q);
    float *c = sycl::malloc_shared<float>(M * N * howmany, q);
    for (std::int64_t i = 0; i < M * K * howmany; ++i) a[i] = float((i + t) % 5) - 2.0f;
    for (std::int64_t i = 0; i < K * N * howmany; ++i) b[i] = float((i + r) % 3) + 0.5f;
    for (std::int64_t i = 0; i < M * N * howmany; ++i) c[i] = -7.0f;
    set_small_gemm_batched_args(handler.get(), howmany, 1.0f, a, b, 0.0f, c);
    submit(handler.get(), q, submit(handler.get(), q)).wait();
    for (std::int64_t h = 0; h < howmany; ++h)
        for (std::int64_t j = 0; j < N; ++j)
            for (std::int64_t i = 0; i < M; ++i) {
                float want = 0.0f;
                for (std::int64_t k = 0; k < K; ++k)
                    want += a[h * M * K + k * M + i] * b[h * K * N + j * K + k];
                CHECK(std::abs(c[h * M * N + j * M + i] - want) <= 1e-4f * (1.0f + std::abs(want)));
            }
    sycl::free(a, q);
    sycl::free(b, q);
    sycl::free(c, q);
}

void thread_body(int t, std::exception_ptr &failure) {
    try {
        auto q = sycl::queue{sycl::property::queue::in_order{}};
        --waiting;
        while (waiting.load() > 0) { // both threads start their rounds together
            std::this_thread::yield();
        }
        for (int r = 0; r < rounds; ++r) {
            gemm_round(q, t, r);
        }
    } catch (...) {
        failure = std::current_exception();
    }
}

void run() {
    std::exception_ptr failures[2];
    std::thread first(thread_body, 0, std::ref(failures[0]));
    std::thread second(thread_body, 1, std::ref(failures[1]));
    first.join();
    second.join();
    for (auto &failure : failures) {
        if (failure) {
            std::rethrow_exception(failure);
        }
    }
}

} // namespace

int main() { return run_test(run); }
