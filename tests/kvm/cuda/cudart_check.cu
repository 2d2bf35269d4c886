// NVIDIA's CUDA runtime initialising over the guest libcuda.so.1 (issue 42):
// built by nvcc the ordinary way (tests/kvm/CMakeLists.txt) and run as a
// Linux-ABI guest with --root / (tests/kvm/linux-cuda.sh). Each step prints
// one line; the program exits 0 only when every step gave what it should.
// No kernel: what a GPU runs is vectorAdd's part (it launches one).
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

static int failures = 0;

static bool ok(cudaError_t e, const char* what)
{
    if (e == cudaSuccess) {
        std::printf("ok: %s\n", what);
        return true;
    }
    std::printf("FAILED: %s: %s (%d)\n", what, cudaGetErrorName(e), static_cast<int>(e));
    ++failures;
    return false;
}

static void expect(bool cond, const char* what)
{
    std::printf("%s: %s\n", cond ? "ok" : "FAILED", what);
    failures += cond ? 0 : 1;
}

int main()
{
    int driver = 0, runtime = 0;
    ok(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
    ok(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
    std::printf("driver %d, runtime %d\n", driver, runtime);
    int count = 0;
    if (!ok(cudaGetDeviceCount(&count), "cudaGetDeviceCount"))
        return 1;
    expect(count >= 1, "at least one device");
    cudaDeviceProp prop{};
    if (ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties"))
        std::printf("device 0: %s, compute %d.%d, %d multiprocessors, %zu MiB\n", prop.name, prop.major, prop.minor,
                    prop.multiProcessorCount, prop.totalGlobalMem >> 20);
    expect(prop.totalGlobalMem > 0 && prop.multiProcessorCount > 0, "device properties filled in");

    const size_t n = 1 << 16;
    std::vector<unsigned char> in(n), out(n);
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
    unsigned char* d = nullptr;
    if (ok(cudaMalloc(&d, n), "cudaMalloc")) {
        ok(cudaMemcpy(d, in.data(), n, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
        ok(cudaMemcpy(out.data(), d, n, cudaMemcpyDeviceToHost), "cudaMemcpy back");
        expect(in == out, "the bytes came back");
        ok(cudaMemset(d, 0x5A, n), "cudaMemset");
        ok(cudaMemcpy(out.data(), d, n, cudaMemcpyDeviceToHost), "cudaMemcpy after the memset");
        expect(out[0] == 0x5A && out[n - 1] == 0x5A, "memset bytes");
        ok(cudaFree(d), "cudaFree");
    }

    // cuMemAllocPitch and cuMemsetD2D8 underneath.
    void* pitched = nullptr;
    size_t pitch = 0;
    if (ok(cudaMallocPitch(&pitched, &pitch, 100, 8), "cudaMallocPitch")) {
        expect(pitch >= 100 && pitch % 32 == 0, "pitch covers the row, aligned");
        ok(cudaMemset(pitched, 0, pitch * 8), "cudaMemset of the pitched rows");
        ok(cudaMemset2D(pitched, pitch, 0x21, 100, 8), "cudaMemset2D");
        std::vector<unsigned char> rows(pitch * 8);
        ok(cudaMemcpy(rows.data(), pitched, rows.size(), cudaMemcpyDeviceToHost), "cudaMemcpy of the rows");
        bool right = true;
        for (size_t r = 0; r < 8; ++r)
            for (size_t c = 0; c < pitch; ++c)
                right = right && rows[r * pitch + c] == (c < 100 ? 0x21 : 0);
        expect(right, "cudaMemset2D set each row's 100 bytes only");
        ok(cudaFree(pitched), "cudaFree of the pitched rows");
    }

    cudaStream_t s{};
    cudaEvent_t e{};
    if (ok(cudaStreamCreate(&s), "cudaStreamCreate") && ok(cudaEventCreate(&e), "cudaEventCreate")) {
        ok(cudaEventRecord(e, s), "cudaEventRecord");
        ok(cudaStreamSynchronize(s), "cudaStreamSynchronize");
        ok(cudaEventQuery(e), "cudaEventQuery after the synchronize");
        ok(cudaEventDestroy(e), "cudaEventDestroy");
        ok(cudaStreamDestroy(s), "cudaStreamDestroy");
    }
    ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    if (failures != 0) {
        std::printf("%d check(s) failed\n", failures);
        return 1;
    }
    std::printf("all cudart checks passed\n");
    return 0;
}
