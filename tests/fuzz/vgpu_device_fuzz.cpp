// libFuzzer entry point (KVMGPU_FUZZ=ON, clang): a hostile guest's session
// with a whole VgpuDevice; see vgpu_device_fuzz_body.h.
#include "vgpu_device_fuzz_body.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    kvmgpu::vgpu::fuzz::run_device_input(data, size);
    return 0;
}
