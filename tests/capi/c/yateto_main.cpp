// Host program for the yateto test (tests/capi/test_yateto.py): runs one kernel that yateto
// generated for its tinytc backend (kernel.h of the generated code) on an in-order sycl::queue,
// the way SeisSol does: every tensor of the kernel is a batch of numElements copies in USM,
// passed as an array of pointers plus yateto's extraOffset (member i starts at ptrs[i] + OFFSET).
//
//   yateto_main KERNEL DIR N      reads DIR/<tensor>.bin (N column-major copies, float64),
//                                 runs yateto::kernel::KERNEL, writes DIR/<tensor>.out.bin
#include "kernel.h"
#include "tensor.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <sycl/sycl.hpp>
#include <vector>

namespace {

constexpr long OFFSET = 3; // elements in front of each batch: the kernels must skip them

//! numElements copies of a tensor in shared USM and the array of pointers to them
struct batch {
    batch(sycl::queue &q, std::string path, long n, long size)
        : q{q}, path{std::move(path)}, n{n}, size{size} {
        data = sycl::malloc_shared<double>(n * size + OFFSET, q);
        ptrs = sycl::malloc_shared<double *>(n, q);
        for (long i = 0; i < OFFSET; ++i) data[i] = -1.0e300; // NaN-free poison
        auto in = std::ifstream(this->path + ".bin", std::ios::binary);
        if (!in.read(reinterpret_cast<char *>(data + OFFSET), n * size * sizeof(double))) {
            throw std::runtime_error("cannot read " + this->path + ".bin");
        }
        for (long i = 0; i < n; ++i) ptrs[i] = data + i * size;
    }
    ~batch() {
        sycl::free(data, q);
        sycl::free(ptrs, q);
    }
    void save() const {
        auto out = std::ofstream(path + ".out.bin", std::ios::binary);
        out.write(reinterpret_cast<char const *>(data + OFFSET), n * size * sizeof(double));
    }
    template <typename T> auto as() const -> T { return const_cast<T>(ptrs); }

    sycl::queue &q;
    std::string path;
    long n, size;
    double *data;
    double **ptrs;
};

struct run {
    sycl::queue q{sycl::property::queue::in_order{}};
    std::string dir;
    long n;
    std::vector<std::unique_ptr<batch>> batches;

    template <typename Tensor> auto &bind(char const *name) {
        batches.push_back(std::make_unique<batch>(q, dir + "/" + name, n, long(Tensor::Size)));
        return *batches.back();
    }
    template <typename Kernel> void execute(Kernel &k) {
        k.numElements = n;
        k.streamPtr = &q;
        k.execute();
        q.wait_and_throw();
        for (auto const &b : batches) b->save();
    }
};

#define BIND(k, r, T)                                                                          \
    k.T = r.bind<yateto::tensor::T>(#T).as<decltype(k.T)>();                                   \
    k.extraOffset_##T = OFFSET

} // namespace

int main(int argc, char **argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s KERNEL DIR N\n", argv[0]);
        return 2;
    }
    auto const name = std::string(argv[1]);
    try {
        auto r = run{};
        r.dir = argv[2];
        r.n = std::stol(argv[3]);
        if (name == "gemm") {
            auto k = yateto::kernel::gemm{};
            BIND(k, r, A);
            BIND(k, r, B);
            BIND(k, r, C);
            r.execute(k);
        } else if (name == "chain") {
            auto k = yateto::kernel::chain{};
            BIND(k, r, A);
            BIND(k, r, B);
            BIND(k, r, E);
            BIND(k, r, F);
            r.execute(k);
        } else if (name == "scale") {
            auto k = yateto::kernel::scale{};
            BIND(k, r, C);
            // yateto's temporaries come from a device buffer the caller provides
            auto tmp = sycl::malloc_device<double>(r.n * k.TmpMaxMemRequiredInBytes, r.q);
            k.linearAllocator.initialize(tmp);
            r.execute(k);
            sycl::free(tmp, r.q);
        } else {
            std::fprintf(stderr, "unknown kernel %s\n", name.c_str());
            return 2;
        }
    } catch (std::exception const &e) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
        return 1;
    }
    std::printf("%s: ok\n", name.c_str());
    return 0;
}
