// The C++ OpenCL interop (tinytc_cl.hpp) on the host's own OpenCL objects: core info from a
// cl_device_id, kernel bundles from a program and from a binary, kernels in shared_handles,
// group/global sizes, launches checked against host results, and the small GEMM recipe with
// cl_mem buffers (auto_mem_type<cl_mem>) and an event. Prints "ok".
#include "cxx_kernels.hpp"

#include <tinytc/tinytc_cl.hpp>

#include <CL/cl.h>
#include <array>
#include <cmath>
#include <vector>

using namespace tinytc;

namespace {

auto first_device() -> cl_device_id {
    cl_uint num_platforms = 0;
    CL_CHECK_STATUS(clGetPlatformIDs(0, nullptr, &num_platforms));
    auto platforms = std::vector<cl_platform_id>(num_platforms);
    CL_CHECK_STATUS(clGetPlatformIDs(num_platforms, platforms.data(), nullptr));
    for (auto platform : platforms) {
        cl_device_id device = nullptr;
        if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS) {
            return device;
        }
    }
    throw std::runtime_error("no OpenCL device");
}

template <typename T>
auto buffer(cl_context context, std::vector<T> &host) -> cl_mem {
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                host.size() * sizeof(T), host.data(), &err);
    CL_CHECK_STATUS(err);
    return mem;
}

template <typename T>
void read(cl_command_queue queue, cl_mem mem, std::vector<T> &host) {
    CL_CHECK_STATUS(clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, host.size() * sizeof(T),
                                        host.data(), 0, nullptr, nullptr));
}

void run() {
    auto device = first_device();
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    CL_CHECK_STATUS(err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
    CL_CHECK_STATUS(err);

    CHECK(get_support_level(device) != support_level::none);
    auto info = create_core_info(device);
    auto ctx = create_compiler_context();
    auto prog = make_kernels(ctx.get());

    // axpy from a program, total from a binary of the same program
    auto bundle = create_kernel_bundle(context, device, prog.get());
    auto bin = compile_to_spirv_and_assemble(prog.get(), info.get());
    auto bundle_from_binary = create_kernel_bundle(context, device, bin.get());
    auto axpy = create_kernel(bundle.get(), "axpy");
    auto total = create_kernel(bundle_from_binary.get(), "total");

    constexpr std::int64_t n = 100;
    auto a = std::vector<float>(n), b = std::vector<float>(n), out = std::vector<float>(1);
    for (std::int64_t i = 0; i < n; ++i) {
        a[i] = float(i % 7) - 3.0f;
        b[i] = 0.5f * float(i);
    }
    cl_mem A = buffer(context, a), B = buffer(context, b), OUT = buffer(context, out);
    float alpha = 2.0f;
    CL_CHECK_STATUS(clSetKernelArg(axpy.get(), 0, sizeof(alpha), &alpha));
    CL_CHECK_STATUS(clSetKernelArg(axpy.get(), 1, sizeof(cl_mem), &A));
    CL_CHECK_STATUS(clSetKernelArg(axpy.get(), 2, sizeof(n), &n));
    CL_CHECK_STATUS(clSetKernelArg(axpy.get(), 3, sizeof(cl_mem), &B));
    CL_CHECK_STATUS(clSetKernelArg(axpy.get(), 4, sizeof(n), &n));
    auto local = get_group_size(axpy.get());
    CHECK(local[0] >= 1 && local[1] >= 1 && local[2] == 1);
    auto global = get_global_size({std::size_t(n), 1, 1}, local);
    CHECK(global[0] == std::size_t(n) * local[0] && global[1] == local[1]);
    CL_CHECK_STATUS(clEnqueueNDRangeKernel(queue, axpy.get(), 3, nullptr, global.data(),
                                           local.data(), 0, nullptr, nullptr));
    auto result = std::vector<float>(n);
    read(queue, B, result);
    for (std::int64_t i = 0; i < n; ++i) {
        CHECK(result[i] == alpha * a[i] + b[i]);
    }

    CL_CHECK_STATUS(clSetKernelArg(total.get(), 0, sizeof(cl_mem), &B));
    CL_CHECK_STATUS(clSetKernelArg(total.get(), 1, sizeof(n), &n));
    CL_CHECK_STATUS(clSetKernelArg(total.get(), 2, sizeof(cl_mem), &OUT));
    std::int64_t one = 1;
    CL_CHECK_STATUS(clSetKernelArg(total.get(), 3, sizeof(one), &one));
    auto tl = get_group_size(total.get());
    auto tg = get_global_size({1, 1, 1}, tl);
    CL_CHECK_STATUS(clEnqueueNDRangeKernel(queue, total.get(), 3, nullptr, tg.data(), tl.data(),
                                           0, nullptr, nullptr));
    read(queue, OUT, out);
    float expected = 0.0f;
    for (auto x : result) {
        expected += x;
    }
    CHECK(std::abs(out[0] - expected) <= 1e-5f * std::abs(expected));

    // recipe: howmany GEMMs 4x3 = (4x5) (5x3) on cl_mem buffers
    constexpr std::int64_t M = 4, N = 3, K = 5, howmany = 6;
    auto ga = std::vector<float>(M * K * howmany), gb = std::vector<float>(K * N * howmany);
    auto gc = std::vector<float>(M * N * howmany, 1.0f);
    for (std::size_t i = 0; i < ga.size(); ++i) ga[i] = float(i % 5) - 2.0f;
    for (std::size_t i = 0; i < gb.size(); ++i) gb[i] = float(i % 3) + 0.5f;
    cl_mem GA = buffer(context, ga), GB = buffer(context, gb), GC = buffer(context, gc);
    auto rec = create_small_gemm_batched(info.get(), get<f32_type>(ctx.get()), transpose::N,
                                         transpose::N, M, N, K, M, M * K, K, K * N, M, M * N);
    CHECK(get_prog(rec.get()) && get_binary(rec.get()));
    auto handler = create_recipe_handler(context, device, rec.get());
    CHECK(get_recipe(handler.get()) == rec);
    static_assert(auto_mem_type_v<cl_mem> == mem_type::buffer);
    set_small_gemm_batched_args(handler.get(), howmany, 1.0f, GA, GB, 0.5f, GC);
    auto done = submit(handler.get(), queue);
    cl_event evt = done.get();
    CL_CHECK_STATUS(clWaitForEvents(1, &evt));
    auto c = std::vector<float>(gc.size());
    read(queue, GC, c);
    for (std::int64_t h = 0; h < howmany; ++h) {
        for (std::int64_t j = 0; j < N; ++j) {
            for (std::int64_t i = 0; i < M; ++i) {
                float ref = 0.5f * gc[h * M * N + j * M + i];
                for (std::int64_t k = 0; k < K; ++k) {
                    ref += ga[h * M * K + k * M + i] * gb[h * K * N + j * K + k];
                }
                CHECK(std::abs(c[h * M * N + j * M + i] - ref) <= 1e-5f);
            }
        }
    }
    submit_no_event(handler.get(), queue);
    CL_CHECK_STATUS(clFinish(queue));

    for (cl_mem m : {A, B, OUT, GA, GB, GC}) {
        CL_CHECK_STATUS(clReleaseMemObject(m));
    }
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
}

} // namespace

int main() { return run_test(run); }
