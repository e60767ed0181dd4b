// A recipe in bounds-checked mode through libtinytc_sycl (the default queue's device): the
// handler from tinytc::create_recipe_handler owns the report records, set_args passes them
// and tinytc::submit's launch writes them; tinytc_recipe_handler_get_bounds_report gives the
// message. The tall_and_skinny recipe is specialized for M = 64 (block size 32): M = 64 is in
// bounds, M = 96 makes the third work-group's views lie outside A. Prints the message, then "ok".
#include <tinytc/tinytc_sycl.hpp>

#include <cstdio>
#include <sycl/sycl.hpp>

#define EXPECT(cond)                                                                           \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);           \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)
#define OK(expr) EXPECT((expr) == tinytc_status_success)

int main() {
    constexpr int64_t M = 64, N = 4, K = 3, block = 32;
    auto q = sycl::queue{sycl::property::queue::in_order{}};
    auto info = tinytc::create_core_info(q.get_device());
    tinytc_compiler_context_t ctx;
    tinytc_type_t f32;
    tinytc_recipe_t recipe;
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_compiler_context_set_optimization_flag(ctx, tinytc_optflag_bounds_checks, 1));
    OK(tinytc_f32_type_get(&f32, ctx));
    OK(tinytc_recipe_tall_and_skinny_create_specialized(&recipe, info.get(), f32, M, N, K, M, K, M,
                                                        0, 0, 0, block));
    auto handler = tinytc::create_recipe_handler(q, recipe);
    float *a = sycl::malloc_shared<float>(M * K, q), *b = sycl::malloc_shared<float>(K * N, q);
    float *c = sycl::malloc_shared<float>(M * N, q);
    for (int64_t i = 0; i < M * K; ++i) a[i] = float(i % 7);
    for (int64_t i = 0; i < K * N; ++i) b[i] = float(i + 1);
    const float alpha = 1.0f, beta = 0.0f;
    char *message = nullptr;
    for (int64_t rows : {M, M + block}) {
        for (int64_t i = 0; i < M * N; ++i) c[i] = -1.0f;
        OK(tinytc_recipe_tall_and_skinny_set_args(
            handler.get(), rows, sizeof(alpha), &alpha, tinytc_mem_type_usm_pointer, a, M,
            tinytc_mem_type_usm_pointer, b, K, sizeof(beta), &beta, tinytc_mem_type_usm_pointer, c,
            M));
        tinytc::submit(handler.get(), q).wait();
        for (int64_t j = 0; j < N; ++j) {
            for (int64_t i = 0; i < M; ++i) {
                float want = 0.0f;
                for (int64_t k = 0; k < K; ++k) want += a[i + k * M] * b[k + j * K];
                EXPECT(c[i + j * M] == want);
            }
        }
        OK(tinytc_recipe_handler_get_bounds_report(handler.get(), &message));
        EXPECT((message != nullptr) == (rows > M));
        if (message) {
            std::printf("%s\n", message);
            tinytc_string_destroy(message);
        }
    }
    sycl::free(a, q);
    sycl::free(b, q);
    sycl::free(c, q);
    OK(tinytc_recipe_release(recipe));
    OK(tinytc_compiler_context_release(ctx));
    std::printf("ok\n");
    return 0;
}
