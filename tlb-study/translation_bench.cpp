#include "tlb-study/translation_bench.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <numeric>

#include "memmap/guest_memory.h"
#include "memmap/scatter_gather.h"
#include "kvmtool-gpu/abi/chase_layout.h"
#include "tlb-study/native_chase.h"

namespace tlbstudy {

namespace {

constexpr uint64_t kMiB = 1ull << 20, kGiB = 1ull << 30;

using Clock = std::chrono::steady_clock;
double ns_since(Clock::time_point t0) { return std::chrono::duration<double, std::nano>(Clock::now() - t0).count(); }

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Guest RAM of `total` bytes in `regions` equal regions from GPA 0.
memmap::GuestMemory make_memory(uint64_t total, uint32_t regions) {
    memmap::GuestMemory mem;
    const uint64_t each = total / regions;
    for (uint32_t i = 0; i < regions; ++i)
        mem.add_region(memmap::GuestPhysAddr{i * each}, memmap::Backing::create(PageSize::k4K, each, {}));
    return mem;
}

// `count` frames of `frame` bytes from base, in order or shuffled.
std::vector<memmap::GuestRange> frame_list(uint64_t base, uint64_t count, uint64_t frame, bool shuffle, uint64_t seed) {
    std::vector<uint64_t> idx(count);
    std::iota(idx.begin(), idx.end(), uint64_t{0});
    if (shuffle) {
        ChaseRng rng{seed};
        for (uint64_t i = count - 1; i > 0; --i) std::swap(idx[i], idx[rng.below(i + 1)]);
    }
    std::vector<memmap::GuestRange> out(count);
    for (uint64_t i = 0; i < count; ++i) out[i] = {memmap::GuestPhysAddr{base + idx[i] * frame}, frame};
    return out;
}

} // namespace

std::string SgResult::label() const {
    return std::string(memmap::to_string(guest_pages)) + (shuffled ? " shuffled" : " in order");
}

std::vector<TranslateResult> bench_translate(uint64_t lookups, uint32_t reps, uint64_t seed) {
    std::vector<TranslateResult> out;
    const uint64_t total = 1 * kGiB;
    std::vector<memmap::GuestPhysAddr> gpas(lookups);
    ChaseRng rng{seed};
    for (auto& g : gpas) g.value = rng.below(total / 4096) * 4096;
    for (uint32_t regions : {1u, 8u}) {
        const auto mem = make_memory(total, regions);
        std::vector<double> ns;
        uintptr_t sink = 0;
        for (uint32_t r = 0; r < reps; ++r) {
            const auto t0 = Clock::now();
            for (const auto& g : gpas) {
                const auto span = mem.translate(g, 4096);
                sink += span ? reinterpret_cast<uintptr_t>(span->data()) : 1;
            }
            ns.push_back(ns_since(t0) / double(lookups));
        }
        asm volatile("" : : "r"(sink));
        out.push_back({regions, lookups, median(ns)});
    }
    return out;
}

std::vector<SgResult> bench_sg(const std::vector<uint64_t>& transfers, uint32_t reps, uint64_t seed) {
    std::vector<SgResult> out;
    if (transfers.empty()) return out;
    // coalesce() returns a fresh vector each call (24 bytes per run: 6 MiB
    // for 1 GiB of 4 KiB frames). Keep freed memory in the heap, as a VMM in
    // steady state would have it, so the timings are translation work and
    // not the first-touch page faults of the result vector (~30 us per 4 KiB
    // page on a PVM guest); one unmeasured call per list warms it.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    const uint64_t base = 16 * kMiB; // frames start after the image, as in the guest
    const uint64_t biggest = *std::max_element(transfers.begin(), transfers.end());
    const auto mem = make_memory(round_up(base + biggest, 2 * kMiB), 1);
    struct Shape {
        PageSize pages;
        bool shuffled;
    };
    for (uint64_t transfer : transfers) {
        for (Shape s : {Shape{PageSize::k4K, true}, Shape{PageSize::k2M, true}, Shape{PageSize::k4K, false}}) {
            const uint64_t frame = memmap::bytes(s.pages);
            if (transfer % frame != 0) continue;
            const auto list = frame_list(base, transfer / frame, frame, s.shuffled, seed);
            SgResult r;
            r.guest_pages = s.pages;
            r.shuffled = s.shuffled;
            r.transfer = transfer;
            r.entries = list.size();
            std::vector<double> c, t;
            (void)memmap::coalesce(mem, list);
            (void)memmap::translate_each(mem, list);
            for (uint32_t i = 0; i < reps; ++i) {
                memmap::SgStats st;
                auto t0 = Clock::now();
                const auto runs = memmap::coalesce(mem, list, &st);
                c.push_back(ns_since(t0));
                r.runs = runs ? runs->size() : 0;
                t0 = Clock::now();
                const auto each = memmap::translate_each(mem, list);
                t.push_back(ns_since(t0));
                if (!runs || !each) r.runs = 0; // cannot happen: every range lies in RAM
            }
            r.coalesce_ns = median(c);
            r.translate_each_ns = median(t);
            out.push_back(r);
        }
    }
    return out;
}

BackingResult bench_backing(PageSize pages, uint64_t bytes, uint32_t reps) {
    BackingResult r;
    r.pages = pages;
    r.bytes = round_up(bytes, memmap::bytes(pages));
    std::vector<double> create, prefault, touch;
    try {
        for (uint32_t i = 0; i < reps; ++i) {
            {
                auto b = memmap::Backing::create(pages, r.bytes, {});
                r.source = std::string(memmap::to_string(b->source()));
                create.push_back(b->create_ns() / 1e6);
                prefault.push_back(b->prefault() / 1e6);
            }
            auto b = memmap::Backing::create(pages, r.bytes, {});
            uint8_t* p = b->data();
            const auto t0 = Clock::now();
            // SAFETY: off < r.bytes, the mapping's size.
            for (uint64_t off = 0; off < r.bytes; off += 4096) static_cast<volatile uint8_t*>(p)[off] = 1;
            touch.push_back(ns_since(t0) / 1e6);
        }
    } catch (const std::exception& e) {
        r.error = e.what();
        return r;
    }
    r.create_ms = median(create);
    r.prefault_ms = median(prefault);
    r.touch_ms = median(touch);
    return r;
}

} // namespace tlbstudy
