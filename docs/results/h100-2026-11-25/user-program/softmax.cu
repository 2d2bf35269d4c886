// A user's program: softmax of random scores on the GPU, checked on the CPU.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void exp_shift(const float* in, float* out, float shift, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = expf(in[i] - shift);
}

int main() {
    const int n = 4096;
    float* h = (float*)malloc(n * sizeof(float));
    float* r = (float*)malloc(n * sizeof(float));
    srand(7);
    float mx = -1e30f;
    for (int i = 0; i < n; ++i) { h[i] = (float)(rand() % 1000) / 100.0f; mx = fmaxf(mx, h[i]); }
    float *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, n * sizeof(float));
    cudaStream_t s; cudaStreamCreate(&s);
    cudaMemcpyAsync(d_in, h, n * sizeof(float), cudaMemcpyHostToDevice, s);
    exp_shift<<<(n + 255) / 256, 256, 0, s>>>(d_in, d_out, mx, n);
    cudaMemcpyAsync(r, d_out, n * sizeof(float), cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    if (cudaGetLastError() != cudaSuccess) { printf("CUDA error\n"); return 1; }
    double sum = 0, worst = 0;
    for (int i = 0; i < n; ++i) sum += r[i];
    for (int i = 0; i < n; ++i) worst = fmax(worst, fabs(r[i] / sum - exp(h[i] - mx) / sum));
    printf("softmax of %d scores: sum %.4f, worst error %.3g, norm %.4f\n", n, sum, worst, sqrtf((float)sum));
    free(h); free(r);
    cudaFree(d_in); cudaFree(d_out);
    return worst < 1e-6 ? 0 : 1;
}
