// A Linux-ABI guest's file mappings, mapped rather than copied: a window of
// guest-physical space outside RAM (KVMGPU_LINUX_FILE_WINDOW_GPA, identity
// mapped by the boot tables) whose pages are the host's own mappings of the
// guest's files. The window has one host reservation of its size (anonymous,
// MAP_NORESERVE), guest address w <-> host address base + (w - window start),
// so a host address the VMM took stays valid whatever the guest unmaps
// later. A file piece is mmap(MAP_PRIVATE | MAP_FIXED) of the host file over
// its part of the reservation (untouched pages are the host's page cache,
// shared by every VM that maps the file; a write copies the page, never
// reaching the file), up to the file's end, anonymous zero after it (no
// SIGBUS can reach the VMM). Unmapped, a range goes back to anonymous zero.
//
// KVM sees the window through memory slots: one per run of touching pieces
// of one class (window_pieces.h), KVM_MEM_READONLY for pieces the guest
// cannot write (a write exits as MMIO), none for PROT_NONE. A guest access
// that exits in the window (a write to a read-only piece, a hole, PROT_NONE,
// or a page whose slot is being replaced by another thread's call) comes to
// access(): done on the host mapping where the guest's protection allows it,
// else the guest's SIGSEGV.
//
// Limits: at most max_slots slots and max_pieces pieces (an operation that
// would need more is refused with ENOMEM, nothing changed). Threads: every
// call takes the window's own lock (system calls, vCPU exits, the unlocked
// blocking calls' pointer checks).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kvmtool-gpu/vmm/linux/guest_proc_text.h"
#include "kvmtool-gpu/vmm/linux/window_pieces.h"

namespace kvmgpu::linux_abi {

// Sets KVM memory slot `slot` to [gpa, gpa + size) over host memory `host`
// (read-only: KVM_MEM_READONLY); size 0 deletes it. 0 or the errno.
using MemslotSetter = std::function<int(uint32_t slot, uint64_t gpa, uint64_t size, void* host, bool read_only)>;

struct WindowLimits {
    uint32_t first_slot = 1;    // slot ids first_slot .. first_slot + max_slots - 1 are the window's
    uint32_t max_slots = 4096;
    size_t max_pieces = 16384;
};

// The fixed cap on a VM's window slots; fewer where KVM offers fewer
// (KVM_CAP_NR_MEMSLOTS less the slots RAM uses).
constexpr uint32_t kMaxWindowSlots = 4096;
uint32_t window_slot_cap(int kvm_nr_memslots, uint32_t first_slot);

class FileWindow {
public:
    // nullptr when the host reservation cannot be made (the caller copies files instead).
    static std::unique_ptr<FileWindow> create(uint64_t gpa, uint64_t size, MemslotSetter set_slot, WindowLimits limits);
    ~FileWindow();
    FileWindow(const FileWindow&) = delete;
    FileWindow& operator=(const FileWindow&) = delete;

    uint64_t lo() const { return pieces_.lo(); }
    uint64_t hi() const { return pieces_.hi(); }
    bool inside(uint64_t addr, uint64_t len) const { return pieces_.inside(addr, len); }
    // Any of [addr, addr + len) (no wrap) in the window.
    bool overlaps(uint64_t addr, uint64_t len) const;

    // A free 2 MiB aligned place for len bytes (page rounded), nullopt when full.
    std::optional<uint64_t> place(uint64_t len) const;
    // Maps [gpa, gpa + len) (page aligned, inside) to the host file `fd` from
    // `offset` (page aligned) with the guest's `prot`, replacing what was
    // there; `file_size` bounds the file's part. 0 or -errno.
    int map_file(uint64_t gpa, uint64_t len, int fd, uint64_t offset, uint64_t file_size, int prot, std::string name);
    // Anonymous zero memory (MAP_FIXED anonymous in the window).
    int map_anonymous(uint64_t gpa, uint64_t len, int prot);
    // munmap of the window's part of [gpa, gpa + len). 0 or -ENOMEM.
    int unmap(uint64_t gpa, uint64_t len);
    // mprotect: every page must be mapped (else -ENOMEM, as Linux).
    int protect(uint64_t gpa, uint64_t len, int prot);
    // mremap of [old, old + old_len) inside the window: shrinking, and
    // growing an anonymous piece (in place, or moved within the window
    // when may_move). The new address, or -errno.
    int64_t remap(uint64_t old_addr, uint64_t old_len, uint64_t new_len, bool may_move);

    // The host bytes of [addr, addr + len) when every page is mapped and
    // not PROT_NONE (the system-call server's pointers; `any_prot`: PROT_NONE
    // too, for the VMM's own filling); nullopt otherwise.
    std::optional<std::span<uint8_t>> span(uint64_t addr, uint64_t len, bool any_prot = false) const;
    // MADV_DONTNEED over the window's part of [addr, addr + len): private
    // copies dropped (a file page reads the file again, anonymous reads zero).
    void discard(uint64_t addr, uint64_t len);
    // A vCPU's access that exited at addr: done on the host mapping (true),
    // or refused (false: the guest's SIGSEGV).
    bool access(uint64_t addr, std::span<uint8_t> data, bool write);

    // /proc/self/maps lines for the pieces (PROT_NONE ones included, as Linux lists them).
    std::vector<MapsEntry> maps() const;
    size_t slots() const;
    size_t pieces() const;
    // For the run's report: slots and pieces held, memory-slot changes made
    // and refused by KVM (each change can cost the guest its cached
    // translations, so they are worth counting).
    std::string describe() const;

private:
    FileWindow(uint64_t gpa, uint64_t size, uint8_t* host, MemslotSetter set_slot, WindowLimits limits);
    struct Slot {
        uint64_t end = 0;
        SlotClass cls = SlotClass::ReadOnly;
        uint32_t id = 0;
    };
    uint8_t* host_at(uint64_t gpa) const { return host_ + (gpa - pieces_.lo()); }
    // The slots touching [start, end), and the runs that replace them.
    std::vector<std::pair<uint64_t, Slot>> slots_touching(uint64_t start, uint64_t end) const;
    size_t slots_after_change(uint64_t start, uint64_t end) const;
    // Makes the slots over [start, end) match the pieces again.
    void sync_slots(uint64_t start, uint64_t end);
    // The host pages of [start, end) back to anonymous zero.
    void release_host(uint64_t start, uint64_t end);
    int map_anonymous_locked(uint64_t gpa, uint64_t len, int prot);
    int unmap_locked(uint64_t gpa, uint64_t len);
    // The piece change already made fits the limits; else undone, false.
    bool within_limits(const WindowPieces::Snapshot& before, uint64_t start, uint64_t end);

    mutable std::mutex mu_;
    WindowPieces pieces_;
    uint8_t* host_;
    MemslotSetter set_slot_;
    WindowLimits limits_;
    std::map<uint64_t, Slot> slots_; // start -> slot
    std::vector<uint32_t> free_ids_;
    uint64_t slot_changes_ = 0, slot_refusals_ = 0;
};

} // namespace kvmgpu::linux_abi
