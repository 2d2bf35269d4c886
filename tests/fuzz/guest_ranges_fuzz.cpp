// libFuzzer target (KVMGPU_FUZZ=ON, clang): the checks that decide what a
// guest may touch, each against a naive model written with 128-bit
// arithmetic, so wrap-around and off-by-one mistakes show as a mismatch:
//   memmap::GuestMemory::translate   guest-physical span -> host span
//   memmap::coalesce / translate_each   scatter-gather lists -> host runs
//   vgpu::AllocationTable            is [dptr, dptr+n) this VM's? quota, count
//   vgpu::HandleTable                issued, stale, forged and foreign handles
// The input picks a RAM layout (1-4 regions, anywhere in the 64-bit space,
// up to its very top) and then a sequence of queries. Any disagreement with
// the model calls __builtin_trap().
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/allocation_table.h"
#include "kvmtool-gpu/devices/vgpu/handle_table.h"
#include "memmap/guest_memory.h"
#include "tests/fuzz/fuzz_input.h"
#include "memmap/scatter_gather.h"

namespace {

using u128 = unsigned __int128;
namespace vgpu = kvmgpu::vgpu;

[[noreturn]] void mismatch(const char* what) {
    std::fprintf(stderr, "guest_ranges_fuzz: MISMATCH: %s\n", what);
    __builtin_trap();
}

using kvmgpu::fuzz::Input;

struct Layout {
    memmap::GuestMemory mem;
    struct R {
        uint64_t base, size;
        uint8_t* host;
    };
    std::vector<R> regions;

    // The model: the one region holding all of [gpa, gpa + len), if any.
    std::optional<uint8_t*> model_translate(uint64_t gpa, uint64_t len) const {
        if (len == 0) return std::nullopt;
        for (const R& r : regions)
            if (gpa >= r.base && u128{gpa} + len <= u128{r.base} + r.size) return r.host + (gpa - r.base);
        return std::nullopt;
    }
};

// Addresses near the interesting places: region edges, 0, 2^64.
uint64_t address(Input& in, const Layout& l) {
    const uint8_t sel = in.get<uint8_t>();
    const int64_t delta = in.get<int8_t>();
    if (sel % 4 == 0 || l.regions.empty()) return in.get<uint64_t>();
    const auto& r = l.regions[(sel / 4) % l.regions.size()];
    switch (sel % 4) {
    case 1: return r.base + static_cast<uint64_t>(delta);
    case 2: return r.base + r.size + static_cast<uint64_t>(delta);
    default: return r.base + in.get<uint16_t>() % (r.size + 1);
    }
}
uint64_t length(Input& in) {
    const uint8_t sel = in.get<uint8_t>();
    switch (sel % 4) {
    case 0: return in.get<uint64_t>();
    case 1: return 0 - uint64_t{in.get<uint16_t>()}; // near 2^64
    default: return in.get<uint16_t>();
    }
}

void check_translate(Input& in, const Layout& l) {
    const uint64_t gpa = address(in, l), len = length(in);
    const auto got = l.mem.translate(memmap::GuestPhysAddr{gpa}, len);
    const auto want = l.model_translate(gpa, len);
    if (got.has_value() != want.has_value()) mismatch("translate: accepted vs refused");
    if (got && (got->data() != *want || got->size() != len)) mismatch("translate: wrong host span");
}

void check_sg(Input& in, const Layout& l) {
    const size_t n = in.get<uint8_t>() % 24;
    std::vector<memmap::GuestRange> list;
    bool valid = true;
    u128 total = 0;
    std::vector<std::pair<uint8_t*, uint64_t>> pieces; // the model's bytes, in order
    for (size_t i = 0; i < n; ++i) {
        // Mostly consecutive entries, so merging is exercised.
        uint64_t gpa = (!list.empty() && in.get<uint8_t>() % 2) ? list.back().gpa.value + list.back().len : address(in, l);
        const uint64_t len = length(in);
        list.push_back({memmap::GuestPhysAddr{gpa}, len});
        const auto host = l.model_translate(gpa, len);
        if (!host) valid = false;
        else pieces.emplace_back(*host, len);
        total += len;
    }
    if (total > UINT64_MAX) valid = false;
    for (bool merge : {false, true}) {
        memmap::SgStats st;
        const auto runs = merge ? memmap::coalesce(l.mem, list, &st) : memmap::translate_each(l.mem, list, &st);
        if (runs.has_value() != valid) mismatch("sg: accepted vs refused");
        if (!runs) {
            if (st.entries || st.runs || st.total_bytes) mismatch("sg: stats not zeroed on failure");
            continue;
        }
        if (st.total_bytes != static_cast<uint64_t>(total) || st.entries != n || st.runs != runs->size())
            mismatch("sg: stats");
        if (!merge && runs->size() != n) mismatch("translate_each merged");
        // The runs, walked byte range by byte range, are the model's pieces.
        size_t p = 0;
        uint64_t in_piece = 0;
        for (const auto& r : *runs) {
            if (r.len == 0) mismatch("sg: empty run");
            uint64_t done = 0;
            while (done < r.len) {
                if (p == pieces.size()) mismatch("sg: runs longer than the list");
                const uint64_t left = pieces[p].second - in_piece;
                const uint64_t take = std::min(left, r.len - done);
                if (r.host + done != pieces[p].first + in_piece) mismatch("sg: run does not cover the entry's bytes");
                done += take, in_piece += take;
                if (in_piece == pieces[p].second) ++p, in_piece = 0;
            }
        }
        if (p != pieces.size()) mismatch("sg: runs shorter than the list");
    }
}

void check_allocations(Input& in) {
    const uint64_t quota = in.get<uint32_t>();
    const uint32_t max_count = 1 + in.get<uint8_t>() % 16;
    vgpu::AllocationTable t(quota, max_count);
    std::map<uint64_t, uint64_t> model;
    std::vector<std::pair<uint64_t, uint64_t>> windows;
    for (int i = in.get<uint8_t>() % 3; i > 0; --i) windows.emplace_back(in.get<uint64_t>(), in.get<uint32_t>());
    t.set_windows(windows);
    uint64_t used = 0;
    auto pick = [&](Input& in) -> uint64_t {
        const uint8_t sel = in.get<uint8_t>();
        if (sel % 3 == 0 && !model.empty()) {
            auto it = model.begin();
            std::advance(it, (sel / 3) % model.size());
            return it->first + static_cast<uint64_t>(in.get<int8_t>());
        }
        return sel % 3 == 1 ? 0 - uint64_t{in.get<uint8_t>()} : in.get<uint32_t>();
    };
    for (int ops = 0; ops < 32 && !in.empty(); ++ops) {
        const uint8_t op = in.get<uint8_t>() % 4;
        const uint64_t dptr = pick(in);
        const uint64_t n = in.get<uint8_t>() % 4 ? in.get<uint16_t>() : length(in);
        if (op == 0) {
            bool want = n != 0 && u128{dptr} + n <= UINT64_MAX && model.size() < max_count && n <= quota - used;
            for (auto& [b, s] : model)
                if (u128{dptr} < u128{b} + s && u128{b} < u128{dptr} + n) want = false;
            if (t.insert(dptr, n) != want) mismatch("allocation insert");
            if (want) model[dptr] = n, used += n;
        } else if (op == 1) {
            auto it = model.find(dptr);
            const uint64_t want = it == model.end() ? 0 : it->second;
            if (t.erase(dptr) != want) mismatch("allocation erase");
            if (it != model.end()) used -= it->second, model.erase(it);
        } else {
            auto inside = [&](uint64_t b, uint64_t s) {
                return dptr >= b && u128{dptr} < u128{b} + s && u128{dptr} + n <= u128{b} + s;
            };
            bool in_alloc = false, in_window = false;
            for (auto& [b, s] : model) in_alloc |= inside(b, s);
            for (auto& [b, s] : windows) in_window |= inside(b, s);
            if (t.in_allocation(dptr, n) != in_alloc) mismatch("in_allocation");
            if (t.contains(dptr, n) != (in_alloc || in_window)) mismatch("contains");
        }
        if (t.used() != used || t.count() != model.size()) mismatch("allocation accounting");
        if (t.can_reserve(1) != (model.size() < max_count && used < quota)) mismatch("can_reserve");
    }
}

void check_handles(Input& in) {
    const uint32_t cap = 1 + in.get<uint8_t>() % 8;
    vgpu::HandleTable<int> t(vgpu::HandleKind::Stream, cap, in.get<uint32_t>());
    vgpu::HandleTable<int> other(vgpu::HandleKind::Event, cap, 0); // another table, full
    for (uint32_t i = 0; i < cap; ++i) other.insert(-1);
    std::map<uint64_t, int> live;
    std::vector<uint64_t> ever;
    int next = 1;
    for (int ops = 0; ops < 48 && !in.empty(); ++ops) {
        const uint8_t op = in.get<uint8_t>();
        uint64_t h = ever.empty() ? in.get<uint64_t>() : ever[in.get<uint8_t>() % ever.size()];
        if (op & 0x80) h ^= uint64_t{1} << (in.get<uint8_t>() % 64); // forged from a real one
        switch (op % 4) {
        case 0: {
            const auto got = t.insert(next);
            if (got.has_value() != (live.size() < cap)) mismatch("handle insert vs capacity");
            if (got) {
                if (*got == 0 || std::find(ever.begin(), ever.end(), *got) != ever.end())
                    mismatch("handle 0, or a handle issued before (live or freed) issued again");
                if (other.find(*got)) mismatch("another table accepts the handle");
                live[*got] = next++;
                ever.push_back(*got);
            }
            break;
        }
        case 1: {
            const auto got = t.erase(h);
            auto it = live.find(h);
            if (got.has_value() != (it != live.end()) || (got && *got != it->second)) mismatch("handle erase");
            if (it != live.end()) live.erase(it);
            break;
        }
        case 2: t.clear(), live.clear(); break;
        default: {
            const int* got = t.find(h);
            auto it = live.find(h);
            if ((got != nullptr) != (it != live.end()) || (got && *got != it->second)) mismatch("handle find");
        }
        }
        if (t.size() != live.size()) mismatch("handle count");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Input in(data, size);
    Layout l;
    const int nregions = 1 + in.get<uint8_t>() % 4;
    for (int i = 0; i < nregions; ++i) {
        const uint8_t where = in.get<uint8_t>();
        const uint64_t pages = 1 + in.get<uint8_t>() % 8;
        // Low addresses, or the top of the 64-bit space (a region may end
        // exactly at 2^64 - 4096 but never reach 2^64).
        const uint64_t base = where & 1 ? (0 - (uint64_t{in.get<uint8_t>()} + 1) * 4096) : uint64_t{in.get<uint16_t>()} * 4096;
        try {
            l.mem.add_region(memmap::GuestPhysAddr{base}, memmap::Backing::create(memmap::PageSize::k4K, pages * 4096));
        } catch (const std::invalid_argument&) {
            continue; // overlap or reaching 2^64: refused at set-up, as it should be
        }
    }
    for (const auto& r : l.mem.regions()) l.regions.push_back({r.base.value, r.size(), r.backing->data()});
    // add_region must keep 2^64 out of every region.
    for (const auto& r : l.regions)
        if (u128{r.base} + r.size > UINT64_MAX) mismatch("a region reaches 2^64");
    for (int q = 0; q < 64 && !in.empty(); ++q) {
        switch (in.get<uint8_t>() % 8) {
        case 0: case 1: case 2: check_translate(in, l); break;
        case 3: case 4: check_sg(in, l); break;
        case 5: check_allocations(in); break;
        case 6: check_handles(in); break;
        default: {
            // read/write agree with translate.
            const uint64_t gpa = address(in, l);
            const uint64_t len = in.get<uint8_t>() % 64;
            uint8_t buf[64] = {};
            const bool want = l.model_translate(gpa, len).has_value();
            if (l.mem.read(memmap::GuestPhysAddr{gpa}, buf, len) != want) mismatch("read");
            if (l.mem.write(memmap::GuestPhysAddr{gpa}, buf, len) != want) mismatch("write");
        }
        }
    }
    return 0;
}
