// Guest RAM registered with the device as commands first reach it, not all
// at start: registering pins (and first faults in and zeroes) every page,
// 155 ms per GiB on the H100 with 2 MiB pages, which a program that touches
// a few MiB of a 4 GiB VM would otherwise wait for on its first CUDA call.
//
// A region is added whole; prepare() registers what of a range is not yet,
// rounded out to kGranule and clipped to the region, as one registration per
// gap. Registrations are never merged (the driver cannot), so a copy
// engine transfer that spans two of them would be staged as pageable
// memory: for_each_piece() cuts a range where registrations meet.
// Backend-independent: the registering itself is the caller's function.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "kvmtool-gpu/abi/vgpu_abi.h"

namespace kvmgpu::vgpu {

class LazyRegistration {
public:
    using Status = vgpu_status;
    static constexpr uint64_t kGranule = 2ull << 20;
    using RegisterFn = std::function<Status(uint8_t* host, uint64_t bytes)>;
    struct Piece {
        uint8_t* host;
        uint64_t bytes;
    };

    void add_region(uint8_t* host, uint64_t bytes) { regions_.push_back(Region{host, bytes, {}}); }
    bool is_region(const void* host) const;
    // Registers, through fn, what of [host, host + bytes) is not yet. A range
    // that is not inside one region is left alone (SUCCESS): it is not guest
    // RAM of this object's, or spans two regions, which no copy does.
    Status prepare(const void* host, uint64_t bytes, const RegisterFn& fn);
    Status prepare_all(const RegisterFn& fn);
    // As prepare, but all of the range then lies in ONE registration (what a
    // graph's copy node needs: the driver refuses host memory that spans
    // two). Registrations that meet the rounded-out range are undone
    // through `drop` (whose caller has let the device finish with them) and
    // one is made over them and the gaps between.
    Status prepare_as_one(const void* host, uint64_t bytes, const RegisterFn& fn, const RegisterFn& drop);
    // f(offset, length) for each piece of [host, host + bytes) that lies in
    // one registration (or, where nothing is registered, up to the next one).
    template <class F>
    void for_each_piece(const void* host, uint64_t bytes, F&& f) const;
    // The length of the piece that starts at `host`, at most `left` (and at
    // most to its region's end); `left` outside every region.
    uint64_t piece_bytes(const void* host, uint64_t left) const;

    std::vector<Piece> registrations() const;
    // The regions stay; what was registered is forgotten (a lost context).
    void forget_registrations();
    uint64_t registered_bytes() const { return registered_bytes_; }

private:
    struct Region {
        uint8_t* host;
        uint64_t bytes;
        std::map<uint64_t, uint64_t> done; // offset in the region -> length registered there
    };
    // The region holding all of [p, p + bytes), or -1.
    int region_index(const uint8_t* p, uint64_t bytes) const;
    Status fill(Region& r, uint64_t lo, uint64_t hi, const RegisterFn& fn);
    // Length of the piece starting at offset `at` of r, at most `left`.
    static uint64_t piece_at(const Region& r, uint64_t at, uint64_t left);

    std::vector<Region> regions_; // a VM has a handful of RAM regions: a scan is cheapest
    uint64_t registered_bytes_ = 0;
};

template <class F>
void LazyRegistration::for_each_piece(const void* host, uint64_t bytes, F&& f) const {
    const auto* p = static_cast<const uint8_t*>(host);
    const int i = region_index(p, bytes);
    if (i < 0) {
        if (bytes) f(uint64_t{0}, bytes);
        return;
    }
    const Region& r = regions_[static_cast<size_t>(i)];
    const uint64_t start = static_cast<uint64_t>(p - r.host);
    for (uint64_t off = 0; off < bytes;) {
        const uint64_t len = piece_at(r, start + off, bytes - off);
        f(off, len);
        off += len;
    }
}

} // namespace kvmgpu::vgpu
