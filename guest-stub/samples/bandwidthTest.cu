// bandwidthTest: host<->device and device<->device copy bandwidth in the
// style of CUDA's bandwidthTest (quick mode: one 32 MB transfer size), for
// pageable (malloc), pinned (cudaMallocHost) and registered
// (cudaHostRegister on malloc'd memory) host buffers. Times each with
// events around the copies, and verifies the data of every direction.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include "check_cuda.h"

enum MemoryMode { PAGEABLE, PINNED, REGISTERED };
static const char* const kModeName[] = {"PAGEABLE", "PINNED", "REGISTERED"};

static const size_t kTransferSize = 32000000; // the sample's quick-mode size
static const int kIterations = 10;
static int g_failures = 0;

static unsigned char* alloc_host(MemoryMode mode, size_t bytes)
{
    unsigned char* p = NULL;
    if (mode == PINNED) {
        CHECK(cudaMallocHost((void**)&p, bytes));
        return p;
    }
    p = (unsigned char*)malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "bandwidthTest: malloc(%zu) failed\n", bytes);
        exit(EXIT_FAILURE);
    }
    if (mode == REGISTERED)
        CHECK(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
    return p;
}

static void free_host(MemoryMode mode, unsigned char* p)
{
    if (mode == PINNED) {
        CHECK(cudaFreeHost(p));
        return;
    }
    if (mode == REGISTERED)
        CHECK(cudaHostUnregister(p));
    free(p);
}

static void fill(unsigned char* p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; ++i)
        p[i] = (unsigned char)((i * 2654435761u + seed) >> 13);
}

static void verify(const char* what, MemoryMode mode, const unsigned char* got, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; ++i) {
        const unsigned char want = (unsigned char)((i * 2654435761u + seed) >> 13);
        if (got[i] != want) {
            printf("   %s (%s): byte %zu is %u, expected %u\n", what, kModeName[mode], i, got[i], want);
            ++g_failures;
            return;
        }
    }
}

// GB/s of kIterations copies of `bytes`, timed by events on stream 0;
// pinned and registered buffers are copied with cudaMemcpyAsync, pageable
// ones with cudaMemcpy, as the sample does.
static float time_copies(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, bool async)
{
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start, 0));
    for (int i = 0; i < kIterations; ++i) {
        if (async)
            CHECK(cudaMemcpyAsync(dst, src, bytes, kind, 0));
        else
            CHECK(cudaMemcpy(dst, src, bytes, kind));
    }
    CHECK(cudaEventRecord(stop, 0));
    CHECK(cudaDeviceSynchronize());
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    const double seconds = ms / 1e3;
    return seconds > 0 ? (float)((double)bytes * kIterations / seconds / 1e9) : 0.0f;
}

static void print_result(const char* title, const char* mode, float gbs)
{
    printf(" %s\n", title);
    if (mode != NULL)
        printf(" %s Memory Transfers\n", mode);
    printf("   Transfer Size (Bytes)\tBandwidth(GB/s)\n");
    printf("   %zu\t\t\t%.1f\n\n", kTransferSize, gbs);
}

int main(void)
{
    printf("[CUDA Bandwidth Test] - Starting...\n");
    printf("Running on...\n\n");
    int dev = 0;
    CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, dev));
    printf(" Device %d: %s\n", dev, prop.name);
    printf(" Quick Mode\n\n");

    unsigned char *d_a, *d_b;
    CHECK(cudaMalloc((void**)&d_a, kTransferSize));
    CHECK(cudaMalloc((void**)&d_b, kTransferSize));

    for (int m = PAGEABLE; m <= REGISTERED; ++m) {
        const MemoryMode mode = (MemoryMode)m;
        const bool async = mode != PAGEABLE;
        unsigned char* h_src = alloc_host(mode, kTransferSize);
        unsigned char* h_dst = alloc_host(mode, kTransferSize);
        fill(h_src, kTransferSize, 17 + m);
        memset(h_dst, 0, kTransferSize);

        const float h2d = time_copies(d_a, h_src, kTransferSize, cudaMemcpyHostToDevice, async);
        print_result("Host to Device Bandwidth, 1 Device(s)", kModeName[mode], h2d);
        const float d2h = time_copies(h_dst, d_a, kTransferSize, cudaMemcpyDeviceToHost, async);
        print_result("Device to Host Bandwidth, 1 Device(s)", kModeName[mode], d2h);
        verify("host -> device -> host", mode, h_dst, kTransferSize, 17 + m);

        free_host(mode, h_src);
        free_host(mode, h_dst);
    }

    // Device to device: each byte read once and written once, counted twice
    // as the sample does.
    CHECK(cudaMemset(d_b, 0, kTransferSize));
    const float d2d = time_copies(d_b, d_a, kTransferSize, cudaMemcpyDeviceToDevice, true);
    print_result("Device to Device Bandwidth, 1 Device(s)", "PINNED", 2.0f * d2d);
    unsigned char* check = (unsigned char*)malloc(kTransferSize);
    if (check == NULL)
        return EXIT_FAILURE;
    CHECK(cudaMemcpy(check, d_b, kTransferSize, cudaMemcpyDeviceToHost));
    verify("device -> device", REGISTERED, check, kTransferSize, 17 + REGISTERED);
    free(check);

    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    printf("Result = %s\n", g_failures == 0 ? "PASS" : "FAIL");
    return g_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
