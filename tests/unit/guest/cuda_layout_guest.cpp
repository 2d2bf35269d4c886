#include "guest-stub/cuda/guest_cuda.h"
#include "tests/unit/guest/cuda_layout_fields.h"

std::vector<std::pair<std::string, size_t>> kvmgpu::guest_layout::guest_layout() { KVMGPU_CUDA_LAYOUT_BODY }
