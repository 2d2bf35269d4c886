// streamsEvents: several kernels on several streams, ordered by events, in
// the style of CUDA's simpleStreams / asyncAPI samples. The data is split
// in chunks, one stream each: copy in, saxpy on floats, incrementBy on
// integers, an event; a join stream waits for every chunk's event and runs
// one kernel over all the integers; each stream waits for the join and
// copies its chunk back. start/stop events time the whole. Also checks the
// runtime's error semantics: an out-of-memory cudaMalloc and an invalid
// launch configuration are reported once by cudaGetLastError and are not
// sticky. Every result is checked on the CPU.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#include "check_cuda.h"

__global__ void saxpy(int n, float a, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

__global__ void incrementBy(int* data, int inc, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] += inc;
}

static int g_failures = 0;

static void expect(bool ok, const char* what)
{
    printf("  %-58s %s\n", what, ok ? "ok" : "FAILED");
    if (!ok)
        ++g_failures;
}

// The runtime's error rules, as CUDA documents them.
static void check_error_semantics(void)
{
    printf("error semantics:\n");
    void* huge = NULL;
    cudaError_t e = cudaMalloc(&huge, (size_t)1 << 50);
    expect(e == cudaErrorMemoryAllocation, "cudaMalloc(1 PiB) -> cudaErrorMemoryAllocation");
    expect(cudaPeekAtLastError() == cudaErrorMemoryAllocation, "cudaPeekAtLastError sees it");
    expect(cudaGetLastError() == cudaErrorMemoryAllocation, "cudaGetLastError returns it");
    expect(cudaGetLastError() == cudaSuccess, "... and resets it (not sticky)");
    int* d = NULL;
    CHECK(cudaMalloc((void**)&d, 1024 * sizeof(int)));
    incrementBy<<<1, 4096>>>(d, 1, 1024); // more threads per block than any device has
    const cudaError_t bad_launch = cudaGetLastError();
    printf("  <<<1, 4096>>> returned %s\n", cudaGetErrorName(bad_launch));
    // CUDA 13 says cudaErrorInvalidValue (older runtimes said
    // cudaErrorInvalidConfiguration): an error either way, never success.
    expect(bad_launch == cudaErrorInvalidValue || bad_launch == cudaErrorInvalidConfiguration,
           "<<<1, 4096>>> -> an invalid-launch error");
    expect(cudaGetLastError() == cudaSuccess, "... reported once");
    CHECK(cudaMemset(d, 0, 1024 * sizeof(int)));
    incrementBy<<<4, 256>>>(d, 5, 1024);
    expect(cudaGetLastError() == cudaSuccess, "a good launch afterwards");
    int h[1024];
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    bool all5 = true;
    for (int i = 0; i < 1024; ++i)
        all5 = all5 && h[i] == 5;
    expect(all5, "... computes (the context is fine)");
    expect(cudaFree(d) == cudaSuccess, "cudaFree");
    expect(cudaStreamQuery(0) == cudaSuccess, "cudaStreamQuery(0) after the copy: idle");
}

int main(void)
{
    const int nStreams = 4;
    const int n = 1 << 20;
    const int chunk = n / nStreams;
    const float a = 2.5f;

    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("streamsEvents: %d device(s); device 0 \"%s\", %d SMs, %zu MiB, warp %d, max %d threads/block\n", count,
           prop.name, prop.multiProcessorCount, prop.totalGlobalMem >> 20, prop.warpSize, prop.maxThreadsPerBlock);
    check_error_semantics();

    // Floats in pinned memory; integers in malloc'd memory registered with
    // the runtime.
    float *h_x, *h_y;
    CHECK(cudaMallocHost((void**)&h_x, n * sizeof(float)));
    CHECK(cudaMallocHost((void**)&h_y, n * sizeof(float)));
    int* h_i = (int*)malloc(n * sizeof(int));
    if (h_i == NULL)
        return EXIT_FAILURE;
    CHECK(cudaHostRegister(h_i, n * sizeof(int), cudaHostRegisterDefault));
    for (int i = 0; i < n; ++i) {
        h_x[i] = expf(-(float)i / n);
        h_y[i] = sqrtf((float)i);
        h_i[i] = i;
    }

    float *d_x, *d_y;
    int* d_i;
    CHECK(cudaMalloc((void**)&d_x, n * sizeof(float)));
    CHECK(cudaMalloc((void**)&d_y, n * sizeof(float)));
    CHECK(cudaMalloc((void**)&d_i, n * sizeof(int)));

    cudaStream_t streams[nStreams], join;
    cudaEvent_t chunkDone[nStreams], joined, start, stop, copiedBack[nStreams];
    for (int s = 0; s < nStreams; ++s) {
        CHECK(cudaStreamCreate(&streams[s]));
        CHECK(cudaEventCreateWithFlags(&chunkDone[s], cudaEventDisableTiming));
        CHECK(cudaEventCreateWithFlags(&copiedBack[s], cudaEventDisableTiming));
    }
    CHECK(cudaStreamCreateWithFlags(&join, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming));
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));

    const int threads = 256;
    CHECK(cudaEventRecord(start, 0));
    for (int s = 0; s < nStreams; ++s) {
        const int off = s * chunk;
        CHECK(cudaStreamWaitEvent(streams[s], start, 0));
        CHECK(cudaMemcpyAsync(d_x + off, h_x + off, chunk * sizeof(float), cudaMemcpyHostToDevice, streams[s]));
        CHECK(cudaMemcpyAsync(d_y + off, h_y + off, chunk * sizeof(float), cudaMemcpyHostToDevice, streams[s]));
        CHECK(cudaMemcpyAsync(d_i + off, h_i + off, chunk * sizeof(int), cudaMemcpyHostToDevice, streams[s]));
        saxpy<<<(chunk + threads - 1) / threads, threads, 0, streams[s]>>>(chunk, a, d_x + off, d_y + off);
        incrementBy<<<(chunk + threads - 1) / threads, threads, 0, streams[s]>>>(d_i + off, s + 1, chunk);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(chunkDone[s], streams[s]));
    }
    for (int s = 0; s < nStreams; ++s)
        CHECK(cudaStreamWaitEvent(join, chunkDone[s], 0));
    incrementBy<<<(n + threads - 1) / threads, threads, 0, join>>>(d_i, 100, n);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(joined, join));
    for (int s = 0; s < nStreams; ++s) {
        const int off = s * chunk;
        CHECK(cudaStreamWaitEvent(streams[s], joined, 0));
        CHECK(cudaMemcpyAsync(h_y + off, d_y + off, chunk * sizeof(float), cudaMemcpyDeviceToHost, streams[s]));
        CHECK(cudaMemcpyAsync(h_i + off, d_i + off, chunk * sizeof(int), cudaMemcpyDeviceToHost, streams[s]));
        CHECK(cudaEventRecord(copiedBack[s], streams[s]));
        CHECK(cudaStreamWaitEvent(0, copiedBack[s], 0));
    }
    CHECK(cudaEventRecord(stop, 0));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    printf("%d streams, %d elements: copies in, saxpy, incrementBy, join, copies out in %.3f ms\n", nStreams, n, ms);
    expect(cudaEventQuery(stop) == cudaSuccess, "cudaEventQuery(stop) after cudaEventSynchronize");
    for (int s = 0; s < nStreams; ++s)
        CHECK(cudaStreamSynchronize(streams[s]));

    int badFloat = 0, badInt = 0;
    for (int i = 0; i < n; ++i) {
        const float want = a * expf(-(float)i / n) + sqrtf((float)i);
        // The GPU may fuse a*x+y into one rounding: allow a few ulps.
        if (fabsf(h_y[i] - want) > 4e-7f * fmaxf(1.0f, fabsf(want))) {
            if (badFloat < 5)
                printf("  y[%d] = %.9g, expected %.9g\n", i, h_y[i], want);
            ++badFloat;
        }
        if (h_i[i] != i + i / chunk + 1 + 100) {
            if (badInt < 5)
                printf("  i[%d] = %d, expected %d\n", i, h_i[i], i + i / chunk + 1 + 100);
            ++badInt;
        }
    }
    expect(badFloat == 0, "saxpy results (stream per chunk)");
    expect(badInt == 0, "incrementBy results (per chunk, then joined)");

    for (int s = 0; s < nStreams; ++s) {
        CHECK(cudaStreamDestroy(streams[s]));
        CHECK(cudaEventDestroy(chunkDone[s]));
        CHECK(cudaEventDestroy(copiedBack[s]));
    }
    CHECK(cudaStreamDestroy(join));
    CHECK(cudaEventDestroy(joined));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaHostUnregister(h_i));
    free(h_i);
    CHECK(cudaFreeHost(h_x));
    CHECK(cudaFreeHost(h_y));
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_y));
    CHECK(cudaFree(d_i));
    CHECK(cudaDeviceSynchronize());
    printf("%s\n", g_failures == 0 ? "Test PASSED" : "Test FAILED");
    return g_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
