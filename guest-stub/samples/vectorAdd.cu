// vectorAdd: C = A + B for float vectors, in the style of CUDA's sample of
// the same name. Plain CUDA runtime API; checks every element against the
// CPU's sum and exits with EXIT_SUCCESS or EXIT_FAILURE.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#include "check_cuda.h"

__global__ void vectorAdd(const float* A, const float* B, float* C, int numElements)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < numElements)
        C[i] = A[i] + B[i];
}

int main(void)
{
    const int numElements = 50000;
    const size_t size = numElements * sizeof(float);
    printf("[Vector addition of %d elements]\n", numElements);

    float* h_A = (float*)malloc(size);
    float* h_B = (float*)malloc(size);
    float* h_C = (float*)malloc(size);
    if (h_A == NULL || h_B == NULL || h_C == NULL) {
        fprintf(stderr, "Failed to allocate host vectors!\n");
        exit(EXIT_FAILURE);
    }
    srand(2026);
    for (int i = 0; i < numElements; ++i) {
        h_A[i] = rand() / (float)RAND_MAX;
        h_B[i] = rand() / (float)RAND_MAX;
    }

    float *d_A = NULL, *d_B = NULL, *d_C = NULL;
    CHECK(cudaMalloc((void**)&d_A, size));
    CHECK(cudaMalloc((void**)&d_B, size));
    CHECK(cudaMalloc((void**)&d_C, size));

    printf("Copy input data from the host memory to the CUDA device\n");
    CHECK(cudaMemcpy(d_A, h_A, size, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_B, h_B, size, cudaMemcpyHostToDevice));

    int threadsPerBlock = 256;
    int blocksPerGrid = (numElements + threadsPerBlock - 1) / threadsPerBlock;
    printf("CUDA kernel launch with %d blocks of %d threads\n", blocksPerGrid, threadsPerBlock);
    vectorAdd<<<blocksPerGrid, threadsPerBlock>>>(d_A, d_B, d_C, numElements);
    CHECK(cudaGetLastError());

    printf("Copy output data from the CUDA device to the host memory\n");
    CHECK(cudaMemcpy(h_C, d_C, size, cudaMemcpyDeviceToHost));

    // One IEEE-754 float addition on both sides: the sums must be equal;
    // the tolerance is the sample's own, kept for its shape.
    int bad = 0;
    for (int i = 0; i < numElements; ++i) {
        if (fabsf(h_A[i] + h_B[i] - h_C[i]) > 1e-5f) {
            if (bad < 5)
                fprintf(stderr, "Result verification failed at element %d: %f + %f != %f\n", i, h_A[i], h_B[i],
                        h_C[i]);
            ++bad;
        }
    }

    CHECK(cudaFree(d_A));
    CHECK(cudaFree(d_B));
    CHECK(cudaFree(d_C));
    free(h_A);
    free(h_B);
    free(h_C);
    if (bad != 0) {
        printf("Test FAILED (%d of %d elements differ)\n", bad, numElements);
        return EXIT_FAILURE;
    }
    printf("Test PASSED\n");
    printf("Done\n");
    return 0;
}
