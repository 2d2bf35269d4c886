// The .cu of the multi-file guest: C = A + B on the device (the kernel has
// the host backend's reference vectorAdd signature), checked with the C
// file's checksum and labelled by the C++ file.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "multifile.h"

__global__ void vectorAdd(const float* A, const float* B, float* C, int numElements)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < numElements)
        C[i] = A[i] + B[i];
}

int main()
{
    const int n = 1000;
    std::vector<float> a(n), b(n), c(n);
    for (int i = 0; i < n; ++i)
        a[i] = static_cast<float>(i), b[i] = 1.0f;
    float *da, *db, *dc;
    const size_t bytes = n * sizeof(float);
    if (cudaMalloc(&da, bytes) || cudaMalloc(&db, bytes) || cudaMalloc(&dc, bytes) ||
        cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice) ||
        cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice)) {
        std::fprintf(stderr, "multifile: CUDA set-up failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        return EXIT_FAILURE;
    }
    vectorAdd<<<(n + 255) / 256, 256>>>(da, db, dc, n);
    if (cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
        std::fprintf(stderr, "multifile: kernel failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        return EXIT_FAILURE;
    }
    const float sum = checksum(c.data(), n);
    const float want = n * (n - 1) / 2.0f + n;
    bool caught = false;
    try {
        make_label(-1, 0.0f);
    } catch (const std::invalid_argument&) {
        caught = true;
    }
    std::printf("multifile: %s (want %.0f), exception %s\n", make_label(n, sum).c_str(), want,
                caught ? "caught" : "MISSING");
    return sum == want && caught ? EXIT_SUCCESS : EXIT_FAILURE;
}
