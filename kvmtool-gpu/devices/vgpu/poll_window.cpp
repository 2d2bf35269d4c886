#include "kvmtool-gpu/devices/vgpu/poll_window.h"

#include <algorithm>

namespace kvmgpu::vgpu {

void PollWindow::woke_after(uint64_t slept_ns) {
    if (!adaptive_ || cap_ == 0) return;
    if (slept_ns <= std::max(cap_, kSoonNs)) {
        // Soon after: a window a quarter longer than this gap catches the next.
        const uint64_t gap = window_ + slept_ns;
        const uint64_t doubled = window_ == 0 ? kGrowStartNs : window_ * 2;
        window_ = std::min(std::max(doubled, gap + gap / 4), cap_);
    } else {
        // A long idle: polling was wasted; halve, and stop below the start.
        window_ /= 2;
        if (window_ < std::min(kGrowStartNs, cap_)) window_ = 0;
    }
}

} // namespace kvmgpu::vgpu
