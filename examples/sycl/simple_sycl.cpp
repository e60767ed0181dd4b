// SYCL example: a kernel written in the tensor language and the small GEMM batched recipe, both
// launched through an in-order sycl::queue on USM memory, results checked on the host.
// No SYCL compiler is needed: tinytc compiles the kernels, g++ compiles this host code.
//
// Build (see docs/sycl.rst):
//   g++ -std=c++17 simple_sycl.cpp -o simple_sycl $(pkg-config --cflags --libs tinytc_sycl)
#include <tinytc/tinytc.hpp>
#include <tinytc/tinytc_sycl.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sycl/sycl.hpp>

// y_k = alpha A_k x_k + beta y_k for k = 0..howmany-1; one work-group per batch entry.
constexpr char const *matvec_source = R"(
func @matvec_batched(%alpha: f32, %A: memref<f32x?x?x?>, %x: memref<f32x?x?>, %beta: f32,
                     %y: memref<f32x?x?>) {
    %k = group_id.x : index
    %m = size %A[0] : index
    %n = size %A[1] : index
    %a = subview %A[0:%m, 0:%n, %k] : memref<f32x?x?,strided<1,?>>
    %xk = subview %x[0:%n, %k] : memref<f32x?>
    %yk = subview %y[0:%m, %k] : memref<f32x?>
    %c0 = constant 0 : index
    %zero = constant 0.0 : f32
    foreach (%i) = (%c0), (%m) {
        %dot = for %j = %c0, %n init(%s = %zero) -> (f32) {
            %aij = load %a[%i, %j] : f32
            %xj = load %xk[%j] : f32
            %p = mul %aij, %xj : f32
            %s1 = add %s, %p : f32
            yield (%s1)
        }
        %ax = mul %alpha, %dot : f32
        %yi = load %yk[%i] : f32
        %by = mul %beta, %yi : f32
        %r = add %ax, %by : f32
        store %r, %yk[%i]
    }
}
)";

// Runs matvec_batched on m x n matrices; returns how many entries of y differ from the host's.
int run_matvec(sycl::queue &q) {
    constexpr std::int64_t m = 37, n = 23, howmany = 50;
    auto prog = tinytc::parse_string(matvec_source);
    auto bundle = tinytc::create_kernel_bundle(q.get_context(), q.get_device(), prog.get());
    auto kernel = tinytc::create_kernel(bundle, "matvec_batched");

    float *A = sycl::malloc_shared<float>(m * n * howmany, q);
    float *x = sycl::malloc_shared<float>(n * howmany, q);
    float *y = sycl::malloc_shared<float>(m * howmany, q);
    for (std::int64_t i = 0; i < m * n * howmany; ++i) A[i] = float(i % 11) - 5.0f;
    for (std::int64_t i = 0; i < n * howmany; ++i) x[i] = float(i % 7) * 0.25f;
    for (std::int64_t i = 0; i < m * howmany; ++i) y[i] = 1.0f;
    float const alpha = 2.0f, beta = 0.5f;

    // Arguments in the order of the kernel's signature; a dynamic memref<f32x?x?x?> is its
    // pointer followed by its dynamic sizes and strides (here: sizes m, n, howmany, strides
    // m, m*n).
    q.submit([&](sycl::handler &h) {
        h.set_args(alpha, A, m, n, howmany, m, m * n, x, n, howmany, n, beta, y, m, howmany, m);
        h.parallel_for(tinytc::get_execution_range(kernel, {1, 1, std::size_t(howmany)}), kernel);
    });
    q.wait();

    int wrong = 0;
    for (std::int64_t k = 0; k < howmany; ++k) {
        for (std::int64_t i = 0; i < m; ++i) {
            float dot = 0.0f;
            for (std::int64_t j = 0; j < n; ++j) dot += A[i + j * m + k * m * n] * x[j + k * n];
            float const want = alpha * dot + beta * 1.0f;
            if (std::abs(y[i + k * m] - want) > 1e-4f * (1.0f + std::abs(want))) ++wrong;
        }
    }
    std::printf("custom kernel: %d of %lld entries wrong\n", wrong, (long long)(m * howmany));
    sycl::free(A, q);
    sycl::free(x, q);
    sycl::free(y, q);
    return wrong;
}

// C_k = 1.5 A_k B_k + 0.5 C_k with the small GEMM batched recipe; returns wrong entries of C.
int run_recipe(sycl::queue &q) {
    constexpr std::int64_t M = 16, N = 8, K = 12, howmany = 100;
    auto info = tinytc::create_core_info(q.get_device());
    auto ctx = tinytc::create_compiler_context();
    auto rec = tinytc::create_small_gemm_batched(
        info.get(), tinytc::get<tinytc::f32_type>(ctx.get()), tinytc::transpose::N,
        tinytc::transpose::N, M, N, K, M, M * K, K, K * N, M, M * N);
    auto handler = tinytc::create_recipe_handler(q, rec.get());

    float *A = sycl::malloc_shared<float>(M * K * howmany, q);
    float *B = sycl::malloc_shared<float>(K * N * howmany, q);
    float *C = sycl::malloc_shared<float>(M * N * howmany, q);
    for (std::int64_t i = 0; i < M * K * howmany; ++i) A[i] = float(i % 5) - 2.0f;
    for (std::int64_t i = 0; i < K * N * howmany; ++i) B[i] = float(i % 3) + 0.5f;
    for (std::int64_t i = 0; i < M * N * howmany; ++i) C[i] = 1.0f;

    tinytc::set_small_gemm_batched_args(handler.get(), howmany, 1.5f, A, B, 0.5f, C);
    tinytc::submit(handler.get(), q).wait();

    int wrong = 0;
    for (std::int64_t h = 0; h < howmany; ++h) {
        for (std::int64_t j = 0; j < N; ++j) {
            for (std::int64_t i = 0; i < M; ++i) {
                float ab = 0.0f;
                for (std::int64_t k = 0; k < K; ++k) {
                    ab += A[h * M * K + k * M + i] * B[h * K * N + j * K + k];
                }
                float const want = 1.5f * ab + 0.5f;
                if (std::abs(C[h * M * N + j * M + i] - want) > 1e-4f * (1.0f + std::abs(want))) {
                    ++wrong;
                }
            }
        }
    }
    std::printf("gemm recipe: %d of %lld entries wrong\n", wrong, (long long)(M * N * howmany));
    sycl::free(A, q);
    sycl::free(B, q);
    sycl::free(C, q);
    return wrong;
}

int main() {
    try {
        auto q = sycl::queue{sycl::property::queue::in_order{}};
        auto const dev = q.get_device();
        std::printf("device: %s (%s)\n", dev.get_info<sycl::info::device::name>().c_str(),
                    dev.get_backend() == sycl::backend::opencl ? "OpenCL" : "Level Zero");
        if (tinytc::get_support_level(dev) == tinytc::support_level::none) {
            std::printf("tinytc does not support this device\n");
            return 1;
        }
        int const wrong = run_matvec(q) + run_recipe(q);
        return wrong == 0 ? 0 : 1;
    } catch (tinytc::status const &st) {
        std::fprintf(stderr, "tinytc error: %s\n", tinytc::to_string(st));
    } catch (sycl::exception const &e) {
        std::fprintf(stderr, "SYCL error: %s\n", e.what());
    }
    return 1;
}
