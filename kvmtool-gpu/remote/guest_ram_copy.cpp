#include "kvmtool-gpu/remote/guest_ram_copy.h"

#include <cstring>
#include <stdexcept>

namespace kvmgpu::remote {

Landing data_landing(const memmap::GuestMemory& mem) {
    return [&mem](const std::vector<uint8_t>& header, size_t body_bytes) -> uint8_t* {
        WireSpan span{};
        if (!bytes_as(header, &span) || span.bytes != body_bytes) return nullptr;
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
    size_t at = 0;
    for (uint32_t i = 0; i < regions; ++i) {
        WireRegion w{};
        take_struct(body, &at, &w); // the body's size was checked above
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

namespace {
// Large transfers go in pieces: a piece arrives whole (eager, reassembled by
// UCX) before it is copied in place, so pieces keep that copy in cache and
// let it overlap the next piece's transfer.
constexpr uint64_t kPiece = 1ull << 20;
constexpr size_t kWindow = 32;
} // namespace

bool GuestRamCopy::fetch(uint64_t gpa, uint8_t* local, uint64_t bytes) {
    (void)local; // DATA lands at the copy's view of gpa, which is `local`
    return ask_and_land({Span{gpa, bytes}});
}

bool GuestRamCopy::fetch_all(const std::vector<Span>& spans) { return ask_and_land(spans); }

bool GuestRamCopy::ask_and_land(const std::vector<Span>& spans) {
    std::vector<WireSpan> pieces;
    for (const Span& s : spans)
        for (uint64_t at = 0; at < s.bytes; at += kPiece) pieces.push_back(WireSpan{s.gpa + at, std::min(kPiece, s.bytes - at)});
    // At most kWindow pieces asked and not yet landed: the VMM answers back
    // to back, and neither side's inbox grows with the copy's size.
    size_t asked = 0;
    for (size_t landed = 0; landed < pieces.size(); ++landed) {
        for (; asked < pieces.size() && asked < landed + kWindow; ++asked)
            if (!link_.send(kFetch, &pieces[asked], sizeof pieces[asked], nullptr, 0)) return false;
        UcxMessage m;
        if (!link_.receive(kData, &m, Clock::now() + std::chrono::seconds(30))) return false;
        WireSpan got{};
        if (m.refused || !m.landed || !header_as(m, &got)) return false;
        if (got.gpa != pieces[landed].gpa || got.bytes != pieces[landed].bytes) return false;
    }
    return true;
}

bool GuestRamCopy::publish(uint64_t gpa, const uint8_t* local, uint64_t bytes) {
    for (uint64_t at = 0; at < bytes; at += kPiece) {
        const WireSpan piece{gpa + at, std::min(kPiece, bytes - at)};
        if (!link_.send(kData, &piece, sizeof piece, local + at, piece.bytes)) return false;
    }
    return true;
}

} // namespace kvmgpu::remote
