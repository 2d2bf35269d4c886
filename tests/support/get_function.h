// module_get_function for tests that do not look at the parameter layout
// (or look at it through the optional out-parameter).
#pragma once

#include <string_view>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"

namespace kvmgpu::test {

inline vgpu::Status get_function(vgpu::GpuBackend& be, vgpu::BackendModule m, std::string_view name,
                                 vgpu::BackendFunction* out, vgpu::ParamLayout* layout = nullptr) {
    vgpu::ParamLayout scratch;
    return be.module_get_function(m, name, out, layout ? layout : &scratch);
}

} // namespace kvmgpu::test
