// matrixMul: C = A * B with a tiled kernel that stages tiles of A and B in
// shared memory, in the style of CUDA's matrixMul sample. Times nIter
// launches with events, reports GFlop/s, and checks every element against
// the CPU's product (double accumulation, relative tolerance).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include "check_cuda.h"

template <int BLOCK_SIZE>
__global__ void matrixMulTiled(float* C, const float* A, const float* B, int wA, int wB)
{
    const int bx = blockIdx.x, by = blockIdx.y;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int aBegin = wA * BLOCK_SIZE * by; // first tile of A for this block
    const int aEnd = aBegin + wA - 1;
    const int aStep = BLOCK_SIZE;
    const int bBegin = BLOCK_SIZE * bx;      // first tile of B
    const int bStep = BLOCK_SIZE * wB;
    float Csub = 0.0f;
    for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
        __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
        __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
        As[ty][tx] = A[a + wA * ty + tx];
        Bs[ty][tx] = B[b + wB * ty + tx];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k)
            Csub += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    const int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
    C[c + wB * ty + tx] = Csub;
}

int main(int argc, char** argv)
{
    const int block_size = 32;
    // A is hA x wA, B is wA x wB, C is hA x wB (multiples of the tile).
    const int wA = 10 * block_size, hA = 10 * block_size, wB = 20 * block_size;
    int nIter = 10;
    for (int i = 1; i < argc; ++i)
        if (strncmp(argv[i], "iters=", 6) == 0)
            nIter = atoi(argv[i] + 6) < 1 ? 1 : atoi(argv[i] + 6);
    printf("[Matrix Multiply Using CUDA] - Starting...\n");
    int dev = 0;
    CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, dev));
    printf("GPU Device %d: \"%s\" with compute capability %d.%d\n\n", dev, prop.name, prop.major, prop.minor);

    const size_t sizeA = (size_t)wA * hA * sizeof(float), sizeB = (size_t)wB * wA * sizeof(float);
    const size_t sizeC = (size_t)wB * hA * sizeof(float);
    float *h_A, *h_B, *h_C;
    CHECK(cudaMallocHost((void**)&h_A, sizeA));
    CHECK(cudaMallocHost((void**)&h_B, sizeB));
    CHECK(cudaMallocHost((void**)&h_C, sizeC));
    srand(7);
    for (int i = 0; i < wA * hA; ++i)
        h_A[i] = rand() / (float)RAND_MAX;
    for (int i = 0; i < wB * wA; ++i)
        h_B[i] = rand() / (float)RAND_MAX - 0.5f;

    float *d_A, *d_B, *d_C;
    CHECK(cudaMalloc((void**)&d_A, sizeA));
    CHECK(cudaMalloc((void**)&d_B, sizeB));
    CHECK(cudaMalloc((void**)&d_C, sizeC));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK(cudaMemcpyAsync(d_A, h_A, sizeA, cudaMemcpyHostToDevice, stream));
    CHECK(cudaMemcpyAsync(d_B, h_B, sizeB, cudaMemcpyHostToDevice, stream));

    dim3 threads(block_size, block_size);
    dim3 grid(wB / threads.x, hA / threads.y);
    printf("MatrixA(%d,%d), MatrixB(%d,%d)\n", wA, hA, wB, wA);
    printf("Computing result using CUDA Kernel...\n");
    matrixMulTiled<block_size><<<grid, threads, 0, stream>>>(d_C, d_A, d_B, wA, wB); // warm-up
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(stream));
    printf("done\n");

    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start, stream));
    for (int j = 0; j < nIter; ++j)
        matrixMulTiled<block_size><<<grid, threads, 0, stream>>>(d_C, d_A, d_B, wA, wB);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float msecTotal = 0.0f;
    CHECK(cudaEventElapsedTime(&msecTotal, start, stop));
    const float msecPerMatrixMul = msecTotal / nIter;
    const double flops = 2.0 * (double)wA * (double)hA * (double)wB;
    const double gigaFlops = (flops * 1.0e-9) / (msecPerMatrixMul / 1000.0);
    printf("Performance= %.2f GFlop/s, Time= %.3f msec, Size= %.0f Ops, WorkgroupSize= %u threads/block\n",
           gigaFlops, msecPerMatrixMul, flops, threads.x * threads.y);

    CHECK(cudaMemcpyAsync(h_C, d_C, sizeC, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));

    printf("Checking computed result for correctness: ");
    int bad = 0;
    for (int r = 0; r < hA; ++r)
        for (int c = 0; c < wB; ++c) {
            double ref = 0.0, mag = 0.0;
            for (int k = 0; k < wA; ++k) {
                ref += (double)h_A[r * wA + k] * h_B[k * wB + c];
                mag += fabs((double)h_A[r * wA + k] * h_B[k * wB + c]);
            }
            // float accumulation of wA terms: error grows with the terms' magnitudes.
            const double err = fabs((double)h_C[r * wB + c] - ref);
            if (err > 1e-5 * mag + 1e-6) {
                if (bad < 5)
                    printf("\nError! Matrix[%05d]=%.8f, ref=%.8f error term is > 1e-5 of %.3f", r * wB + c,
                           h_C[r * wB + c], ref, mag);
                ++bad;
            }
        }
    printf("%s\n", bad == 0 ? "Result = PASS" : "Result = FAIL");

    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFreeHost(h_A));
    CHECK(cudaFreeHost(h_B));
    CHECK(cudaFreeHost(h_C));
    CHECK(cudaFree(d_A));
    CHECK(cudaFree(d_B));
    CHECK(cudaFree(d_C));
    if (bad != 0) {
        printf("Test FAILED: %d elements differ\n", bad);
        return EXIT_FAILURE;
    }
    printf("Test PASSED\n");
    return EXIT_SUCCESS;
}
