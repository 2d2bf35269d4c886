#include "kvmtool-gpu/vmm/linux/guest_aliases.h"

#include <cerrno>
#include <vector>

#include "kvmtool-gpu/abi/linux_abi.h"
#include "kvmtool-gpu/abi/platform_abi.h"
#include "kvmtool-gpu/vmm/boot_state.h"

namespace kvmgpu::linux_abi {

namespace {
// As the boot tables (boot_state.cpp): every entry U=1, the guest runs in ring 3.
constexpr uint64_t kPresent = 1ull << 0, kWritable = 1ull << 1, kUser = 1ull << 2, kHuge = 1ull << 7;
constexpr uint64_t kTableFlags = kPresent | kWritable | kUser;
constexpr uint64_t kLowerHalfEnd = 1ull << 47;
constexpr uint64_t kTablePage = 4096, k1G = 1ull << 30;

unsigned index_at(uint64_t va, unsigned level) { return static_cast<unsigned>((va >> (12 + 9 * level)) & 511); }
uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }
} // namespace

GuestAliases::GuestAliases(const memmap::GuestMemory& mem, uint64_t tables_lo, uint64_t tables_hi)
    : mem_(mem) {
    const BootPageTables boot = boot_page_tables(mem.total_bytes(), true);
    pml4_ = boot.pml4;
    identity_end_ = boot.ram_pds * k1G; // each RAM PD maps its whole GiB
    mmio_lo_ = KVMGPU_MMIO_BASE;
    mmio_hi_ = KVMGPU_MMIO_BASE + round_up(KVMGPU_MMIO_SIZE, kPage2M);
    pdpts_[0] = boot.pdpt;
    for (uint64_t g = 0; g < boot.ram_pds; ++g) pds_[g] = boot.first_pd + g * kTablePage;
    pds_[KVMGPU_MMIO_BASE / k1G] = boot.mmio_pd;
    for (uint64_t g = 0; g < boot.window_pds; ++g)
        pds_[KVMGPU_LINUX_FILE_WINDOW_GPA / k1G + g] = boot.window_pd + g * kTablePage;
    window_lo_ = KVMGPU_LINUX_FILE_WINDOW_GPA;
    window_hi_ = KVMGPU_LINUX_FILE_WINDOW_GPA + boot.window_pds * k1G;
    tables_hi_ = tables_hi / kTablePage * kTablePage;
    next_free_table_ = std::min(round_up(tables_lo, kTablePage), tables_hi_);
}

void GuestAliases::set_entry(uint64_t table, unsigned index, uint64_t value) const {
    mem_.write(memmap::GuestPhysAddr{table + index * 8ull}, &value, sizeof value);
}

bool GuestAliases::mapped(uint64_t va, uint64_t va_end) const {
    if (va < identity_end_ || (va < mmio_hi_ && va_end > mmio_lo_) || (va < window_hi_ && va_end > window_lo_))
        return true;
    const size_t n = count_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < n; ++i)
        if (va < aliases_[i].va + aliases_[i].len && va_end > aliases_[i].va) return true;
    return false;
}

uint64_t GuestAliases::tables_needed(uint64_t va, uint64_t va_end) const {
    uint64_t needed = 0;
    for (uint64_t slot = va >> 39; slot <= (va_end - 1) >> 39; ++slot) needed += !pdpts_.contains(slot);
    for (uint64_t gib = va >> 30; gib <= (va_end - 1) >> 30; ++gib) needed += !pds_.contains(gib);
    return needed;
}

uint64_t GuestAliases::table_for(std::map<uint64_t, uint64_t>& known, uint64_t key, uint64_t parent, unsigned index) {
    if (const auto it = known.find(key); it != known.end()) return it->second;
    const uint64_t fresh = next_free_table_; // map() made sure it is below tables_hi_
    next_free_table_ += kTablePage;
    const std::vector<uint8_t> zero(kTablePage, 0);
    mem_.write(memmap::GuestPhysAddr{fresh}, zero.data(), zero.size());
    set_entry(parent, index, fresh | kTableFlags); // after the page is zero: a walk never sees garbage
    known[key] = fresh;
    return fresh;
}

int GuestAliases::map(uint64_t va, uint64_t gpa, uint64_t len) {
    uint64_t va_end, gpa_end;
    if (len == 0 || va % kPage2M || gpa % kPage2M || len % kPage2M || __builtin_add_overflow(va, len, &va_end) ||
        __builtin_add_overflow(gpa, len, &gpa_end) || va_end > kLowerHalfEnd)
        return EINVAL;
    if (va < mem_.total_bytes()) return EEXIST; // the identity map's, the stack guard's hole included
    if (!mem_.translate(memmap::GuestPhysAddr{gpa}, len)) return EFAULT;
    if (gpa < KVMGPU_IMAGE_BASE) return EFAULT; // the boot structures' 2 MiB: ring 3 may not write them
    const size_t n = count_.load(std::memory_order_relaxed);
    if (n == kMaxAliases) return ENOMEM;
    if (mapped(va, va_end)) return EEXIST;
    if (tables_needed(va, va_end) > (tables_hi_ - next_free_table_) / kTablePage) return ENOMEM;

    for (uint64_t at = va, to = gpa; at < va_end; at += kPage2M, to += kPage2M) {
        const uint64_t pdpt = table_for(pdpts_, at >> 39, pml4_, index_at(at, 3));
        const uint64_t pd = table_for(pds_, at >> 30, pdpt, index_at(at, 2));
        set_entry(pd, index_at(at, 1), to | kTableFlags | kHuge);
    }
    aliases_[n] = Alias{va, gpa, len};
    count_.store(n + 1, std::memory_order_release);
    return 0;
}

std::optional<uint64_t> GuestAliases::physical(uint64_t va, uint64_t len) const {
    const size_t n = count_.load(std::memory_order_acquire);
    for (size_t i = 0; i < n; ++i) {
        const Alias& a = aliases_[i];
        if (va >= a.va && va - a.va < a.len && len <= a.len - (va - a.va)) return a.gpa + (va - a.va);
    }
    return std::nullopt;
}

} // namespace kvmgpu::linux_abi
