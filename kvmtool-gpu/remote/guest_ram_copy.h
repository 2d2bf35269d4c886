// A GPU server's copy of one remote VM's RAM: the same regions at the same
// guest-physical bases, backed here by 4 KiB shared-memory pages that exist
// only once a command has touched them, and the transfers that fill and
// drain it (RMA on the VMM's registered regions, guest_ram_remote.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/guest_ram_remote.h"
#include "kvmtool-gpu/remote/remote_wire.h"
#include "kvmtool-gpu/remote/ucx_link.h"
#include "memmap/guest_memory.h"

namespace kvmgpu::remote {

class GuestRamCopy final : public vgpu::GuestRamRemote {
public:
    // From a PROOF message's body (the VMM's region table and remote keys):
    // nullptr with *why when it is malformed, names overlapping or unaligned
    // regions, or more than `max_bytes` in all.
    static std::unique_ptr<GuestRamCopy> create(UcxLink& link, uint32_t regions, const std::vector<uint8_t>& body,
                                                uint64_t max_bytes, std::string* why);
    const memmap::GuestMemory& memory() const { return mem_; }

    bool fetch(uint64_t gpa, uint8_t* local, uint64_t bytes) override;
    bool publish(uint64_t gpa, const uint8_t* local, uint64_t bytes) override;
    bool flush() override;

private:
    struct Remote {
        uint64_t gpa, bytes, address;
        std::unique_ptr<UcxLink::RemoteKey, void (*)(UcxLink::RemoteKey*)> key;
    };
    explicit GuestRamCopy(UcxLink& link) : link_(link) {}
    const Remote* find(uint64_t gpa, uint64_t bytes) const;

    UcxLink& link_;
    memmap::GuestMemory mem_;
    std::vector<Remote> remote_;
};

} // namespace kvmgpu::remote
