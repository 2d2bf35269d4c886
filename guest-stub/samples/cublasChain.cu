// cuRAND, kernels and cuBLAS on one stream, nothing synchronized between
// them: X uniform and Y normal (cuRAND on the stream), A = X + Y (a
// kernel), C = A B (cublasSgemm on the stream), C = 2 X + C (a kernel),
// then copies back, checked against the CPU (from the X and Y generated).
// Shows that the libraries' work is ordered with the program's own on the
// stream each was given.
// The kernels are the project's samples' (vectorAdd, saxpy), which the
// host backend also runs.
#include <cmath>
#include <cstdio>
#include <vector>

#include <cublas_v2.h>
#include <curand.h>

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
        B[i] = float((i * 3) % 11) - 5.f;
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
    curandGenerator_t gen;
    if (curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_DEFAULT) != CURAND_STATUS_SUCCESS ||
        curandSetStream(gen, s) != CURAND_STATUS_SUCCESS || curandSetPseudoRandomGeneratorSeed(gen, 2026) != CURAND_STATUS_SUCCESS ||
        curandGenerateUniform(gen, dX, elems) != CURAND_STATUS_SUCCESS ||
        curandGenerateNormal(gen, dY, elems, 1.f, 0.5f) != CURAND_STATUS_SUCCESS) {
        fprintf(stderr, "cublasChain: cuRAND failed\n");
        return EXIT_FAILURE;
    }
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
    CHECK(cudaMemcpyAsync(X.data(), dX, elems * sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(cudaMemcpyAsync(Y.data(), dY, elems * sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));

    double xsum = 0, ysum = 0;
    bool in_range = true;
    for (int i = 0; i < elems; ++i)
        xsum += X[i], ysum += Y[i], in_range = in_range && X[i] > 0.f && X[i] <= 1.f;
    if (!in_range || std::fabs(xsum / elems - 0.5) > 0.05 || std::fabs(ysum / elems - 1.0) > 0.1) {
        fprintf(stderr, "cublasChain: FAILED: cuRAND's numbers are off (uniform mean %.3f, normal mean %.3f)\n",
                xsum / elems, ysum / elems);
        return EXIT_FAILURE;
    }

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
    curandDestroyGenerator(gen);
    CHECK(cudaStreamDestroy(s));
    for (float* p : {dX, dY, dA, dB, dC})
        CHECK(cudaFree(p));
    if (wrong) {
        fprintf(stderr, "cublasChain: FAILED: %d of %d elements wrong\n", wrong, elems);
        return EXIT_FAILURE;
    }
    printf("cublasChain: cuRAND -> kernel -> cublasSgemm -> kernel on one stream: %d x %d correct\n", n, n);
    return EXIT_SUCCESS;
}
