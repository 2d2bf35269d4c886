#include "kvmtool-gpu/devices/vgpu/poll_window.h"

#include <algorithm>

namespace kvmgpu::vgpu {

void PollWindow::woke_after(uint64_t slept_ns) {
    if (!adaptive_ || cap_ == 0) return;
    if (slept_ns <= std::max(cap_, kSoonNs)) {
        // Soon after: a longer window would have caught it, or come close.
        window_ = window_ == 0 ? std::min(kGrowStartNs, cap_) : std::min(window_ * 2, cap_);
    } else {
        // A long idle: polling was wasted; halve, and stop below the start.
        window_ /= 2;
        if (window_ < std::min(kGrowStartNs, cap_)) window_ = 0;
    }
}

} // namespace kvmgpu::vgpu
