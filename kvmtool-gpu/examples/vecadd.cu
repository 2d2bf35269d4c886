// A CUDA runtime-API program, unmodified, built as a guest by
// kvmgpu_add_cuda_guest: adds two vectors on the (v)GPU and checks the sum.
// The kernel has the name and signature of one of the host backend's CPU
// reference kernels, so the example also runs where there is no GPU.
#include <cstdio>

__global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main() {
    const int n = 1 << 16;
    static float a[n], b[n], c[n];
    for (int i = 0; i < n; ++i) a[i] = i, b[i] = 2 * i;
    float *da, *db, *dc;
    cudaMalloc(&da, sizeof a);
    cudaMalloc(&db, sizeof b);
    cudaMalloc(&dc, sizeof c);
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
    vector_add<<<(n + 255) / 256, 256>>>(da, db, dc, n);
    cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i)
        if (c[i] != 3.0f * i) {
            std::printf("vecadd: FAIL at %d: %f\n", i, c[i]);
            return 1;
        }
    std::printf("vecadd: PASS (%d elements, %s)\n", n, cudaGetErrorString(cudaGetLastError()));
    return 0;
}
