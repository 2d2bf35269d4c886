// runtimeErrors: the CUDA runtime's error rules, checked. A kernel that
// touches an illegal address makes the error sticky: the next
// synchronization reports it, cudaGetLastError returns it once (then
// cudaSuccess, as CUDA 13 does), and every later call fails with it. Then
// cudaDeviceReset: CUDA documents a fresh primary context after it, but
// driver 580 cannot give a process back a working GPU after such a fault
// (natively the add after the reset fails), so whether work resumes is
// reported, and judged only with the argument expect-recovery (the vGPU
// replaces the VM's GPU worker, and its runs pass that).
// (The non-sticky rules are checked by streamsEvents.)
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>

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

int main(int argc, char** argv)
{
    bool expect_recovery = false;
    for (int i = 1; i < argc; ++i)
        expect_recovery = expect_recovery || strcmp(argv[i], "expect-recovery") == 0;
    printf("runtimeErrors: sticky errors and cudaDeviceReset\n");
    printf("  %-52s %s\n", "add before the fault", add_works(256) ? "works" : "FAILED");
    float* bogus = (float*)(uintptr_t)0x10; // no allocation lives there
    vectorAdd<<<1, 32>>>(bogus, bogus, bogus, 32);
    expect(cudaGetLastError(), cudaSuccess, "the launch itself (errors come later)");
    expect(cudaDeviceSynchronize(), cudaErrorIllegalAddress, "cudaDeviceSynchronize after the fault");
    expect(cudaGetLastError(), cudaErrorIllegalAddress, "cudaGetLastError");
    expect(cudaGetLastError(), cudaSuccess, "cudaGetLastError again (reported once)");
    void* p = NULL;
    expect(cudaMalloc(&p, 1024), cudaErrorIllegalAddress, "cudaMalloc in the broken context (sticky)");
    expect(cudaGetLastError(), cudaErrorIllegalAddress, "cudaGetLastError after that call");
    expect(cudaDeviceReset(), cudaSuccess, "cudaDeviceReset");
    const cudaError_t after_reset = cudaGetLastError();
    const bool works = add_works(256);
    printf("  %-52s %s (last error %s)%s\n", "add after the reset", works ? "works" : "fails",
           cudaGetErrorName(after_reset), expect_recovery ? ", judged" : ", not judged");
    if (expect_recovery && (!works || after_reset != cudaSuccess))
        ++g_failures;
    printf("%s\n", g_failures == 0 ? "Test PASSED" : "Test FAILED");
    return g_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
