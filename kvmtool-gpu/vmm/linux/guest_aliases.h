// Second names for guest RAM in a Linux-ABI guest's address space. Guest
// virtual == guest physical everywhere else; an alias maps guest virtual
// [va, va + len) outside that identity map onto guest RAM [gpa, gpa + len),
// on 2 MiB pages, by adding entries to the page tables the VMM wrote at boot
// (tables it needs come from the free pages after them). The guest library
// uses one to give managed memory the device's address on the CPU too
// (docs/managed-memory.md).
//
// The VMM never reads the tables back: which tables exist and what is
// mapped is its own record (the boot tables' layout, the tables it added,
// its aliases), so nothing the guest or a device writes into the table
// pages can steer where the VMM writes or what it takes. It writes only
// entries of its own tables and table pages inside [tables_lo, tables_hi).
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
#include <map>
#include <optional>

#include "memmap/guest_memory.h"

namespace kvmgpu::linux_abi {

class GuestAliases {
public:
    static constexpr uint64_t kPage2M = 2ull << 20;
    static constexpr size_t kMaxAliases = 256;

    // The boot tables for this RAM (boot_state.h, a Linux-ABI guest's);
    // new table pages are taken from [tables_lo, tables_hi) (empty: no alias
    // can need one).
    GuestAliases(const memmap::GuestMemory& mem, uint64_t tables_lo, uint64_t tables_hi);

    // 0, or the errno: EINVAL (not 2 MiB aligned, empty, wrapping, not in the
    // lower canonical half), EEXIST (below the end of RAM, or any of it
    // already mapped: the identity map, the MMIO window, the file window,
    // another alias),
    // EFAULT (gpa range not guest RAM, or the first 2 MiB: the VMM's boot
    // structures), ENOMEM (no table pages or alias slots left).
    int map(uint64_t va, uint64_t gpa, uint64_t len);

    // The guest-physical address of [va, va + len) when it lies inside one alias.
    std::optional<uint64_t> physical(uint64_t va, uint64_t len) const;

    size_t count() const { return count_.load(std::memory_order_acquire); }

private:
    struct Alias {
        uint64_t va = 0, gpa = 0, len = 0;
    };
    // Whether any of [va, va_end) is mapped already (identity map, MMIO window, an alias).
    bool mapped(uint64_t va, uint64_t va_end) const;
    // New table pages mapping [va, va_end) needs.
    uint64_t tables_needed(uint64_t va, uint64_t va_end) const;
    // The table under `parent`'s entry `index` in `known` (keyed by `key`), made if missing.
    uint64_t table_for(std::map<uint64_t, uint64_t>& known, uint64_t key, uint64_t parent, unsigned index);
    void set_entry(uint64_t table, unsigned index, uint64_t value) const;

    const memmap::GuestMemory& mem_;
    uint64_t pml4_, identity_end_, mmio_lo_, mmio_hi_, window_lo_, window_hi_; // the file window (file_window.h)
    uint64_t next_free_table_, tables_hi_; // next_free_table_ <= tables_hi_, both 4 KiB aligned
    std::map<uint64_t, uint64_t> pdpts_;   // PML4 index -> its PDPT
    std::map<uint64_t, uint64_t> pds_;     // va >> 30 -> its PD
    std::array<Alias, kMaxAliases> aliases_{};
    std::atomic<size_t> count_{0};
};

} // namespace kvmgpu::linux_abi
