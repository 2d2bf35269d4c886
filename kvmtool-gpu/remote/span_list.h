// Many small spans of guest RAM in one message each way. A scatter-gather
// copy of pageable guest memory names one span per guest page (16,384 for
// 64 MiB on 4 KiB pages): one FETCH and one DATA per span made the message
// overhead, not the network, the copy's limit. FETCH_LIST asks for up to
// kMaxListSpans spans (kMaxListBytes in all) and DATA_LIST carries them:
// its body is the span table, then the spans' bytes in order. Large spans
// still travel alone, in place (DATA's landing).
#pragma once

#include <cstdint>
#include <vector>

#include "kvmtool-gpu/remote/remote_wire.h"
#include "memmap/guest_memory.h"

namespace kvmgpu::remote {

inline constexpr uint32_t kMaxListSpans = 256;
inline constexpr uint64_t kMaxListBytes = 1ull << 20;
// A span this small or smaller goes into a list; a larger one alone.
inline constexpr uint64_t kListSpanMax = 64ull << 10;

// A list's spans from a message: false unless the header and body hold
// 1..kMaxListSpans spans of 1..kListSpanMax bytes, kMaxListBytes in all,
// and (with_bytes, DATA_LIST) exactly their bytes after the table.
bool parse_span_list(const UcxMessage& m, bool with_bytes, std::vector<WireSpan>* spans);

// DATA_LIST's body for `spans`, each read from `mem`: false (body unset)
// when one is not inside one region of it.
bool gather_span_list(const memmap::GuestMemory& mem, const std::vector<WireSpan>& spans, std::vector<uint8_t>* body);

// Lands a parsed DATA_LIST's bytes in `mem`: false, nothing written, when a
// span is not inside one region of it.
bool scatter_span_list(const memmap::GuestMemory& mem, const std::vector<WireSpan>& spans, const std::vector<uint8_t>& body);

} // namespace kvmgpu::remote
