// Second names for guest RAM in a Linux-ABI guest's address space. Guest
// virtual == guest physical everywhere else; an alias maps guest virtual
// [va, va + len) outside that identity map onto guest RAM [gpa, gpa + len),
// on 2 MiB pages, by adding entries to the page tables the VMM wrote at boot
// (tables it needs come from the free pages after them). The guest library
// uses one to give managed memory the device's address on the CPU too
// (docs/managed-memory.md).
//
// Aliases are for good: never changed or removed. The guest's vCPUs then
// need no TLB flush, which ring-3 code cannot ask for and the VMM cannot
// give from outside: KVM shadows the guest's page tables and does not see
// the VMM's writes to them, but a walk of an entry that was not present
// reads the new one. Adding is serialised by the caller; translating is
// lock-free (entries are published before the count that covers them).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>

#include "memmap/guest_memory.h"

namespace kvmgpu::linux_abi {

class GuestAliases {
public:
    static constexpr uint64_t kPage2M = 2ull << 20;
    static constexpr size_t kMaxAliases = 256;

    // Page tables rooted at KVMGPU_BOOT_PML4_GPA; new table pages are taken
    // from [tables_lo, tables_hi) (empty: no alias can need one).
    GuestAliases(const memmap::GuestMemory& mem, uint64_t tables_lo, uint64_t tables_hi);

    // 0, or the errno: EINVAL (not 2 MiB aligned, empty, wrapping, not in the
    // lower canonical half), EEXIST (below the end of RAM, or any of it
    // already mapped: the identity map, the MMIO window, another alias), EFAULT (gpa range not guest RAM),
    // ENOMEM (no table pages or alias slots left).
    int map(uint64_t va, uint64_t gpa, uint64_t len);

    // The guest-physical address of [va, va + len) when it lies inside one alias.
    std::optional<uint64_t> physical(uint64_t va, uint64_t len) const;

    size_t count() const { return count_.load(std::memory_order_acquire); }

private:
    struct Alias {
        uint64_t va = 0, gpa = 0, len = 0;
    };
    // The table an entry points to, 0 when not present; nullopt when it is
    // a large page (mapped, not a table).
    std::optional<uint64_t> next_table(uint64_t table, unsigned index) const;
    uint64_t entry(uint64_t table, unsigned index) const;
    void set_entry(uint64_t table, unsigned index, uint64_t value) const;
    // How many new table pages mapping [va, va + len) needs; nullopt when any of it is mapped.
    std::optional<uint64_t> tables_needed(uint64_t va, uint64_t len) const;

    const memmap::GuestMemory& mem_;
    uint64_t next_free_table_, tables_hi_;
    std::array<Alias, kMaxAliases> aliases_{};
    std::atomic<size_t> count_{0};
};

} // namespace kvmgpu::linux_abi
