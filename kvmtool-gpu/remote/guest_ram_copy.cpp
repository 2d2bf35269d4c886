#include "kvmtool-gpu/remote/guest_ram_copy.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kvmtool-gpu/remote/span_list.h"

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
    // Requests in order: a large span's pieces alone (DATA lands in place),
    // small spans together in lists (DATA_LIST, scattered here).
    struct Request {
        WireSpan piece{};           // when `list` is empty
        std::vector<WireSpan> list; // else
    };
    std::vector<Request> requests;
    uint64_t list_bytes = 0;
    for (const Span& s : spans) {
        if (s.bytes == 0) continue;
        if (s.bytes > kListSpanMax) {
            for (uint64_t at = 0; at < s.bytes; at += kPiece)
                requests.push_back(Request{WireSpan{s.gpa + at, std::min(kPiece, s.bytes - at)}, {}});
            continue;
        }
        if (requests.empty() || requests.back().list.empty() || requests.back().list.size() == kMaxListSpans ||
            list_bytes + s.bytes > kMaxListBytes) {
            requests.push_back(Request{});
            list_bytes = 0;
        }
        requests.back().list.push_back(WireSpan{s.gpa, s.bytes});
        list_bytes += s.bytes;
    }
    // One request's answer, checked against what was asked, in place.
    auto land = [this](const Request& r) {
        UcxMessage m;
        const auto deadline = Clock::now() + std::chrono::seconds(30);
        if (r.list.empty()) {
            WireSpan got{};
            return link_.receive(kData, &m, deadline) && !m.refused && m.landed && header_as(m, &got) && got == r.piece;
        }
        std::vector<WireSpan> got;
        return link_.receive(kDataList, &m, deadline) && parse_span_list(m, true, &got) && got == r.list &&
               scatter_span_list(mem_, got, m.body);
    };
    // At most kWindow requests asked and not yet landed: the VMM answers back
    // to back, and neither side's inbox grows with the copy's size.
    size_t asked = 0;
    for (size_t landed = 0; landed < requests.size(); ++landed) {
        for (; asked < requests.size() && asked < landed + kWindow; ++asked) {
            const Request& r = requests[asked];
            const bool sent = r.list.empty()
                                  ? link_.send(kFetch, &r.piece, sizeof r.piece, nullptr, 0)
                                  : [&] {
                                        const WireSpanList head{static_cast<uint32_t>(r.list.size()), 0};
                                        return link_.send(kFetchList, &head, sizeof head, r.list.data(),
                                                          r.list.size() * sizeof(WireSpan));
                                    }();
            if (!sent) return false;
        }
        if (!land(requests[landed])) {
            // The answers already asked for still come: taken and dropped
            // here, so that a later command does not take them for its own.
            for (size_t k = landed + 1; k < asked && !link_.peer_lost(); ++k) {
                UcxMessage stale;
                link_.receive(requests[k].list.empty() ? kData : kDataList, &stale, Clock::now() + std::chrono::seconds(5));
            }
            return false;
        }
    }
    return true;
}

bool GuestRamCopy::publish(uint64_t gpa, const uint8_t* local, uint64_t bytes) {
    if (bytes == 0) return true;
    if (bytes <= kListSpanMax) {
        // Small spans wait in a list, sent when full and at flush().
        if (pending_.size() == kMaxListSpans || pending_bytes_ + bytes > kMaxListBytes)
            if (!send_pending()) return false;
        pending_.push_back(WireSpan{gpa, bytes});
        pending_body_.insert(pending_body_.end(), local, local + bytes);
        pending_bytes_ += bytes;
        return true;
    }
    if (!send_pending()) return false; // the VMM lands DATA in the order it was written
    for (uint64_t at = 0; at < bytes; at += kPiece) {
        const WireSpan piece{gpa + at, std::min(kPiece, bytes - at)};
        if (!link_.send(kData, &piece, sizeof piece, local + at, piece.bytes)) return false;
    }
    return true;
}

bool GuestRamCopy::send_pending() {
    if (pending_.empty()) return true;
    const WireSpanList head{static_cast<uint32_t>(pending_.size()), 0};
    std::vector<uint8_t> body(pending_.size() * sizeof(WireSpan));
    std::memcpy(body.data(), pending_.data(), body.size());
    body.insert(body.end(), pending_body_.begin(), pending_body_.end());
    pending_.clear();
    pending_body_.clear();
    pending_bytes_ = 0;
    return link_.send(kDataList, &head, sizeof head, body.data(), body.size());
}

bool GuestRamCopy::flush() { return send_pending() && !link_.peer_lost(); }

} // namespace kvmgpu::remote
