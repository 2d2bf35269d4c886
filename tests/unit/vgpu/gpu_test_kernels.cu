// Kernels the GPU tests load as a guest would: through MODULE_LOAD_DATA
// with a fatbin image placed in guest RAM. Same names and meaning as the
// host backend's CPU reference kernels.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void empty_kernel() {}

// Writes v through p from one thread: an illegal p makes a sticky error.
extern "C" __global__ void poke_u64(unsigned long long* p, unsigned long long v) {
    if (threadIdx.x == 0 && blockIdx.x == 0) *p = v;
}

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

// Samples a 2-D float texture object at every texel centre (point
// filtering): the array's values, if the object the guest holds is the
// driver's (the VMM passes kernel parameters through unread).
extern "C" __global__ void tex_fetch_2d(unsigned long long tex, float* out, unsigned w, unsigned h) {
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) out[y * w + x] = tex2D<float>(static_cast<cudaTextureObject_t>(tex), x + 0.5f, y + 0.5f);
}

// Writes 2 * (y * 1000 + x) into a 2-D float surface object.
extern "C" __global__ void surf_write_2d(unsigned long long surf, unsigned w, unsigned h) {
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) surf2Dwrite(2.0f * (y * 1000 + x), static_cast<cudaSurfaceObject_t>(surf), x * 4, y);
}
