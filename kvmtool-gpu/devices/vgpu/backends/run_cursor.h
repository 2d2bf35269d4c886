// Walks a scatter-gather list of host runs as one byte stream, a chunk at a
// time: what a bounce buffer needs on either side of a copy. Shared by the
// host and CUDA backends.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>

#include "memmap/scatter_gather.h"

namespace kvmgpu::vgpu {

// Sum of the runs' lengths; UINT64_MAX if it would wrap.
inline uint64_t total_bytes(std::span<const memmap::HostRun> runs) {
    uint64_t sum = 0;
    for (const auto& r : runs)
        if (__builtin_add_overflow(sum, r.len, &sum)) return UINT64_MAX;
    return sum;
}

class RunCursor {
public:
    explicit RunCursor(std::span<const memmap::HostRun> runs) : runs_(runs) {}
    bool done() const { return run_ == runs_.size(); }

    // Runs -> buf: copies up to `max` bytes; returns how many.
    uint64_t gather(uint8_t* buf, uint64_t max) { return move<true>(buf, max); }
    // buf -> runs: copies up to `max` bytes; returns how many.
    uint64_t scatter(const uint8_t* buf, uint64_t max) { return move<false>(const_cast<uint8_t*>(buf), max); }

private:
    template <bool kGather>
    uint64_t move(uint8_t* buf, uint64_t max) {
        uint64_t moved = 0;
        while (moved < max && run_ < runs_.size()) {
            const memmap::HostRun& r = runs_[run_];
            const uint64_t n = std::min(max - moved, r.len - in_run_);
            // SAFETY: runs come from memmap::coalesce/translate_each: each
            // [host, host + len) is checked guest RAM.
            if constexpr (kGather)
                std::memcpy(buf + moved, r.host + in_run_, n);
            else
                std::memcpy(r.host + in_run_, buf + moved, n);
            moved += n;
            in_run_ += n;
            if (in_run_ == r.len) ++run_, in_run_ = 0;
        }
        return moved;
    }

    std::span<const memmap::HostRun> runs_;
    size_t run_ = 0;
    uint64_t in_run_ = 0;
};

} // namespace kvmgpu::vgpu
