// The C++ Level Zero interop (tinytc_ze.hpp) through the real loader: core info from a device,
// modules and kernels in unique_handles (from a program and from a binary), group sizes, launches
// checked against host results, and the small GEMM recipe on USM pointers with a signal event.
// Prints "ok".
#include "cxx_kernels.hpp"

#include <tinytc/tinytc_ze.hpp>

#include <cmath>
#include <level_zero/ze_api.h>
#include <vector>

using namespace tinytc;

namespace {

struct level_zero {
    ze_driver_handle_t driver = nullptr;
    ze_device_handle_t device = nullptr;
    ze_context_handle_t context = nullptr;
    ze_command_list_handle_t list = nullptr;
    ze_event_pool_handle_t pool = nullptr;
    ze_event_handle_t done = nullptr;

    level_zero() {
        ZE_CHECK_STATUS(zeInit(0));
        std::uint32_t count = 1;
        ZE_CHECK_STATUS(zeDriverGet(&count, &driver));
        count = 1;
        ZE_CHECK_STATUS(zeDeviceGet(driver, &count, &device));
        auto ctx_desc = ze_context_desc_t{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
        ZE_CHECK_STATUS(zeContextCreate(driver, &ctx_desc, &context));
        auto queue_desc = ze_command_queue_desc_t{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                                  nullptr,
                                                  0,
                                                  0,
                                                  0,
                                                  ZE_COMMAND_QUEUE_MODE_DEFAULT,
                                                  ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ZE_CHECK_STATUS(zeCommandListCreateImmediate(context, device, &queue_desc, &list));
        auto pool_desc = ze_event_pool_desc_t{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                                              ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
        ZE_CHECK_STATUS(zeEventPoolCreate(context, &pool_desc, 1, &device, &pool));
        auto event_desc = ze_event_desc_t{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0,
                                          ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
        ZE_CHECK_STATUS(zeEventCreate(pool, &event_desc, &done));
    }
    ~level_zero() {
        zeEventDestroy(done);
        zeEventPoolDestroy(pool);
        zeCommandListDestroy(list);
        zeContextDestroy(context);
    }
    //! Waits for everything appended so far (through the signal event)
    void wait() {
        ZE_CHECK_STATUS(zeCommandListAppendSignalEvent(list, done));
        ZE_CHECK_STATUS(zeEventHostSynchronize(done, UINT64_MAX));
        ZE_CHECK_STATUS(zeEventHostReset(done));
    }
    template <typename T> auto shared(std::vector<T> const &host) -> T * {
        auto dev_desc = ze_device_mem_alloc_desc_t{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC,
                                                   nullptr, 0, 0};
        auto host_desc = ze_host_mem_alloc_desc_t{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr,
                                                  0};
        void *ptr = nullptr;
        ZE_CHECK_STATUS(zeMemAllocShared(context, &dev_desc, &host_desc, host.size() * sizeof(T),
                                         64, device, &ptr));
        std::copy(host.begin(), host.end(), static_cast<T *>(ptr));
        return static_cast<T *>(ptr);
    }
};

void launch(level_zero &ze, unique_handle<ze_kernel_handle_t> const &kernel, std::uint32_t groups,
            std::vector<std::pair<std::size_t, void const *>> const &args) {
    for (std::uint32_t i = 0; i < args.size(); ++i) {
        ZE_CHECK_STATUS(zeKernelSetArgumentValue(kernel.get(), i, args[i].first, args[i].second));
    }
    auto count = ze_group_count_t{groups, 1, 1};
    ZE_CHECK_STATUS(
        zeCommandListAppendLaunchKernel(ze.list, kernel.get(), &count, nullptr, 0, nullptr));
    ze.wait();
}

void run() {
    auto ze = level_zero{};
    CHECK(get_support_level(ze.device) != support_level::none);
    auto info = create_core_info(ze.device);
    auto ctx = create_compiler_context();
    auto prog = make_kernels(ctx.get());
    auto module = create_kernel_bundle(ze.context, ze.device, prog.get());
    auto bin = compile_to_spirv_and_assemble(prog.get(), info.get());
    auto module_from_binary = create_kernel_bundle(ze.context, ze.device, bin.get());
    auto axpy = create_kernel(module.get(), "axpy");
    auto total = create_kernel(module_from_binary.get(), "total");
    auto gs = get_group_size(axpy.get());
    CHECK(gs[0] >= 1 && gs[1] >= 1 && gs[2] == 1);

    constexpr std::int64_t n = 100;
    auto a = std::vector<float>(n), b = std::vector<float>(n);
    for (std::int64_t i = 0; i < n; ++i) {
        a[i] = float(i % 7) - 3.0f;
        b[i] = 0.5f * float(i);
    }
    float *A = ze.shared(a), *B = ze.shared(b), *out = ze.shared(std::vector<float>{0.0f});
    float alpha = 2.0f;
    std::int64_t one = 1;
    launch(ze, axpy, n,
           {{sizeof(alpha), &alpha}, {sizeof(A), &A}, {sizeof(n), &n}, {sizeof(B), &B},
            {sizeof(n), &n}});
    for (std::int64_t i = 0; i < n; ++i) {
        CHECK(B[i] == alpha * a[i] + b[i]);
    }
    launch(ze, total, 1, {{sizeof(B), &B}, {sizeof(n), &n}, {sizeof(out), &out}, {sizeof(one), &one}});
    float expected = 0.0f;
    for (std::int64_t i = 0; i < n; ++i) {
        expected += B[i];
    }
    CHECK(std::abs(out[0] - expected) <= 1e-5f * std::abs(expected));

    // recipe on USM pointers (auto_mem_type of float* is usm_pointer)
    constexpr std::int64_t M = 4, N = 3, K = 5, howmany = 6;
    auto ga = std::vector<float>(M * K * howmany), gb = std::vector<float>(K * N * howmany);
    auto gc = std::vector<float>(M * N * howmany, 1.0f);
    for (std::size_t i = 0; i < ga.size(); ++i) ga[i] = float(i % 5) - 2.0f;
    for (std::size_t i = 0; i < gb.size(); ++i) gb[i] = float(i % 3) + 0.5f;
    float *GA = ze.shared(ga), *GB = ze.shared(gb), *GC = ze.shared(gc);
    auto rec = create_small_gemm_batched(info.get(), get<f32_type>(ctx.get()), transpose::N,
                                         transpose::N, M, N, K, M, M * K, K, K * N, M, M * N);
    auto handler = create_recipe_handler(ze.context, ze.device, rec.get());
    static_assert(auto_mem_type_v<float *> == mem_type::usm_pointer);
    set_small_gemm_batched_args(handler.get(), howmany, 1.0f, GA, GB, 0.5f, GC);
    submit(handler.get(), ze.list, ze.done);
    ZE_CHECK_STATUS(zeEventHostSynchronize(ze.done, UINT64_MAX));
    for (std::int64_t h = 0; h < howmany; ++h) {
        for (std::int64_t j = 0; j < N; ++j) {
            for (std::int64_t i = 0; i < M; ++i) {
                float ref = 0.5f * gc[h * M * N + j * M + i];
                for (std::int64_t k = 0; k < K; ++k) {
                    ref += ga[h * M * K + k * M + i] * gb[h * K * N + j * K + k];
                }
                CHECK(std::abs(GC[h * M * N + j * M + i] - ref) <= 1e-5f);
            }
        }
    }
    for (float *p : {A, B, out, GA, GB, GC}) {
        ZE_CHECK_STATUS(zeMemFree(ze.context, p));
    }
}

} // namespace

int main() { return run_test(run); }
