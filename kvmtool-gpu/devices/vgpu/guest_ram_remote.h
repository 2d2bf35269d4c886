// Guest RAM that is not this process's: a GPU server holds a copy of the
// VM's RAM regions (same guest-physical layout, its own pages) and the
// dispatch brings in the bytes a command reads before it runs and sends
// back the bytes it wrote before the command completes. Without one, the
// dispatch works on the VM's RAM itself.
//
// What cannot be brought over per command is refused: device addresses for
// guest RAM (zero-copy, registered guest buffers), copy nodes of graphs that
// name guest RAM (replayed at every launch) and the device walk of
// scatter-gather lists (the GPU reads guest RAM itself).
#pragma once

#include <cstdint>
#include <vector>

namespace kvmgpu::vgpu {

class GuestRamRemote {
public:
    virtual ~GuestRamRemote() = default;
    // [gpa, gpa+bytes) of the VM into `local` (this copy's view of it);
    // false when the VM is out of reach.
    virtual bool fetch(uint64_t gpa, uint8_t* local, uint64_t bytes) = 0;
    // Several spans at once (a scatter-gather list's runs): one wait for all.
    struct Span {
        uint64_t gpa, bytes;
    };
    virtual bool fetch_all(const std::vector<Span>& spans) = 0;
    // `local`'s bytes back to the VM's [gpa, gpa+bytes), and flush():
    // all of them landed.
    virtual bool publish(uint64_t gpa, const uint8_t* local, uint64_t bytes) = 0;
    virtual bool flush() = 0;
};

} // namespace kvmgpu::vgpu
