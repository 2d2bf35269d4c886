#include "kvmtool-gpu/remote/guest_ram_copy.h"

#include <cstring>
#include <stdexcept>

namespace kvmgpu::remote {

Landing data_landing(const memmap::GuestMemory& mem) {
    return [&mem](const std::vector<uint8_t>& header, size_t body_bytes) -> uint8_t* {
        WireSpan span{};
        if (header.size() != sizeof span) return nullptr;
        std::memcpy(&span, header.data(), sizeof span);
        if (span.bytes != body_bytes) return nullptr;
        auto view = mem.translate(memmap::GuestPhysAddr{span.gpa}, span.bytes);
        return view ? view->data() : nullptr;
    };
}

std::unique_ptr<GuestRamCopy> GuestRamCopy::create(UcxLink& link, uint32_t regions, const std::vector<uint8_t>& body,
                                                   uint64_t max_bytes, std::string* why) {
    if (regions == 0 || regions > kMaxRemoteRegions || body.size() != uint64_t{regions} * sizeof(WireRegion)) {
        *why = "region table malformed";
        return nullptr;
    }
    std::unique_ptr<GuestRamCopy> copy(new GuestRamCopy(link));
    uint64_t total = 0;
    for (uint32_t i = 0; i < regions; ++i) {
        WireRegion w;
        std::memcpy(&w, body.data() + i * sizeof w, sizeof w);
        const uint64_t page = bytes(memmap::PageSize::k4K);
        if (w.bytes == 0 || w.bytes % page != 0 || w.gpa % page != 0) {
            *why = "region " + std::to_string(i) + " malformed";
            return nullptr;
        }
        if (__builtin_add_overflow(total, w.bytes, &total) || total > max_bytes) {
            *why = "guest RAM larger than this server takes (--max-guest-ram)";
            return nullptr;
        }
        try {
            copy->mem_.add_region(memmap::GuestPhysAddr{w.gpa}, memmap::Backing::create(memmap::PageSize::k4K, w.bytes));
        } catch (const std::exception& e) {
            *why = std::string("region ") + std::to_string(i) + ": " + e.what();
            return nullptr;
        }
    }
    link.set_landing(kData, data_landing(copy->mem_));
    return copy;
}

bool GuestRamCopy::fetch(uint64_t gpa, uint8_t* local, uint64_t bytes) {
    (void)local; // DATA lands at the copy's view of gpa, which is `local`
    const WireSpan span{gpa, bytes};
    if (!link_.send(kFetch, &span, sizeof span, nullptr, 0)) return false;
    UcxMessage m;
    if (!link_.receive(kData, &m, std::chrono::steady_clock::now() + std::chrono::seconds(30))) return false;
    WireSpan got{};
    if (m.refused || !m.landed || m.header.size() != sizeof got) return false;
    std::memcpy(&got, m.header.data(), sizeof got);
    return got.gpa == gpa && got.bytes == bytes;
}

bool GuestRamCopy::publish(uint64_t gpa, const uint8_t* local, uint64_t bytes) {
    const WireSpan span{gpa, bytes};
    return link_.send(kData, &span, sizeof span, local, bytes);
}

} // namespace kvmgpu::remote
