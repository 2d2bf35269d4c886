#include "kvmtool-gpu/devices/vgpu/backends/param_layout.h"

#include <algorithm>
#include <utility>

namespace kvmgpu::vgpu {

uint64_t ParamLayout::total_bytes() const {
    uint64_t end = 0;
    for (size_t i = 0; i < sizes.size() && i < offsets.size(); ++i) end = std::max(end, uint64_t{offsets[i]} + sizes[i]);
    return end;
}

std::string ParamLayout::malformed() const {
    if (offsets.size() != sizes.size())
        return std::to_string(offsets.size()) + " offsets for " + std::to_string(sizes.size()) + " sizes";
    std::vector<std::pair<uint64_t, uint64_t>> spans; // [offset, end), sorted below
    for (size_t i = 0; i < sizes.size(); ++i) spans.emplace_back(offsets[i], uint64_t{offsets[i]} + sizes[i]);
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i)
        if (spans[i].first < spans[i - 1].second)
            return "parameters at offsets " + std::to_string(spans[i - 1].first) + " and " + std::to_string(spans[i].first) +
                   " overlap";
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
