#include "tlb-study/sweep_plan.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>

#include "memmap/huge_page_pool.h"

namespace tlbstudy {

namespace {

constexpr uint64_t kKiB = 1ull << 10, kMiB = 1ull << 20, kGiB = 1ull << 30;

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

std::string human_page(PageSize p) {
    switch (p) {
    case PageSize::k4K: return "4 KiB";
    case PageSize::k2M: return "2 MiB";
    case PageSize::k1G: return "1 GiB";
    }
    return "?";
}

const PoolInfo& pool_of(const HostResources& h, PageSize p) { return p == PageSize::k1G ? h.pool_1g : h.pool_2m; }

// The command that grows the pool by `more` pages.
std::string reserve_hint(const PoolInfo& pool, PageSize p, uint64_t more) {
    return memmap::reserve_command(p, pool.total + more);
}

// Largest prefix of ws (ascending) whose need(ws) <= limit.
std::vector<uint64_t> capped(const std::vector<uint64_t>& ws, uint64_t limit, uint64_t (*need)(uint64_t, PageSize),
                             PageSize p) {
    std::vector<uint64_t> out;
    for (uint64_t w : ws)
        if (need(w, p) <= limit) out.push_back(w);
    return out;
}

uint64_t native_need(uint64_t ws, PageSize p) { return round_up(ws, memmap::bytes(p)); }

// A huge-page run (native or guest) against its pool: sets skip or note,
// trims ws. `what` names the run in messages.
void fit_to_pool(const HostResources& host, PageSize p, std::vector<uint64_t>* ws,
                 uint64_t (*need)(uint64_t, PageSize), std::string* skip, std::string* note) {
    const PoolInfo& pool = pool_of(host, p);
    if (ws->empty()) return;
    const uint64_t page = memmap::bytes(p);
    const uint64_t want_pages = need(ws->back(), p) / page;
    if (!pool.exists) {
        *skip = "skipped: this kernel/CPU has no " + human_page(p) + " huge-page pool";
        ws->clear();
        return;
    }
    if (pool.available == 0) {
        *skip = "skipped: no " + human_page(p) + " huge pages reserved (" + std::to_string(want_pages) +
                " needed; as root: " + reserve_hint(pool, p, want_pages) + ")";
        ws->clear();
        return;
    }
    auto fit = capped(*ws, pool.available * page, need, p);
    if (fit.empty()) {
        *skip = "skipped: the " + human_page(p) + " pool has " + std::to_string(pool.available) +
                " free pages, " + std::to_string(need(ws->front(), p) / page) + " needed for the smallest (as root: " +
                reserve_hint(pool, p, need(ws->front(), p) / page - pool.available) + ")";
        ws->clear();
        return;
    }
    if (fit.size() < ws->size()) {
        *note = "working sets above " + size_label(fit.back()) + " skipped: the " + human_page(p) + " pool has " +
                std::to_string(pool.available) + " free pages, " + std::to_string(want_pages) +
                " needed (as root: " + reserve_hint(pool, p, want_pages - pool.available) + ")";
    }
    *ws = std::move(fit);
}

// 4 KiB runs against free memory (3/4 of MemAvailable, leaving room for others).
void fit_to_memory(const HostResources& host, std::vector<uint64_t>* ws, uint64_t (*need)(uint64_t, PageSize),
                   std::string* skip, std::string* note) {
    if (host.mem_available == 0 || ws->empty()) return;
    const uint64_t limit = host.mem_available / 4 * 3;
    auto fit = capped(*ws, limit, need, PageSize::k4K);
    if (fit.empty()) {
        *skip = "skipped: only " + std::to_string(host.mem_available / kMiB) + " MiB of memory available";
        ws->clear();
        return;
    }
    if (fit.size() < ws->size())
        *note = "working sets above " + size_label(fit.back()) + " skipped: only " +
                std::to_string(host.mem_available / kMiB) + " MiB of memory available";
    *ws = std::move(fit);
}

uint64_t read_mem_available() {
    std::ifstream f("/proc/meminfo");
    std::string key;
    uint64_t kb = 0;
    std::string unit;
    while (f >> key >> kb >> unit)
        if (key == "MemAvailable:") return kb * kKiB;
    return 0;
}

PoolInfo read_pool(PageSize p) {
    PoolInfo info;
    if (auto pool = memmap::read_huge_page_pool(p)) {
        info.exists = true;
        info.available = pool->available();
        info.total = pool->total;
    }
    return info;
}

} // namespace

std::string size_label(uint64_t b) {
    if (b != 0 && b % kGiB == 0) return std::to_string(b / kGiB) + "G";
    if (b != 0 && b % kMiB == 0) return std::to_string(b / kMiB) + "M";
    if (b != 0 && b % kKiB == 0) return std::to_string(b / kKiB) + "K";
    return std::to_string(b);
}

std::string GuestRun::label() const {
    return "guest " + std::string(memmap::to_string(guest_pages)) + " / host " +
           std::string(memmap::to_string(host_pages));
}

HostResources host_resources() {
    HostResources h;
    h.pool_2m = read_pool(PageSize::k2M);
    h.pool_1g = read_pool(PageSize::k1G);
    h.mem_available = read_mem_available();
    return h;
}

uint64_t guest_ram_for(uint64_t max_ws, PageSize host) {
    // Buffer + heap page tables (8 bytes per 4 KiB of RAM) + the chase's
    // order scratch (4 bytes per node) < ws / 256; the image, stack, boot
    // tables, identity map and a 2 MiB frame's slack fit in 32 MiB.
    const uint64_t need = max_ws + max_ws / 256 + 32 * kMiB;
    return round_up(need, std::max<uint64_t>(2 * kMiB, memmap::bytes(host)));
}

SweepPlan plan_sweep(const SweepOptions& o, const HostResources& host) {
    SweepPlan plan;
    const uint64_t max_ws = o.max_ws ? o.max_ws : (o.quick ? 64 * kMiB : 4 * kGiB);
    if (max_ws < 4 * kKiB) throw std::invalid_argument("--max-ws must be at least 4K");
    const uint64_t guest_max_ws =
        std::min(max_ws, o.guest_max_ws ? o.guest_max_ws : (o.quick ? 4 * kMiB : 1 * kGiB));
    plan.reps = o.reps ? o.reps : (o.quick ? 3 : 5);
    plan.accesses = o.accesses ? o.accesses : (o.quick ? 1ull << 17 : 1ull << 20);
    plan.guest_accesses = o.guest_accesses ? o.guest_accesses : (o.quick ? 1ull << 13 : 1ull << 16);

    // Powers of two from 4 KiB (quick: powers of four), up to max_ws.
    for (uint64_t w = 4 * kKiB; w <= max_ws; w *= o.quick ? 4 : 2) {
        plan.working_sets.push_back(w);
        if (w > (UINT64_MAX >> 3)) break;
    }

    for (PageSize p : {PageSize::k4K, PageSize::k2M, PageSize::k1G}) {
        NativeRun r{p, plan.working_sets};
        if (p == PageSize::k4K) fit_to_memory(host, &r.ws, native_need, &r.skip, &r.note);
        else fit_to_pool(host, p, &r.ws, native_need, &r.skip, &r.note);
        if (!r.ws.empty()) r.buffer_bytes = native_need(r.ws.back(), p);
        plan.native.push_back(std::move(r));
    }

    if (!o.guest) {
        plan.guest_skip = "guest runs skipped (--no-guest)";
    } else if (!host.kvm) {
        plan.guest_skip = "guest runs skipped: " + (host.kvm_reason.empty() ? std::string("no /dev/kvm") : host.kvm_reason);
    } else {
        std::vector<uint64_t> gws;
        for (uint64_t w : plan.working_sets)
            if (w <= guest_max_ws) gws.push_back(w);
        for (PageSize gp : {PageSize::k4K, PageSize::k2M}) {
            for (PageSize hp : {PageSize::k4K, PageSize::k2M, PageSize::k1G}) {
                GuestRun r{gp, hp, gws};
                if (hp == PageSize::k4K) fit_to_memory(host, &r.ws, guest_ram_for, &r.skip, &r.note);
                else fit_to_pool(host, hp, &r.ws, guest_ram_for, &r.skip, &r.note);
                if (!r.ws.empty()) r.ram_bytes = guest_ram_for(r.ws.back(), hp);
                plan.guest.push_back(std::move(r));
            }
        }
    }

    // VMM-side translation work: independent of the working-set grid.
    plan.sg_transfers = o.quick ? std::vector<uint64_t>{1 * kMiB, 64 * kMiB}
                                : std::vector<uint64_t>{1 * kMiB, 64 * kMiB, 1 * kGiB};
    plan.translate_lookups = o.quick ? 1ull << 20 : 1ull << 22;
    plan.backing_bytes = o.quick ? 128 * kMiB : 1 * kGiB;
    plan.backing_pages.push_back(PageSize::k4K);
    for (PageSize p : {PageSize::k2M, PageSize::k1G}) {
        std::vector<uint64_t> one{plan.backing_bytes};
        std::string skip, note;
        fit_to_pool(host, p, &one, native_need, &skip, &note);
        if (skip.empty()) plan.backing_pages.push_back(p);
        else plan.backing_skips.push_back(std::string(memmap::to_string(p)) + ": " + skip);
    }
    return plan;
}

} // namespace tlbstudy
