// libFuzzer entry point (KVMGPU_FUZZ=ON, clang): see vgpu_fuzz_body.h.
#include "vgpu_fuzz_body.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    kvmgpu::vgpu::fuzz::run_one(data, size);
    return 0;
}
