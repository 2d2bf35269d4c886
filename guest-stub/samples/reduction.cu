// reduction: the sum of 2^22 integers by a tree reduction in shared memory,
// in the style of CUDA's reduction sample: each block sums 2 * blockDim
// elements (the first add during the load), the partial sums are reduced
// again by the same kernel until one is left. Integers, so the GPU's sum
// must equal the CPU's exactly; timed with events.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#include "check_cuda.h"

__global__ void reduceSum(const int* g_idata, int* g_odata, unsigned int n)
{
    extern __shared__ int sdata[];
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    int sum = (i < n) ? g_idata[i] : 0;
    if (i + blockDim.x < n)
        sum += g_idata[i + blockDim.x];
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] = sum = sum + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        g_odata[blockIdx.x] = sum;
}

// Sums d_in[0, n) on the device into *d_result by passes of reduceSum;
// d_a and d_b hold the partial sums (ping-pong).
static void reduce(const int* d_in, unsigned n, int* d_a, int* d_b, int threads, int* passes)
{
    const int* src = d_in;
    int* dst = d_a;
    *passes = 0;
    do {
        const unsigned blocks = (n + threads * 2 - 1) / (threads * 2);
        reduceSum<<<blocks, threads, threads * sizeof(int)>>>(src, dst, n);
        CHECK(cudaGetLastError());
        ++*passes;
        n = blocks;
        src = dst;
        dst = dst == d_a ? d_b : d_a;
    } while (n > 1);
    if (src != d_a)
        CHECK(cudaMemcpy(d_a, src, sizeof(int), cudaMemcpyDeviceToDevice));
}

int main(void)
{
    const unsigned size = 1u << 22;
    const int threads = 256;
    printf("reduction: sum of %u ints, %d threads per block\n", size, threads);
    int* h_idata = (int*)malloc(size * sizeof(int));
    if (h_idata == NULL) {
        fprintf(stderr, "reduction: malloc failed\n");
        return EXIT_FAILURE;
    }
    srand(11);
    long long cpu = 0;
    for (unsigned i = 0; i < size; ++i) {
        h_idata[i] = rand() & 0xff;
        cpu += h_idata[i];
    }

    int *d_idata, *d_a, *d_b;
    const unsigned maxBlocks = (size + threads * 2 - 1) / (threads * 2);
    CHECK(cudaMalloc((void**)&d_idata, size * sizeof(int)));
    CHECK(cudaMalloc((void**)&d_a, maxBlocks * sizeof(int)));
    CHECK(cudaMalloc((void**)&d_b, maxBlocks * sizeof(int)));
    CHECK(cudaMemcpy(d_idata, h_idata, size * sizeof(int), cudaMemcpyHostToDevice));

    int passes = 0;
    reduce(d_idata, size, d_a, d_b, threads, &passes); // warm-up
    CHECK(cudaDeviceSynchronize());

    const int iterations = 20;
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start, 0));
    for (int it = 0; it < iterations; ++it)
        reduce(d_idata, size, d_a, d_b, threads, &passes);
    CHECK(cudaEventRecord(stop, 0));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    const double avg_ms = ms / iterations;
    printf("Reduction, Throughput = %.4f GB/s, Time = %.5f ms, Size = %u Elements, Passes = %d\n",
           size * sizeof(int) / (avg_ms * 1.0e6), avg_ms, size, passes);

    int gpu = 0;
    CHECK(cudaMemcpy(&gpu, d_a, sizeof(int), cudaMemcpyDeviceToHost)); // to the stack: pageable
    printf("GPU result = %d\n", gpu);
    printf("CPU result = %lld\n", cpu);

    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaFree(d_idata));
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    free(h_idata);
    if ((long long)gpu != cpu) {
        printf("Test FAILED\n");
        return EXIT_FAILURE;
    }
    printf("Test PASSED\n");
    return EXIT_SUCCESS;
}
