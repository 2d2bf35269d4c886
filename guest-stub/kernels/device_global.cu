// A __device__ variable a guest finds with cuModuleGetGlobal, and a kernel
// that reads it: the guest sets the variable with a copy, then checks what
// the kernel did with it.
extern "C" __device__ int kvmgpu_scale = 3;

extern "C" __global__ void scale_by_global(int* values, unsigned n)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        values[i] *= kvmgpu_scale;
}
