// sysmem_read_probe: how fast one GPU's SMs move 256 MiB of shuffled 4 KiB
// pages between mapped pinned host memory and device memory, against the
// copy engine (CE). Host to device: one contiguous cudaMemcpyAsync; SM
// kernels (a uint4 per thread per page, batched loads, a persistent grid,
// 128 threads x 2 loads, Hopper TMA cp.async.bulk through shared memory);
// hybrids (a kernel on most pages, the CE on the rest). Device to host: the
// CE vs a per-page scatter kernel. No VMM involved.
//
// Why: pageable guest buffers on 4 KiB guest pages are moved by
// the vGPU's gather/walk kernels, whose target is 92% of native pinned (a
// CE copy). Medians on an H100 (driver 580, 2026-11-22): host to device, CE
// 54.8 GB/s, every SM variant, TMA included, 50.6-50.9 (92.3-92.8%), the
// hybrids at most 51.2 (a contiguous 1/8 CE share; per-page CE shares far
// lower); device to host, CE 53.9, scatter 52.4 (97.2%). SM-issued reads of
// host memory top out near 51 GB/s and CE traffic mixed in barely adds: the
// 92% target sits at the hardware's edge. Writes have more room.
//
// Built by CMake where nvcc is found: build/kvmtool-gpu/bench/probes/.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kPage = 4096, kBytes = 256ull << 20, kPages = kBytes / kPage;
constexpr uint64_t kVecs = kPage / sizeof(uint4); // 256: one per thread of a 256-thread block
constexpr int kReps = 10, kRounds = 3;

const char* kHelp =
    "usage: sysmem_read_probe [--help]\n\n"
    "GPU 0 moves 256 MiB of shuffled 4 KiB pages of mapped pinned host memory to device\n"
    "memory and back: copy engine (CE), SM kernels, TMA, SM+CE hybrids. One line per variant\n"
    "and round (3), then the medians: GB/s (CUDA events, 10 copies), % of the CE that way.\n"
    "Exit 1 without a usable GPU, on a CUDA error, or when a destination page is not whole.\n";

void must(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return;
    std::fprintf(stderr, "sysmem_read_probe: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
}

// Kernels: pages[i] is the GPU address of the host page that device page i
// pairs with (shuffled). All take (pages, dev) so one launcher serves them.

// A 256-thread block moves pages p0..p0+N-1, one uint4 per thread per page;
// Batched issues all N loads (N reads in flight per thread) before a store.
template <int N, bool Batched>
__device__ void gather_pages(const uint64_t* pages, uint4* dev, uint64_t p0) {
    uint4 v[N];
#pragma unroll
    for (int k = 0; k < N; ++k) {
        v[k] = reinterpret_cast<const uint4*>(pages[p0 + k])[threadIdx.x];
        if (!Batched) dev[(p0 + k) * kVecs + threadIdx.x] = v[k];
    }
#pragma unroll
    for (int k = 0; k < N; ++k)
        if (Batched) dev[(p0 + k) * kVecs + threadIdx.x] = v[k];
}

template <int N, bool Batched>
__global__ void __launch_bounds__(256) gather(const uint64_t* pages, uint8_t* dev) {
    gather_pages<N, Batched>(pages, reinterpret_cast<uint4*>(dev), uint64_t(blockIdx.x) * N);
}

// A few blocks per SM striding over the pages: no block launch cost.
__global__ void __launch_bounds__(256) gather_persistent(const uint64_t* pages, uint8_t* dev) {
    for (uint64_t p0 = uint64_t(blockIdx.x) * 4; p0 < kPages; p0 += uint64_t(gridDim.x) * 4)
        gather_pages<4, true>(pages, reinterpret_cast<uint4*>(dev), p0);
}

// 128 threads, two uint4 of each of 4 pages per thread.
__global__ void __launch_bounds__(128) gather_128x2(const uint64_t* pages, uint8_t* dev) {
    const uint64_t p0 = uint64_t(blockIdx.x) * 4;
    auto* d = reinterpret_cast<uint4*>(dev);
    uint4 v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = reinterpret_cast<const uint4*>(pages[p0 + k / 2])[threadIdx.x + k % 2 * 128];
#pragma unroll
    for (int k = 0; k < 8; ++k) d[(p0 + k / 2) * kVecs + threadIdx.x + k % 2 * 128] = v[k];
}

// TMA: one thread bulk-copies N pages into shared memory (an mbarrier counts
// the bytes), then bulk-stores them to device memory in one go.
template <int N>
__global__ void __launch_bounds__(32) gather_tma(const uint64_t* pages, uint8_t* dev) {
    __shared__ alignas(128) uint8_t buf[N * kPage];
    __shared__ alignas(8) uint64_t bar;
    if (threadIdx.x != 0) return;
    const uint64_t p0 = uint64_t(blockIdx.x) * N;
    const auto b = uint32_t(__cvta_generic_to_shared(&bar)), s = uint32_t(__cvta_generic_to_shared(buf));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
    asm volatile("fence.proxy.async.shared::cta;");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(uint32_t(N * kPage)));
    for (int k = 0; k < N; ++k)
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(s + uint32_t(k * kPage)), "l"(pages[p0 + k]), "r"(uint32_t(kPage)), "r"(b) : "memory");
    asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra W;\n}"
                 ::"r"(b) : "memory");
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"(dev + p0 * kPage), "r"(s), "r"(uint32_t(N * kPage)) : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

// The other direction: device page i to host page pages[i], N loads first.
template <int N>
__global__ void __launch_bounds__(256) scatter(const uint64_t* pages, uint8_t* dev) {
    const uint64_t p0 = uint64_t(blockIdx.x) * N;
    uint4 v[N];
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] = reinterpret_cast<const uint4*>(dev)[(p0 + k) * kVecs + threadIdx.x];
#pragma unroll
    for (int k = 0; k < N; ++k) reinterpret_cast<uint4*>(pages[p0 + k])[threadIdx.x] = v[k];
}

struct Variant {
    std::string name;
    bool htod;                     // reads host memory (else writes it)
    std::function<void()> enqueue; // one copy of all pages, on the main stream
};

// Every page of `words` is one nonzero value throughout: each destination
// page was written whole (sources always hold such pages, zeroed before).
bool pages_whole(const uint32_t* words) {
    for (uint64_t p = 0; p < kPages; ++p) {
        const uint32_t* w = words + p * (kPage / 4);
        if (w[0] == 0 || !std::all_of(w, w + kPage / 4, [&](uint32_t x) { return x == w[0]; })) return false;
    }
    return true;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const bool help = !std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h");
        std::fputs(kHelp, help ? stdout : stderr);
        return help ? 0 : 2;
    }
    int gpus = 0;
    if (cudaError_t e = cudaGetDeviceCount(&gpus); e != cudaSuccess || gpus == 0) {
        std::fprintf(stderr, "sysmem_read_probe: no usable CUDA GPU (%s): nothing measured\n",
                     e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 1;
    }
    cudaDeviceProp prop{};
    int driver = 0;
    must(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    must(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");

    uint8_t *host, *host_gpu, *dev;
    uint64_t* pages;
    must(cudaHostAlloc(&host, kBytes, cudaHostAllocMapped), "cudaHostAlloc(mapped)");
    must(cudaHostGetDevicePointer(reinterpret_cast<void**>(&host_gpu), host, 0), "cudaHostGetDevicePointer");
    must(cudaMalloc(&dev, kBytes), "cudaMalloc");
    must(cudaMalloc(&pages, kPages * sizeof(uint64_t)), "cudaMalloc");
    std::vector<uint64_t> order(kPages), addr(kPages);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937(3));
    for (uint64_t p = 0; p < kPages; ++p) {
        std::fill_n(reinterpret_cast<uint32_t*>(host + p * kPage), kPage / 4, uint32_t(p + 1));
        addr[p] = uint64_t(host_gpu + order[p] * kPage);
    }
    must(cudaMemcpy(pages, addr.data(), kPages * sizeof(uint64_t), cudaMemcpyHostToDevice), "cudaMemcpy");
    must(cudaMemcpy(dev, host, kBytes, cudaMemcpyHostToDevice), "cudaMemcpy");

    cudaStream_t s, side;
    cudaEvent_t start, end, fork, join;
    must(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    must(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), "cudaStreamCreate");
    for (cudaEvent_t* e : {&start, &end, &fork, &join}) must(cudaEventCreate(e), "cudaEventCreate");
    int sms = 0;
    must(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
    const auto g = [](uint64_t per_block) { return unsigned(kPages / per_block); };
    using Kernel = void (*)(const uint64_t*, uint8_t*);
    auto sm = [&](Kernel kernel, unsigned blocks, unsigned threads) {
        return [&, kernel, blocks, threads] { kernel<<<blocks, threads, 0, s>>>(pages, dev); };
    };
    auto ce = [&](uint8_t* to, const uint8_t* from, cudaMemcpyKind kind) {
        return [&, to, from, kind] { must(cudaMemcpyAsync(to, from, kBytes, kind, s), "cudaMemcpyAsync"); };
    };
    // Hybrid: gather<4> on the first pages while the CE moves the last `n` on
    // the side stream: contiguous, one call per page, or one batch call.
    enum class Ce { contiguous, per_page, batch };
    auto hybrid = [&](uint64_t n, Ce how) {
        const uint64_t k = kPages - n;
        std::vector<void*> dsts;
        std::vector<const void*> srcs;
        for (uint64_t p = k; p < kPages; ++p) dsts.push_back(dev + p * kPage), srcs.push_back(host + order[p] * kPage);
        return [&, k, n, how, dsts, srcs, sizes = std::vector<size_t>(n, kPage)] {
            must(cudaEventRecord(fork, s), "cudaEventRecord");
            must(cudaStreamWaitEvent(side, fork), "cudaStreamWaitEvent");
            gather<4, false><<<unsigned(k / 4), 256, 0, s>>>(pages, dev);
            if (how == Ce::contiguous)
                must(cudaMemcpyAsync(dev + k * kPage, host + k * kPage, n * kPage, cudaMemcpyHostToDevice, side), "CE");
            for (uint64_t i = 0; how == Ce::per_page && i < n; ++i)
                must(cudaMemcpyAsync(dsts[i], srcs[i], kPage, cudaMemcpyHostToDevice, side), "CE page");
            cudaMemcpyAttributes attr{};
            attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
            size_t attr_at = 0;
            if (how == Ce::batch)
                must(cudaMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), n, &attr, &attr_at, 1, side),
                     "cudaMemcpyBatchAsync");
            must(cudaEventRecord(join, side), "cudaEventRecord");
            must(cudaStreamWaitEvent(s, join), "cudaStreamWaitEvent");
        };
    };
    // The first variant of each direction is its CE reference.
    const std::vector<Variant> variants = {
        {"htod CE memcpy (contiguous)", true, ce(dev, host, cudaMemcpyHostToDevice)},
        {"htod SM 1 page/block", true, sm(gather<1, false>, g(1), 256)},
        {"htod SM 4 pages/block", true, sm(gather<4, false>, g(4), 256)},
        {"htod SM 4 loads batched", true, sm(gather<4, true>, g(4), 256)},
        {"htod SM 8 loads batched", true, sm(gather<8, true>, g(8), 256)},
        {"htod SM persistent (8/SM)", true, sm(gather_persistent, unsigned(sms * 8), 256)},
        {"htod SM 128 thr x 2 loads", true, sm(gather_128x2, g(4), 128)},
        {"htod TMA bulk 1 page", true, sm(gather_tma<1>, g(1), 32)},
        {"htod TMA bulk 4 pages", true, sm(gather_tma<4>, g(4), 32)},
        {"htod hybrid 1/8 CE contiguous", true, hybrid(kPages / 8, Ce::contiguous)},
        {"htod hybrid 1/16 CE contiguous", true, hybrid(kPages / 16, Ce::contiguous)},
        {"htod hybrid 1/16 CE per page", true, hybrid(kPages / 16, Ce::per_page)},
        {"htod hybrid 1/16 CE batch", true, hybrid(kPages / 16, Ce::batch)},
        {"dtoh CE memcpy (contiguous)", false, ce(host, dev, cudaMemcpyDeviceToHost)},
        {"dtoh SM scatter 1 page/block", false, sm(scatter<1>, g(1), 256)},
        {"dtoh SM scatter 4 pages/block", false, sm(scatter<4>, g(4), 256)},
    };

    std::printf("sysmem_read_probe: %s (%d SMs), CUDA driver %d.%d; 256 MiB as %llu shuffled 4 KiB pages of "
                "mapped pinned memory; %d copies timed per line\n",
                prop.name, sms, driver / 1000, driver % 1000 / 10, (unsigned long long)kPages, kReps);
    std::vector<std::vector<double>> gbps(variants.size());
    std::vector<uint32_t> check(kBytes / 4);
    for (int round = 1; round <= kRounds; ++round) {
        double ce_gbps = 0;
        for (size_t v = 0; v < variants.size(); ++v) {
            const Variant& x = variants[v];
            if (round == 1) { // zero the destination (on s: it does not wait for the legacy stream)
                must(cudaDeviceSynchronize(), "sync");
                if (x.htod) must(cudaMemsetAsync(dev, 0, kBytes, s), "cudaMemsetAsync");
                else std::memset(host, 0, kBytes);
            }
            x.enqueue(); // warm-up
            must(cudaStreamSynchronize(s), x.name.c_str());
            must(cudaGetLastError(), x.name.c_str());
            if (round == 1) {
                if (x.htod) must(cudaMemcpy(check.data(), dev, kBytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
                if (!pages_whole(x.htod ? check.data() : reinterpret_cast<const uint32_t*>(host))) {
                    std::fprintf(stderr, "sysmem_read_probe: %s: data check failed\n", x.name.c_str());
                    return 1;
                }
            }
            must(cudaEventRecord(start, s), "cudaEventRecord");
            for (int r = 0; r < kReps; ++r) x.enqueue();
            must(cudaEventRecord(end, s), "cudaEventRecord");
            must(cudaEventSynchronize(end), x.name.c_str());
            must(cudaGetLastError(), x.name.c_str());
            float ms = 0;
            must(cudaEventElapsedTime(&ms, start, end), "cudaEventElapsedTime");
            gbps[v].push_back(double(kBytes) * kReps / (double(ms) * 1e6));
            if (v == 0 || x.htod != variants[v - 1].htod) ce_gbps = gbps[v].back();
            std::printf("round %d  %-32s %6.2f GB/s %6.1f%% of CE\n", round, x.name.c_str(), gbps[v].back(),
                        100 * gbps[v].back() / ce_gbps);
        }
    }
    double ce_gbps = 0; // the medians' % are of the CE's median
    for (size_t v = 0; v < variants.size(); ++v) {
        const double m = median(gbps[v]);
        if (v == 0 || variants[v].htod != variants[v - 1].htod) ce_gbps = m;
        std::printf("median   %-32s %6.2f GB/s %6.1f%% of CE\n", variants[v].name.c_str(), m, 100 * m / ce_gbps);
    }
    return 0;
}
