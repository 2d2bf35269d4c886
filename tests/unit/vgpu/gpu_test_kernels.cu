// Kernels the GPU tests load as a guest would: through MODULE_LOAD_DATA
// with a fatbin image placed in guest RAM. Same names and meaning as the
// host backend's CPU reference kernels.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void empty_kernel() {}

// A by-value parameter wider than any pointer: what a guest must supply in
// full (the driver takes 64 bytes for it whatever a launch declares).
struct Wide {
    unsigned long long w[8];
};
extern "C" __global__ void copy_wide(Wide in, unsigned long long* out) {
    if (threadIdx.x < 8) out[threadIdx.x] = in.w[threadIdx.x];
}

// Keeps one thread busy for about `cycles` clock cycles: work that is still
// pending when a query or a waiting stream looks at it.
extern "C" __global__ void spin_kernel(unsigned long long cycles) {
    const long long start = clock64();
    while (static_cast<unsigned long long>(clock64() - start) < cycles) {
    }
}
