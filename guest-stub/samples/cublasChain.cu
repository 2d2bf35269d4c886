// Kernels and cuBLAS on one stream, nothing synchronized between them:
// A = X + Y (a kernel), C = A B (cublasSgemm on the stream), C = 2 X + C
// (a kernel), then one copy back, checked against the CPU. Shows that the
// library's work is ordered with the program's own on the stream it set.
// The kernels are the project's samples' (vectorAdd, saxpy), which the
// host backend also runs.
#include <cmath>
#include <cstdio>
#include <vector>

#include <cublas_v2.h>

#include "guest-stub/samples/check_cuda.h"

__global__ void vectorAdd(const float* A, const float* B, float* C, int numElements)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < numElements)
        C[i] = A[i] + B[i];
}

__global__ void saxpy(int n, float a, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

int main()
{
    const int n = 48, elems = n * n, threads = 256, blocks = (elems + threads - 1) / threads;
    std::vector<float> X(elems), Y(elems), B(elems);
    for (int i = 0; i < elems; ++i)
        X[i] = float(i % 7) - 3.f, Y[i] = float(i % 5) * 0.5f, B[i] = float((i * 3) % 11) - 5.f;
    float *dX, *dY, *dA, *dB, *dC;
    for (float** p : {&dX, &dY, &dA, &dB, &dC})
        CHECK(cudaMalloc(p, elems * sizeof(float)));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasSetStream(h, s) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasChain: cublasCreate/SetStream failed\n");
        return EXIT_FAILURE;
    }
    CHECK(cudaMemcpyAsync(dX, X.data(), elems * sizeof(float), cudaMemcpyHostToDevice, s));
    CHECK(cudaMemcpyAsync(dY, Y.data(), elems * sizeof(float), cudaMemcpyHostToDevice, s));
    CHECK(cudaMemcpyAsync(dB, B.data(), elems * sizeof(float), cudaMemcpyHostToDevice, s));
    vectorAdd<<<blocks, threads, 0, s>>>(dX, dY, dA, elems);
    CHECK(cudaGetLastError());
    const float one = 1.f, zero = 0.f;
    if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n, dB, n, &zero, dC, n) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasChain: cublasSgemm failed\n");
        return EXIT_FAILURE;
    }
    saxpy<<<blocks, threads, 0, s>>>(elems, 2.f, dX, dC);
    CHECK(cudaGetLastError());
    std::vector<float> C(elems);
    CHECK(cudaMemcpyAsync(C.data(), dC, elems * sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));

    int wrong = 0;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            double want = 0;
            for (int l = 0; l < n; ++l)
                want += double(X[i + l * n] + Y[i + l * n]) * B[l + j * n];
            want += 2.0 * X[i + j * n];
            if (std::fabs(C[i + j * n] - want) > 1e-3 * (1 + std::fabs(want)))
                ++wrong;
        }
    cublasDestroy(h);
    CHECK(cudaStreamDestroy(s));
    for (float* p : {dX, dY, dA, dB, dC})
        CHECK(cudaFree(p));
    if (wrong) {
        fprintf(stderr, "cublasChain: FAILED: %d of %d elements wrong\n", wrong, elems);
        return EXIT_FAILURE;
    }
    printf("cublasChain: kernel -> cublasSgemm -> kernel on one stream: %d x %d correct\n", n, n);
    return EXIT_SUCCESS;
}
