// peerAccess: two devices sharing memory, in the style of CUDA's simpleP2P.
// Plain CUDA runtime API: asks whether devices 0 and 1 can access each
// other's memory, copies a buffer 0 -> 1 -> 0 with cudaMemcpyPeer (which
// works with or without peer access) and checks it, then enables peer
// access both ways and runs a kernel on device 1 that reads device 0's
// buffer through its pointer (unified addressing) and writes device 1's,
// and checks every element on the CPU.
// Exit: EXIT_SUCCESS, EXIT_FAILURE, or 2 (waived, as CUDA's samples waive)
// with a line saying why: fewer than two devices, or two that cannot
// access each other's memory (two contexts on one GPU).
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#include "check_cuda.h"

// y = a * x + y over n elements; x may be another device's memory.
__global__ void saxpy(int n, float a, const float* x, float* y)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

namespace {

constexpr int kWaived = 2;
constexpr int kCount = 1 << 20;

int waive(const char* why)
{
    printf("peerAccess: WAIVED: %s\n", why);
    return kWaived;
}

} // namespace

int main(void)
{
    int devices = 0;
    CHECK(cudaGetDeviceCount(&devices));
    printf("peerAccess: %d device(s)\n", devices);
    if (devices < 2)
        return waive("needs two devices (a VM gets them with --gpus 0,1)");
    for (int d = 0; d < 2; ++d) {
        cudaDeviceProp prop;
        CHECK(cudaGetDeviceProperties(&prop, d));
        printf("peerAccess: device %d: \"%s\", unified addressing %s\n", d, prop.name,
               prop.unifiedAddressing ? "yes" : "no");
    }
    int can01 = 0, can10 = 0;
    CHECK(cudaDeviceCanAccessPeer(&can01, 0, 1));
    CHECK(cudaDeviceCanAccessPeer(&can10, 1, 0));
    printf("peerAccess: device 0 -> 1 peer access %s, 1 -> 0 %s\n", can01 ? "yes" : "no", can10 ? "yes" : "no");

    const size_t bytes = kCount * sizeof(float);
    float* host = (float*)malloc(bytes);
    float *on0 = nullptr, *on1 = nullptr;
    if (!host) {
        fprintf(stderr, "peerAccess: out of host memory\n");
        return EXIT_FAILURE;
    }
    for (int i = 0; i < kCount; ++i)
        host[i] = (float)(i % 1000) * 0.5f;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&on0, bytes));
    CHECK(cudaMemcpy(on0, host, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&on1, bytes));

    // There and back between the devices; peer access not needed.
    CHECK(cudaMemcpyPeer(on1, 1, on0, 0, bytes));
    CHECK(cudaSetDevice(0));
    CHECK(cudaMemset(on0, 0, bytes));
    CHECK(cudaMemcpyPeer(on0, 0, on1, 1, bytes));
    for (int i = 0; i < kCount; ++i)
        host[i] = -1.0f;
    CHECK(cudaMemcpy(host, on0, bytes, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < kCount; ++i)
        bad += host[i] != (float)(i % 1000) * 0.5f;
    printf("peerAccess: cudaMemcpyPeer 0 -> 1 -> 0 of %zu bytes: %s\n", bytes, bad ? "FAILED" : "ok");
    if (bad) {
        printf("peerAccess: FAIL: %d elements differ after the round trip\n", bad);
        return EXIT_FAILURE;
    }
    if (!can01 || !can10)
        return waive("devices 0 and 1 cannot access each other's memory (two contexts on one GPU, or no peer "
                     "path between the GPUs): the peer kernel needs it; the peer copies above passed");

    CHECK(cudaSetDevice(0));
    CHECK(cudaDeviceEnablePeerAccess(1, 0));
    CHECK(cudaSetDevice(1));
    CHECK(cudaDeviceEnablePeerAccess(0, 0));
    // Device 1 reads device 0's buffer straight through its pointer.
    CHECK(cudaMemset(on1, 0, bytes));
    saxpy<<<(kCount + 255) / 256, 256>>>(kCount, 2.0f, on0, on1);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(host, on1, bytes, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < kCount; ++i)
        bad += host[i] != 2.0f * ((float)(i % 1000) * 0.5f);
    printf("peerAccess: kernel on device 1 reading device 0's memory: %s\n", bad ? "FAILED" : "ok");
    CHECK(cudaDeviceDisablePeerAccess(0));
    CHECK(cudaSetDevice(0));
    CHECK(cudaDeviceDisablePeerAccess(1));
    CHECK(cudaFree(on0));
    CHECK(cudaSetDevice(1));
    CHECK(cudaFree(on1));
    free(host);
    if (bad) {
        printf("peerAccess: FAIL: %d elements differ\n", bad);
        return EXIT_FAILURE;
    }
    printf("peerAccess: PASS\n");
    return EXIT_SUCCESS;
}
