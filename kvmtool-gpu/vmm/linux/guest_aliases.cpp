#include "kvmtool-gpu/vmm/linux/guest_aliases.h"

#include <cerrno>
#include <cstring>
#include <vector>

#include "kvmtool-gpu/abi/platform_abi.h"

namespace kvmgpu::linux_abi {

namespace {
// As the boot tables (boot_state.cpp): every entry U=1, the guest runs in ring 3.
constexpr uint64_t kPresent = 1ull << 0, kWritable = 1ull << 1, kUser = 1ull << 2, kHuge = 1ull << 7;
constexpr uint64_t kTableFlags = kPresent | kWritable | kUser;
constexpr uint64_t kAddressMask = 0x000FFFFFFFFFF000ull;
constexpr uint64_t kLowerHalfEnd = 1ull << 47;
constexpr uint64_t kTablePage = 4096;

unsigned index_at(uint64_t va, unsigned level) { return static_cast<unsigned>((va >> (12 + 9 * level)) & 511); }
} // namespace

GuestAliases::GuestAliases(const memmap::GuestMemory& mem, uint64_t tables_lo, uint64_t tables_hi)
    : mem_(mem), next_free_table_((tables_lo + kTablePage - 1) / kTablePage * kTablePage), tables_hi_(tables_hi) {
    if (next_free_table_ > tables_hi_) next_free_table_ = tables_hi_;
}

uint64_t GuestAliases::entry(uint64_t table, unsigned index) const {
    uint64_t e = 0;
    mem_.read(memmap::GuestPhysAddr{table + index * 8ull}, &e, sizeof e);
    return e;
}

void GuestAliases::set_entry(uint64_t table, unsigned index, uint64_t value) const {
    mem_.write(memmap::GuestPhysAddr{table + index * 8ull}, &value, sizeof value);
}

std::optional<uint64_t> GuestAliases::next_table(uint64_t table, unsigned index) const {
    const uint64_t e = entry(table, index);
    if (!(e & kPresent)) return 0;
    if (e & kHuge) return std::nullopt;
    return e & kAddressMask;
}

std::optional<uint64_t> GuestAliases::tables_needed(uint64_t va, uint64_t len) const {
    uint64_t needed = 0;
    uint64_t last_pdpt_slot = ~0ull, last_pd_slot = ~0ull; // tables already counted for this range
    for (uint64_t at = va; at < va + len; at += kPage2M) {
        const uint64_t pml4_slot = at >> 39, pd_slot = at >> 30;
        const auto pdpt = next_table(KVMGPU_BOOT_PML4_GPA, index_at(at, 3));
        if (!pdpt) return std::nullopt;
        if (*pdpt == 0) {
            needed += pml4_slot != last_pdpt_slot;
            needed += pd_slot != last_pd_slot;
            last_pdpt_slot = pml4_slot;
            last_pd_slot = pd_slot;
            continue;
        }
        const auto pd = next_table(*pdpt, index_at(at, 2));
        if (!pd) return std::nullopt;
        if (*pd == 0) {
            needed += pd_slot != last_pd_slot;
            last_pd_slot = pd_slot;
            continue;
        }
        if (entry(*pd, index_at(at, 1)) & kPresent) return std::nullopt;
    }
    return needed;
}

int GuestAliases::map(uint64_t va, uint64_t gpa, uint64_t len) {
    uint64_t va_end, gpa_end;
    if (len == 0 || va % kPage2M || gpa % kPage2M || len % kPage2M || __builtin_add_overflow(va, len, &va_end) ||
        __builtin_add_overflow(gpa, len, &gpa_end) || va_end > kLowerHalfEnd)
        return EINVAL;
    if (va < mem_.total_bytes()) return EEXIST; // the identity map's, the stack guard's hole included
    if (!mem_.translate(memmap::GuestPhysAddr{gpa}, len)) return EFAULT;
    const size_t n = count_.load(std::memory_order_relaxed);
    if (n == kMaxAliases) return ENOMEM;
    const auto needed = tables_needed(va, len);
    if (!needed) return EEXIST;
    if (*needed > (tables_hi_ - next_free_table_) / kTablePage) return ENOMEM;

    const std::vector<uint8_t> zero(kTablePage, 0);
    auto table_below = [&](uint64_t table, unsigned index) {
        const uint64_t t = *next_table(table, index);
        if (t != 0) return t;
        const uint64_t fresh = next_free_table_;
        next_free_table_ += kTablePage;
        mem_.write(memmap::GuestPhysAddr{fresh}, zero.data(), zero.size());
        set_entry(table, index, fresh | kTableFlags); // after the page is zero: a walk never sees garbage
        return fresh;
    };
    for (uint64_t at = va, to = gpa; at < va_end; at += kPage2M, to += kPage2M) {
        const uint64_t pdpt = table_below(KVMGPU_BOOT_PML4_GPA, index_at(at, 3));
        const uint64_t pd = table_below(pdpt, index_at(at, 2));
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
