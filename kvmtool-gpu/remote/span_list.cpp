#include "kvmtool-gpu/remote/span_list.h"

#include <cstring>

namespace kvmgpu::remote {

bool parse_span_list(const UcxMessage& m, bool with_bytes, std::vector<WireSpan>* spans) {
    WireSpanList head{};
    if (!header_as(m, &head) || head.count == 0 || head.count > kMaxListSpans) return false;
    const size_t table = size_t{head.count} * sizeof(WireSpan);
    if (m.body.size() < table) return false;
    spans->resize(head.count);
    std::memcpy(spans->data(), m.body.data(), table);
    uint64_t total = 0;
    for (const WireSpan& s : *spans) {
        if (s.bytes == 0 || s.bytes > kListSpanMax) return false;
        total += s.bytes; // at most kMaxListSpans * kListSpanMax: no overflow
    }
    if (total > kMaxListBytes) return false;
    return m.body.size() == table + (with_bytes ? total : 0);
}

bool gather_span_list(const memmap::GuestMemory& mem, const std::vector<WireSpan>& spans, std::vector<uint8_t>* body) {
    uint64_t total = 0;
    for (const WireSpan& s : spans) total += s.bytes;
    const size_t table = spans.size() * sizeof(WireSpan);
    body->resize(table + total);
    std::memcpy(body->data(), spans.data(), table);
    uint8_t* at = body->data() + table;
    for (const WireSpan& s : spans) {
        auto view = mem.translate(memmap::GuestPhysAddr{s.gpa}, s.bytes);
        if (!view) {
            body->clear();
            return false;
        }
        std::memcpy(at, view->data(), s.bytes);
        at += s.bytes;
    }
    return true;
}

bool scatter_span_list(const memmap::GuestMemory& mem, const std::vector<WireSpan>& spans, const std::vector<uint8_t>& body) {
    // Every span checked before any byte lands: a bad list writes nothing.
    std::vector<uint8_t*> places;
    places.reserve(spans.size());
    for (const WireSpan& s : spans) {
        auto view = mem.translate(memmap::GuestPhysAddr{s.gpa}, s.bytes);
        if (!view) return false;
        places.push_back(view->data());
    }
    const uint8_t* from = body.data() + spans.size() * sizeof(WireSpan);
    for (size_t i = 0; i < spans.size(); ++i) {
        std::memcpy(places[i], from, spans[i].bytes);
        from += spans[i].bytes;
    }
    return true;
}

} // namespace kvmgpu::remote
