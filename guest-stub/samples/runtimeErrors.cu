// runtimeErrors: the CUDA runtime's error rules, checked. A kernel that
// touches an illegal address makes the error sticky: the next
// synchronization reports it, cudaGetLastError keeps returning it, and every
// later call fails with it, until cudaDeviceReset gives the program a fresh
// primary context in which allocations, copies and launches work again.
// (The non-sticky rules are checked by streamsEvents.)
#include <cstdio>
#include <cstdint>
#include <cstdlib>

#include <cuda_runtime.h>

__global__ void vectorAdd(const float* A, const float* B, float* C, int numElements)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < numElements)
        C[i] = A[i] + B[i];
}

static int g_failures = 0;

static void expect(cudaError_t got, cudaError_t want, const char* what)
{
    const bool ok = got == want;
    printf("  %-52s %s%s%s\n", what, cudaGetErrorName(got), ok ? "" : ", expected ", ok ? "" : cudaGetErrorName(want));
    if (!ok)
        ++g_failures;
}

// c = a + b over n floats on the device; true if the result is right.
static bool add_works(int n)
{
    float *d = NULL, h[256];
    if (cudaMalloc((void**)&d, 3 * n * sizeof(float)) != cudaSuccess)
        return false;
    for (int i = 0; i < n; ++i)
        h[i] = (float)i;
    bool ok = cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess &&
              cudaMemcpy(d + n, h, n * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess;
    vectorAdd<<<1, n>>>(d, d + n, d + 2 * n, n);
    ok = ok && cudaGetLastError() == cudaSuccess &&
         cudaMemcpy(h, d + 2 * n, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess;
    for (int i = 0; ok && i < n; ++i)
        ok = h[i] == 2.0f * i;
    return cudaFree(d) == cudaSuccess && ok;
}

int main(void)
{
    printf("runtimeErrors: sticky errors and cudaDeviceReset\n");
    printf("  %-52s %s\n", "add before the fault", add_works(256) ? "works" : "FAILED");
    float* bogus = (float*)(uintptr_t)0x10; // no allocation lives there
    vectorAdd<<<1, 32>>>(bogus, bogus, bogus, 32);
    expect(cudaGetLastError(), cudaSuccess, "the launch itself (errors come later)");
    expect(cudaDeviceSynchronize(), cudaErrorIllegalAddress, "cudaDeviceSynchronize after the fault");
    expect(cudaGetLastError(), cudaErrorIllegalAddress, "cudaGetLastError");
    expect(cudaGetLastError(), cudaErrorIllegalAddress, "cudaGetLastError again (sticky)");
    void* p = NULL;
    expect(cudaMalloc(&p, 1024), cudaErrorIllegalAddress, "cudaMalloc in the broken context");
    expect(cudaDeviceReset(), cudaSuccess, "cudaDeviceReset");
    expect(cudaGetLastError(), cudaSuccess, "cudaGetLastError after the reset");
    const bool works = add_works(256);
    printf("  %-52s %s\n", "add after the reset", works ? "works" : "FAILED");
    if (!works)
        ++g_failures;
    printf("%s\n", g_failures == 0 ? "Test PASSED" : "Test FAILED");
    return g_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
