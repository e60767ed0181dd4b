/* libtinytc_sycl: the functions of include/tinytc/tinytc_sycl.hpp.
 *
 * Each function takes the native objects behind the SYCL ones (sycl::get_native) and calls the
 * OpenCL or Level Zero interop of libtinytc_cl / libtinytc_ze on them; what those create is
 * handed back to SYCL with make_kernel_bundle / make_kernel. So a kernel bundle for a SYCL device
 * is compiled, cached and built exactly as for the same device through OpenCL or Level Zero.
 *
 * Ownership: for OpenCL, get_native returns retained objects (released here) and make_* retain
 * what they are given; for Level Zero, nothing is reference counted and make_* take the module
 * and kernel over (ownership::transfer), except a recipe handler's, which its Python side owns.
 * A Level Zero handle is released from its owner here only after make_* returned, so a
 * failing make_* leaves it to that owner to destroy.
 *
 * Recipe handlers are the backend's handlers (their Python side selects the kernel and sets its
 * arguments, capi/sycl/private_api.h); the SYCL kernels that launch their native kernels are
 * made on first use and kept in a recipe_state, which the handle frees.
 */
#include "tinytc/tinytc_sycl.hpp"

extern "C" {
#include "private_api.h"
}

#include <map>
#include <memory>
#include <mutex>

namespace tinytc {
namespace {

using exe_bundle = sycl::kernel_bundle<sycl::bundle_state::executable>;
constexpr auto opencl = sycl::backend::opencl;
constexpr auto level_zero = sycl::backend::ext_oneapi_level_zero;
constexpr std::int32_t private_backend_opencl = 0;
constexpr std::int32_t private_backend_level_zero = 1;

//! An OpenCL object that get_native retained for us, released at scope end
template <typename T, cl_int (*Release)(T)> class cl_native {
  public:
    explicit cl_native(T handle) : handle_{handle} {}
    ~cl_native() {
        if (handle_) {
            Release(handle_);
        }
    }
    cl_native(cl_native const &) = delete;
    cl_native &operator=(cl_native const &) = delete;
    auto get() const -> T { return handle_; }

  private:
    T handle_;
};
using cl_native_device = cl_native<cl_device_id, clReleaseDevice>;
using cl_native_context = cl_native<cl_context, clReleaseContext>;
using cl_native_kernel = cl_native<cl_kernel, clReleaseKernel>;

[[noreturn]] void unsupported_backend() { throw status::unsupported_backend; }

//! A kernel bundle from what make(native context, native device) creates on the backend
template <typename Make>
auto bundle_for(sycl::context const &ctx, sycl::device const &dev, Make make) -> exe_bundle {
    switch (dev.get_backend()) {
    case opencl: {
        auto const c = cl_native_context{sycl::get_native<opencl>(ctx)};
        auto const d = cl_native_device{sycl::get_native<opencl>(dev)};
        auto const program = make(c.get(), d.get());
        return sycl::make_kernel_bundle<opencl, sycl::bundle_state::executable>(program.get(), ctx);
    }
    case level_zero: {
        auto module = make(sycl::get_native<level_zero>(ctx), sycl::get_native<level_zero>(dev));
        auto bundle = sycl::make_kernel_bundle<level_zero, sycl::bundle_state::executable>(
            {module.get(), sycl::ext::oneapi::level_zero::ownership::transfer}, ctx);
        static_cast<void>(module.release()); // SYCL owns the module only once the bundle exists
        return bundle;
    }
    default:
        unsupported_backend();
    }
}

//! The work-group size of a native kernel as a SYCL range ({z, y, x})
template <typename Array> auto zyx(Array const &xyz) -> sycl::range<3u> {
    return {static_cast<std::size_t>(xyz[2]), static_cast<std::size_t>(xyz[1]),
            static_cast<std::size_t>(xyz[0])};
}

//! The C++ side of a SYCL recipe handler: its context and the SYCL kernels made so far
struct recipe_state {
    explicit recipe_state(sycl::context ctx) : ctx{std::move(ctx)} {}

    //! The SYCL kernel of a native kernel of the handler (module: Level Zero only)
    auto kernel(void *native, void *module) -> sycl::kernel {
        auto lock = std::lock_guard<std::mutex>{mutex};
        auto found = kernels.find(native);
        if (found != kernels.end()) {
            return found->second;
        }
        auto made = make(native, module);
        kernels.emplace(native, made);
        return made;
    }

    sycl::context ctx;
    std::mutex mutex;
    std::map<void *, sycl::kernel> kernels;

  private:
    auto make(void *native, void *module) -> sycl::kernel {
        switch (ctx.get_backend()) {
        case opencl:
            return sycl::make_kernel<opencl>(static_cast<cl_kernel>(native), ctx);
        case level_zero: {
            using sycl::ext::oneapi::level_zero::ownership;
            auto bundle = sycl::make_kernel_bundle<level_zero, sycl::bundle_state::executable>(
                {static_cast<ze_module_handle_t>(module), ownership::keep}, ctx);
            return sycl::make_kernel<level_zero>(
                {bundle, static_cast<ze_kernel_handle_t>(native), ownership::keep}, ctx);
        }
        default:
            unsupported_backend();
        }
    }
};

extern "C" void destroy_recipe_state(void *state) { delete static_cast<recipe_state *>(state); }

} // namespace

/* ---- Device info ---- */

namespace {
//! f(native device) on the device's backend: a cl_device_id (released after the call) or a
//! ze_device_handle_t
template <typename F> auto on_native_device(sycl::device const &dev, F f) {
    switch (dev.get_backend()) {
    case opencl: {
        auto const d = cl_native_device{sycl::get_native<opencl>(dev)};
        return f(d.get());
    }
    case level_zero:
        return f(sycl::get_native<level_zero>(dev));
    default:
        unsupported_backend();
    }
}
} // namespace

auto get_support_level(sycl::device const &dev) -> support_level {
    return on_native_device(dev, [](auto d) { return get_support_level(d); });
}

auto create_core_info(sycl::device const &dev) -> shared_handle<tinytc_core_info_t> {
    return on_native_device(dev, [](auto d) { return create_core_info(d); });
}

/* ---- Kernels ---- */

auto create_kernel_bundle(sycl::context const &ctx, sycl::device const &dev, tinytc_prog_t prg,
                          tinytc_core_feature_flags_t core_features) -> exe_bundle {
    return bundle_for(ctx, dev, [&](auto context, auto device) {
        return create_kernel_bundle(context, device, prg, core_features);
    });
}

auto create_kernel_bundle(sycl::context const &ctx, sycl::device const &dev,
                          const_tinytc_binary_t bin) -> exe_bundle {
    return bundle_for(ctx, dev, [&](auto context, auto device) {
        return create_kernel_bundle(context, device, bin);
    });
}

auto create_kernel(exe_bundle const &bundle, char const *name) -> sycl::kernel {
    switch (bundle.get_backend()) {
    case opencl: {
        auto programs = sycl::get_native<opencl>(bundle);
        auto release = [&programs] {
            for (auto program : programs) {
                clReleaseProgram(program);
            }
        };
        try {
            if (programs.empty()) {
                throw status::invalid_arguments;
            }
            auto const kernel = create_kernel(programs.front(), name);
            auto made = sycl::make_kernel<opencl>(kernel.get(), bundle.get_context());
            release();
            return made;
        } catch (...) {
            release();
            throw;
        }
    }
    case level_zero: {
        auto modules = sycl::get_native<level_zero>(bundle);
        if (modules.empty()) {
            throw status::invalid_arguments;
        }
        auto kernel = create_kernel(modules.front(), name);
        auto made = sycl::make_kernel<level_zero>(
            {bundle, kernel.get(), sycl::ext::oneapi::level_zero::ownership::transfer},
            bundle.get_context());
        static_cast<void>(kernel.release()); // as for the module: SYCL owns it once made
        return made;
    }
    default:
        unsupported_backend();
    }
}

auto get_group_size(sycl::kernel const &krnl) -> sycl::range<3u> {
    switch (krnl.get_backend()) {
    case opencl: {
        auto const k = cl_native_kernel{sycl::get_native<opencl>(krnl)};
        return zyx(get_group_size(k.get()));
    }
    case level_zero:
        return zyx(get_group_size(sycl::get_native<level_zero>(krnl)));
    default:
        unsupported_backend();
    }
}

auto get_global_size(sycl::range<3u> const &num_groups, sycl::range<3u> const &local_size)
    -> sycl::range<3u> {
    return num_groups * local_size;
}

auto get_execution_range(sycl::kernel const &krnl, sycl::range<3u> const &num_groups)
    -> sycl::nd_range<3u> {
    auto const local_size = get_group_size(krnl);
    return {get_global_size(num_groups, local_size), local_size};
}

/* ---- Recipes ---- */

void parallel_for(tinytc_recipe_handler_t handler, sycl::handler &cgh) {
    void *state = nullptr;
    void *native = nullptr;
    void *module = nullptr;
    std::int64_t groups = 0;
    CHECK_STATUS(_tinytc_sycl_recipe_handler_launch(handler, &state, &native, &module, &groups));
    auto const kernel = static_cast<recipe_state *>(state)->kernel(native, module);
    auto const range = sycl::range<3u>{1u, 1u, static_cast<std::size_t>(groups)};
    cgh.parallel_for(get_execution_range(kernel, range), kernel);
}

auto submit(tinytc_recipe_handler_t handler, sycl::queue q) -> sycl::event {
    return q.submit([&](sycl::handler &cgh) { parallel_for(handler, cgh); });
}

auto submit(tinytc_recipe_handler_t handler, sycl::queue q, sycl::event const &dep_event)
    -> sycl::event {
    return q.submit([&](sycl::handler &cgh) {
        cgh.depends_on(dep_event);
        parallel_for(handler, cgh);
    });
}

auto submit(tinytc_recipe_handler_t handler, sycl::queue q,
            std::vector<sycl::event> const &dep_events) -> sycl::event {
    return q.submit([&](sycl::handler &cgh) {
        cgh.depends_on(dep_events);
        parallel_for(handler, cgh);
    });
}

auto create_recipe_handler(sycl::context const &ctx, sycl::device const &dev, tinytc_recipe_t rec)
    -> shared_handle<tinytc_recipe_handler_t> {
    auto state = std::make_unique<recipe_state>(ctx);
    tinytc_recipe_handler_t handler = nullptr;
    switch (dev.get_backend()) {
    case opencl: {
        auto const c = cl_native_context{sycl::get_native<opencl>(ctx)};
        auto const d = cl_native_device{sycl::get_native<opencl>(dev)};
        CHECK_STATUS(_tinytc_sycl_recipe_handler_create(&handler, private_backend_opencl, c.get(),
                                                        d.get(), rec, state.get(),
                                                        destroy_recipe_state));
        break;
    }
    case level_zero:
        CHECK_STATUS(_tinytc_sycl_recipe_handler_create(
            &handler, private_backend_level_zero, sycl::get_native<level_zero>(ctx),
            sycl::get_native<level_zero>(dev), rec, state.get(), destroy_recipe_state));
        break;
    default:
        unsupported_backend();
    }
    state.release(); // the handle owns it now
    return shared_handle<tinytc_recipe_handler_t>{handler};
}

auto create_recipe_handler(sycl::queue const &q, tinytc_recipe_t rec)
    -> shared_handle<tinytc_recipe_handler_t> {
    return create_recipe_handler(q.get_context(), q.get_device(), rec);
}

} // namespace tinytc
