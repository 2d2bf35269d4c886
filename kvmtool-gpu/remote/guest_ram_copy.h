// A GPU server's copy of one remote VM's RAM: the same regions at the same
// guest-physical bases, backed here by 4 KiB shared-memory pages that exist
// only once a command has touched them, and the transfers that fill and
// drain it (guest_ram_remote.h): FETCH asks the VMM for a span and its DATA
// lands in the copy; what a command wrote goes back as DATA; small spans go
// many to a message (FETCH_LIST, DATA_LIST: span_list.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/guest_ram_remote.h"
#include "kvmtool-gpu/remote/remote_wire.h"
#include "kvmtool-gpu/remote/ucx_link.h"
#include "memmap/guest_memory.h"

namespace kvmgpu::remote {

// DATA's landing in a view of guest RAM: the span its header names, if it
// lies in one region of `mem` and the body has its size; else refused.
Landing data_landing(const memmap::GuestMemory& mem);

class GuestRamCopy final : public vgpu::GuestRamRemote {
public:
    // From a PROOF message's body (the VMM's region table): nullptr with
    // *why when it is malformed, names overlapping or unaligned regions, or
    // more than `max_bytes` in all.
    static std::unique_ptr<GuestRamCopy> create(UcxLink& link, uint32_t regions, const std::vector<uint8_t>& body,
                                                uint64_t max_bytes, std::string* why);
    const memmap::GuestMemory& memory() const { return mem_; }

    bool fetch(uint64_t gpa, uint8_t* local, uint64_t bytes) override;
    bool fetch_all(const std::vector<Span>& spans) override;
    bool publish(uint64_t gpa, const uint8_t* local, uint64_t bytes) override;
    // Sends the small spans publish() held back. DATA follows its command's
    // earlier DATA and comes before its result on one connection: nothing
    // to wait for.
    bool flush() override;

private:
    explicit GuestRamCopy(UcxLink& link) : link_(link) {}
    // The spans' FETCHes (in pieces), a window of them ahead of the DATA
    // landing in order: about one round trip, the VMM answering back to back.
    bool ask_and_land(const std::vector<Span>& spans);
    // publish()'s small spans not yet sent, as one DATA_LIST.
    bool send_pending();

    UcxLink& link_;
    memmap::GuestMemory mem_;
    std::vector<WireSpan> pending_;
    std::vector<uint8_t> pending_body_;
    uint64_t pending_bytes_ = 0;
};

} // namespace kvmgpu::remote
