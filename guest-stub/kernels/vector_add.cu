// c[i] = a[i] + b[i]. The host backend's CPU reference kernel has the same
// name and signature (and declares the same parameter layout): keep them in step.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}
