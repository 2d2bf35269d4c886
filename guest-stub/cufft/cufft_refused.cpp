// cuFFT calls the vGPU does not forward, present so that programs using
// them link and learn at the call, with one line on stderr naming it:
// - multi-GPU plans (cufftXtSetGPUs, cufftXtMalloc/Memcpy/Free,
//   cufftXtExecDescriptor*): a plan spanning devices would need the VMM
//   to split one library call over several of the VM's devices;
// - device-side callbacks (cufftXtSetCallback): the callback is a device
//   function pointer in the program's relocatable device code, which the
//   host library would have to link against (cufft_static, -rdc).
// Each returns CUFFT_NOT_SUPPORTED (the native library's answer for a
// feature a plan cannot have).
#include <cufftXt.h>

#include <cstdio>

namespace {
cufftResult refuse(const char* call, const char* why)
{
    std::fprintf(stderr, "cuFFT (vGPU guest): %s refused: %s are not forwarded\n", call, why);
    return CUFFT_NOT_SUPPORTED;
}
constexpr const char* kMultiGpu = "multi-GPU plans";
constexpr const char* kCallbacks = "device-side callbacks";
} // namespace

cufftResult cufftXtSetGPUs(cufftHandle, int, int*) { return refuse("cufftXtSetGPUs", kMultiGpu); }
cufftResult cufftXtMalloc(cufftHandle, cudaLibXtDesc**, cufftXtSubFormat) { return refuse("cufftXtMalloc", kMultiGpu); }
cufftResult cufftXtMemcpy(cufftHandle, void*, void*, cufftXtCopyType) { return refuse("cufftXtMemcpy", kMultiGpu); }
cufftResult cufftXtFree(cudaLibXtDesc*) { return refuse("cufftXtFree", kMultiGpu); }
cufftResult cufftXtExecDescriptorC2C(cufftHandle, cudaLibXtDesc*, cudaLibXtDesc*, int)
{
    return refuse("cufftXtExecDescriptorC2C", kMultiGpu);
}
cufftResult cufftXtSetCallback(cufftHandle, void**, cufftXtCallbackType, void**)
{
    return refuse("cufftXtSetCallback", kCallbacks);
}
