// c = a * b for square row-major n x n matrices, one thread per element of
// c, tiled through shared memory. Launch with 16 x 16 blocks and a grid of
// ceil(n/16) x ceil(n/16). The host backend's CPU reference kernel has the
// same name and signature.
#define MATMUL_TILE 16

extern "C" __global__ void matmul(const float* a, const float* b, float* c, unsigned n)
{
    __shared__ float ta[MATMUL_TILE][MATMUL_TILE];
    __shared__ float tb[MATMUL_TILE][MATMUL_TILE];
    unsigned row = blockIdx.y * MATMUL_TILE + threadIdx.y;
    unsigned col = blockIdx.x * MATMUL_TILE + threadIdx.x;
    float acc = 0.0f;
    for (unsigned t = 0; t < n; t += MATMUL_TILE) {
        unsigned ac = t + threadIdx.x, br = t + threadIdx.y;
        ta[threadIdx.y][threadIdx.x] = row < n && ac < n ? a[(size_t)row * n + ac] : 0.0f;
        tb[threadIdx.y][threadIdx.x] = br < n && col < n ? b[(size_t)br * n + col] : 0.0f;
        __syncthreads();
        for (unsigned k = 0; k < MATMUL_TILE; ++k)
            acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n)
        c[(size_t)row * n + col] = acc;
}
