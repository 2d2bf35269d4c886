// host_register_probe: the native side of register_probe (the guest's):
// what cudaHostRegister costs on a malloc'd buffer (4 KiB pages, scattered
// in physical memory as any process's), and the copy engine's rate from it
// against page-locked memory from cudaHostAlloc. Sizes 64 MiB and 256 MiB,
// medians of 5 copies after a warm-up, events around each.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return;
    std::fprintf(stderr, "host_register_probe: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double gbps(void* dst, const void* src, uint64_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
    cudaEvent_t a, b;
    check(cudaEventCreate(&a), "cudaEventCreate");
    check(cudaEventCreate(&b), "cudaEventCreate");
    std::vector<double> r;
    for (int i = 0; i <= 5; ++i) {
        check(cudaEventRecord(a, s), "cudaEventRecord");
        check(cudaMemcpyAsync(dst, src, bytes, kind, s), "cudaMemcpyAsync");
        check(cudaEventRecord(b, s), "cudaEventRecord");
        check(cudaEventSynchronize(b), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
        if (i > 0) r.push_back(bytes / (ms * 1e6));
    }
    cudaEventDestroy(a), cudaEventDestroy(b);
    std::sort(r.begin(), r.end());
    return r[r.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    if (argc > 1) {
        std::printf("usage: host_register_probe\n\ncudaHostRegister of malloc'd 64 MiB and 256 MiB buffers on GPU 0: its cost "
                    "and the copy rate from it, against cudaHostAlloc memory.\n");
        return std::strcmp(argv[1], "--help") == 0 ? 0 : 2;
    }
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    std::printf("| bytes | register ms | ms per GiB | unregister ms | htod registered GB/s | htod pinned GB/s | "
                "dtoh registered GB/s | dtoh pinned GB/s |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (uint64_t bytes : {64ull << 20, 256ull << 20}) {
        auto* mem = static_cast<uint8_t*>(std::aligned_alloc(4096, bytes));
        std::memset(mem, 1, bytes);
        void* pinned = nullptr;
        void* dev = nullptr;
        check(cudaHostAlloc(&pinned, bytes, cudaHostAllocDefault), "cudaHostAlloc");
        check(cudaMalloc(&dev, bytes), "cudaMalloc");
        auto t0 = std::chrono::steady_clock::now();
        check(cudaHostRegister(mem, bytes, cudaHostRegisterMapped), "cudaHostRegister");
        const double reg = ms_since(t0);
        const double h_reg = gbps(dev, mem, bytes, cudaMemcpyHostToDevice, s);
        const double h_pin = gbps(dev, pinned, bytes, cudaMemcpyHostToDevice, s);
        const double d_reg = gbps(mem, dev, bytes, cudaMemcpyDeviceToHost, s);
        const double d_pin = gbps(pinned, dev, bytes, cudaMemcpyDeviceToHost, s);
        t0 = std::chrono::steady_clock::now();
        check(cudaHostUnregister(mem), "cudaHostUnregister");
        const double unreg = ms_since(t0);
        std::printf("| %llu MiB | %.2f | %.1f | %.2f | %.1f | %.1f | %.1f | %.1f |\n",
                    static_cast<unsigned long long>(bytes >> 20), reg, reg * (1ull << 30) / bytes, unreg, h_reg, h_pin,
                    d_reg, d_pin);
        cudaFree(dev), cudaFreeHost(pinned), std::free(mem);
    }
    return 0;
}
