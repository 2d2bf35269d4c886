#include "kvmtool-gpu/devices/vgpu/backends/param_layout.h"

namespace kvmgpu::vgpu {

uint64_t ParamLayout::total_bytes() const {
    return sizes.empty() ? 0 : uint64_t{offsets.back()} + sizes.back();
}

std::string ParamLayout::mismatch(std::span<const uint16_t> supplied) const {
    if (supplied.size() != sizes.size())
        return "launch supplies " + std::to_string(supplied.size()) + " parameters, the kernel takes " +
               std::to_string(sizes.size());
    for (size_t i = 0; i < sizes.size(); ++i)
        if (supplied[i] != sizes[i])
            return "parameter " + std::to_string(i) + " is " + std::to_string(sizes[i]) + " bytes in the kernel, " +
                   std::to_string(supplied[i]) + " in the launch";
    return "";
}

ParamLayout ParamLayout::natural(std::span<const uint16_t> sizes) {
    ParamLayout l;
    uint64_t at = 0;
    for (uint16_t s : sizes) {
        uint64_t align = 1;
        while (align < s && align < 8) align <<= 1;
        at = (at + align - 1) & ~(align - 1);
        l.offsets.push_back(static_cast<uint32_t>(at));
        l.sizes.push_back(s);
        at += s;
    }
    return l;
}

} // namespace kvmgpu::vgpu
