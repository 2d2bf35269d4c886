// deviceSymbols: __constant__ and __device__ variables through the runtime's
// symbol calls (cudaMemcpyToSymbol with and without an offset,
// cudaMemcpyFromSymbol, cudaGetSymbolAddress, cudaGetSymbolSize) and an
// atomic counter in device memory. Needs the CUDA backend: the host
// backend's C++ kernels have no device variables (cudaErrorInvalidSymbol).
// Integer-valued floats throughout, so every result is exact.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#include "check_cuda.h"

__constant__ float c_coeffs[4];
__device__ unsigned int d_positive;
__device__ float d_table[256];

// y = c0 + c1 x + c2 x^2 + c3 x^3; counts the positive results.
__global__ void polyEval(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        const float r = ((c_coeffs[3] * v + c_coeffs[2]) * v + c_coeffs[1]) * v + c_coeffs[0];
        y[i] = r;
        if (r > 0.0f)
            atomicAdd(&d_positive, 1u);
    }
}

__global__ void fillTable(float scale)
{
    d_table[threadIdx.x] = scale * threadIdx.x;
}

int main(void)
{
    const int n = 129;
    int failures = 0;
    float h_x[n], h_y[n];
    for (int i = 0; i < n; ++i)
        h_x[i] = (float)(i - 64);
    const float coeffs[4] = {-5.0f, 2.0f, 9.0f, 9.0f}; // written as {c0, c1} then {c2, c3} at offset 8
    CHECK(cudaMemcpyToSymbol(c_coeffs, coeffs, 2 * sizeof(float)));
    CHECK(cudaMemcpyToSymbol(c_coeffs, coeffs + 2, 2 * sizeof(float), 2 * sizeof(float)));
    const unsigned zero = 0;
    CHECK(cudaMemcpyToSymbol(d_positive, &zero, sizeof zero));

    float *d_x, *d_y;
    CHECK(cudaMalloc((void**)&d_x, sizeof h_x));
    CHECK(cudaMalloc((void**)&d_y, sizeof h_y));
    CHECK(cudaMemcpy(d_x, h_x, sizeof h_x, cudaMemcpyHostToDevice));
    polyEval<<<(n + 127) / 128, 128>>>(d_x, d_y, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h_y, d_y, sizeof h_y, cudaMemcpyDeviceToHost));
    unsigned positive = 0;
    CHECK(cudaMemcpyFromSymbol(&positive, d_positive, sizeof positive));

    unsigned want_positive = 0;
    for (int i = 0; i < n; ++i) {
        const double v = h_x[i];
        const double want = ((9.0 * v + 9.0) * v + 2.0) * v - 5.0; // |want| < 2^24: exact in float
        want_positive += want > 0;
        if (h_y[i] != (float)want) {
            if (failures < 5)
                printf("  y[%d] = %.1f, expected %.1f\n", i, h_y[i], want);
            ++failures;
        }
    }
    printf("deviceSymbols: polynomial from __constant__ coefficients: %s\n", failures == 0 ? "exact" : "WRONG");
    printf("deviceSymbols: __device__ counter %u, expected %u\n", positive, want_positive);
    failures += positive != want_positive;

    void* table = NULL;
    size_t table_bytes = 0;
    CHECK(cudaGetSymbolAddress(&table, d_table));
    CHECK(cudaGetSymbolSize(&table_bytes, d_table));
    fillTable<<<1, 256>>>(0.5f);
    CHECK(cudaGetLastError());
    float h_table[256];
    CHECK(cudaMemcpy(h_table, table, sizeof h_table, cudaMemcpyDeviceToHost)); // by its address
    int bad_table = table_bytes != sizeof h_table;
    for (int i = 0; i < 256; ++i)
        bad_table += h_table[i] != 0.5f * i;
    printf("deviceSymbols: d_table (%zu bytes) by cudaGetSymbolAddress: %s\n", table_bytes, bad_table ? "WRONG" : "ok");
    failures += bad_table;

    // A copy past the symbol's end is refused, and that error is not sticky.
    const cudaError_t e = cudaMemcpyToSymbol(c_coeffs, coeffs, 4 * sizeof(float), 2 * sizeof(float));
    const cudaError_t last = cudaGetLastError();
    const cudaError_t after = cudaGetLastError();
    printf("deviceSymbols: copy past the symbol: %s, then %s\n", cudaGetErrorName(last), cudaGetErrorName(after));
    failures += e != cudaErrorInvalidValue || last != cudaErrorInvalidValue || after != cudaSuccess;

    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_y));
    printf("%s\n", failures == 0 ? "Test PASSED" : "Test FAILED");
    return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
