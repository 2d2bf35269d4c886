// batch_run_probe: the copy engine's rate for a batch of scattered runs of
// pinned host memory (cudaMemcpyBatchAsync, as the vGPU's `batch` strategy
// issues them) against run length, beside one contiguous copy. The rate at
// each length says from which run length handing a guest's scatter-gather
// list to the copy engine beats the device walk (about 95% of the
// contiguous copy on the H100): the threshold `auto` uses.
//
// 256 MiB of pinned host memory cut into runs of L bytes, in shuffled order
// on the host side, contiguous on the device side; both directions; median
// of 7 batches per length. Built by CMake where nvcc is found.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace {

constexpr uint64_t kBytes = 256ull << 20;
constexpr int kReps = 7;

void check(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return;
    std::fprintf(stderr, "batch_run_probe: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
}

// GB/s of `copy` (enqueues on s), median of kReps, timed with events.
template <class Copy>
double rate(cudaStream_t s, Copy copy) {
    cudaEvent_t a, b;
    check(cudaEventCreate(&a), "cudaEventCreate");
    check(cudaEventCreate(&b), "cudaEventCreate");
    copy(); // warm-up
    check(cudaStreamSynchronize(s), "warm-up");
    std::vector<double> gbps;
    for (int i = 0; i < kReps; ++i) {
        check(cudaEventRecord(a, s), "cudaEventRecord");
        copy();
        check(cudaEventRecord(b, s), "cudaEventRecord");
        check(cudaEventSynchronize(b), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
        gbps.push_back(kBytes / (ms * 1e6));
    }
    std::sort(gbps.begin(), gbps.end());
    cudaEventDestroy(a), cudaEventDestroy(b);
    return gbps[gbps.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    if (argc > 1) {
        std::printf("usage: batch_run_probe\n\nGPU 0: cudaMemcpyBatchAsync of 256 MiB as shuffled runs of 4 KiB .. 8 MiB of\n"
                    "pinned host memory, both directions, against one contiguous copy.\n");
        return std::strcmp(argv[1], "--help") == 0 ? 0 : 2;
    }
    uint8_t* host = nullptr;
    void* dev = nullptr;
    cudaStream_t s;
    check(cudaHostAlloc(reinterpret_cast<void**>(&host), kBytes, cudaHostAllocDefault), "cudaHostAlloc");
    check(cudaMalloc(&dev, kBytes), "cudaMalloc");
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    std::memset(host, 1, kBytes);
    cudaDeviceProp p;
    check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
    const double htod_one = rate(s, [&] { check(cudaMemcpyAsync(dev, host, kBytes, cudaMemcpyHostToDevice, s), "copy"); });
    const double dtoh_one = rate(s, [&] { check(cudaMemcpyAsync(host, dev, kBytes, cudaMemcpyDeviceToHost, s), "copy"); });
    std::printf("batch_run_probe: %s, 256 MiB; one contiguous copy: htod %.1f GB/s, dtoh %.1f GB/s\n", p.name,
                htod_one, dtoh_one);
    std::printf("| run | runs | htod GB/s | htod %% of contiguous | dtoh GB/s | dtoh %% of contiguous |\n");
    std::printf("| ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (uint64_t run = 4096; run <= (8ull << 20); run *= 2) {
        const uint64_t n = kBytes / run;
        std::vector<uint64_t> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), std::mt19937(42));
        std::vector<void*> hptr(n), dptr(n);
        std::vector<size_t> size(n, run);
        for (uint64_t i = 0; i < n; ++i) {
            hptr[i] = host + order[i] * run;
            dptr[i] = static_cast<uint8_t*>(dev) + i * run;
        }
        auto batch = [&](bool htod) {
            cudaMemcpyAttributes attr{};
            attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
            attr.srcLocHint.type = htod ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
            attr.dstLocHint.type = htod ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
            size_t first = 0;
            check(cudaMemcpyBatchAsync(htod ? dptr.data() : hptr.data(),
                                       htod ? const_cast<const void* const*>(hptr.data())
                                            : const_cast<const void* const*>(dptr.data()),
                                       size.data(), n, &attr, &first, 1, s),
                  "cudaMemcpyBatchAsync");
        };
        const double h = rate(s, [&] { batch(true); }), d = rate(s, [&] { batch(false); });
        std::printf("| %llu KiB | %llu | %.1f | %.1f%% | %.1f | %.1f%% |\n", static_cast<unsigned long long>(run >> 10),
                    static_cast<unsigned long long>(n), h, 100 * h / htod_one, d, 100 * d / dtoh_one);
    }
    return 0;
}
