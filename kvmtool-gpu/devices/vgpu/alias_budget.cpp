#include "kvmtool-gpu/devices/vgpu/alias_budget.h"

#include <algorithm>
#include <fstream>
#include <string>

namespace kvmgpu::vgpu {

namespace {
uint64_t max_map_count() {
    std::ifstream f("/proc/sys/vm/max_map_count");
    uint64_t n = 0;
    return f >> n && n > 0 ? n : 65530;
}

uint64_t mappings_in_use() {
    std::ifstream f("/proc/self/maps");
    uint64_t n = 0;
    for (std::string line; std::getline(f, line);) ++n;
    return n;
}
} // namespace

AliasBudget& AliasBudget::process() {
    static AliasBudget budget([] {
        const uint64_t limit = max_map_count(), used = mappings_in_use() + kHeadroom;
        return limit > used ? limit - used : 0;
    }());
    return budget;
}

void AliasBudget::set_vms_sharing(uint64_t vms) {
    std::lock_guard lock(mu_);
    vms_ = std::max<uint64_t>(vms, 1);
}

void AliasBudget::serve_one_vm() {
    std::lock_guard lock(mu_);
    vms_ = 1;
    reserved_ = 0;
}

uint64_t AliasBudget::reserve(uint64_t want) {
    std::lock_guard lock(mu_);
    const uint64_t grant = std::min({want, capacity_ / vms_, capacity_ - reserved_});
    reserved_ += grant;
    return grant;
}

void AliasBudget::release(uint64_t granted) {
    std::lock_guard lock(mu_);
    reserved_ -= std::min(granted, reserved_);
}

uint64_t AliasBudget::left() const {
    std::lock_guard lock(mu_);
    return capacity_ - reserved_;
}

} // namespace kvmgpu::vgpu
