#include "kvmtool-gpu/vmm/linux/file_window.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::linux_abi {

namespace {
constexpr uint64_t kPage = 4096, k2M = 2ull << 20;
constexpr int kAnonFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

std::optional<uint64_t> pages(uint64_t len) {
    if (len == 0 || len > UINT64_MAX - (kPage - 1)) return std::nullopt;
    return (len + kPage - 1) & ~(kPage - 1);
}
} // namespace

uint32_t window_slot_cap(int kvm_nr_memslots, uint32_t first_slot) {
    if (kvm_nr_memslots <= 0 || static_cast<uint32_t>(kvm_nr_memslots) <= first_slot) return 0;
    return std::min<uint32_t>(kMaxWindowSlots, static_cast<uint32_t>(kvm_nr_memslots) - first_slot);
}

std::unique_ptr<FileWindow> FileWindow::create(uint64_t gpa, uint64_t size, MemslotSetter set_slot,
                                               WindowLimits limits) {
    if (gpa % k2M || size % k2M || size == 0 || gpa + size < gpa || limits.max_slots == 0) return nullptr;
    void* host = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, kAnonFlags, -1, 0);
    if (host == MAP_FAILED) return nullptr;
    return std::unique_ptr<FileWindow>(
        new FileWindow(gpa, size, static_cast<uint8_t*>(host), std::move(set_slot), limits));
}

FileWindow::FileWindow(uint64_t gpa, uint64_t size, uint8_t* host, MemslotSetter set_slot, WindowLimits limits)
    : pieces_(gpa, gpa + size), host_(host), set_slot_(std::move(set_slot)), limits_(limits) {
    for (uint32_t i = limits.max_slots; i > 0; --i) free_ids_.push_back(limits.first_slot + i - 1);
}

// The slots go with the VM's fd (KVM drops them); only the host memory is ours.
FileWindow::~FileWindow() { ::munmap(host_, pieces_.hi() - pieces_.lo()); }

bool FileWindow::overlaps(uint64_t addr, uint64_t len) const {
    uint64_t end;
    if (len == 0 || __builtin_add_overflow(addr, len, &end)) return false;
    return addr < pieces_.hi() && end > pieces_.lo();
}

std::optional<uint64_t> FileWindow::place(uint64_t len) const {
    const auto rounded = pages(len);
    if (!rounded) return std::nullopt;
    std::lock_guard lock(mu_);
    return pieces_.find_free(*rounded, k2M);
}

std::vector<std::pair<uint64_t, FileWindow::Slot>> FileWindow::slots_touching(uint64_t start, uint64_t end) const {
    std::vector<std::pair<uint64_t, Slot>> out;
    auto it = slots_.upper_bound(start);
    if (it != slots_.begin()) --it;
    for (; it != slots_.end() && it->first <= end; ++it)
        if (it->second.end >= start) out.push_back(*it);
    return out;
}

size_t FileWindow::slots_after_change(uint64_t start, uint64_t end) const {
    const auto old = slots_touching(start, end);
    uint64_t lo = start, hi = end;
    for (const auto& [s, slot] : old) lo = std::min(lo, s), hi = std::max(hi, slot.end);
    return slots_.size() - old.size() + pieces_.runs(lo, hi).size();
}

bool FileWindow::within_limits(const WindowPieces::Snapshot& before, uint64_t start, uint64_t end) {
    if (pieces_.count() <= limits_.max_pieces && slots_after_change(start, end) <= limits_.max_slots) return true;
    pieces_.restore(before);
    return false;
}

// Errors are named with strerrordesc_np: strerror may open the locale's
// message catalogs, which the vCPU thread's seccomp filter refuses.
void FileWindow::sync_slots(uint64_t start, uint64_t end) {
    const auto old = slots_touching(start, end);
    uint64_t lo = start, hi = end;
    for (const auto& [s, slot] : old) lo = std::min(lo, s), hi = std::max(hi, slot.end);
    const auto want = pieces_.runs(lo, hi);
    std::vector<SlotRun> have;
    for (const auto& [s, slot] : old) have.push_back(SlotRun{s, slot.end, slot.cls});
    if (have == want) return; // the host mappings under a slot may change: KVM follows them
    for (const auto& [s, slot] : old) {
        ++slot_changes_;
        if (const int err = set_slot_(slot.id, s, 0, nullptr, false))
            ++slot_refusals_, log_warn("linux guest: removing file-window slot %u failed: %s", slot.id, strerrordesc_np(err));
        free_ids_.push_back(slot.id);
        slots_.erase(s);
    }
    for (const SlotRun& run : want) {
        // Without a slot the run still works, exit by exit (access()); within_limits keeps ids enough.
        if (free_ids_.empty()) break;
        const uint32_t id = free_ids_.back();
        ++slot_changes_;
        if (const int err =
                set_slot_(id, run.start, run.end - run.start, host_at(run.start), run.cls == SlotClass::ReadOnly)) {
            log_warn("linux guest: file-window slot for 0x%llx..0x%llx refused: %s",
                     static_cast<unsigned long long>(run.start), static_cast<unsigned long long>(run.end),
                     strerrordesc_np(err));
            ++slot_refusals_;
            continue;
        }
        free_ids_.pop_back();
        slots_.emplace(run.start, Slot{run.end, run.cls, id});
    }
}

void FileWindow::release_host(uint64_t start, uint64_t end) {
    if (start >= end) return;
    // Over our own reservation: replacing one anonymous range with another cannot fail for want of address space.
    ::mmap(host_at(start), end - start, PROT_READ | PROT_WRITE, kAnonFlags | MAP_FIXED, -1, 0);
}

int FileWindow::map_file(uint64_t gpa, uint64_t len, int fd, uint64_t offset, uint64_t file_size, int prot,
                         std::string name) {
    const auto rounded = pages(len);
    if (gpa % kPage || offset % kPage || !rounded || !pieces_.inside(gpa, *rounded)) return -EINVAL;
    uint64_t offset_end;
    if (__builtin_add_overflow(offset, *rounded, &offset_end)) return -EOVERFLOW;
    const uint64_t end = gpa + *rounded;
    std::lock_guard lock(mu_);
    const auto before = pieces_.snapshot(gpa, end);
    pieces_.insert(gpa, end, WindowPiece{end, prot, false, offset, std::move(name)});
    if (!within_limits(before, gpa, end)) return -ENOMEM;
    // The file's pages up to its end (rounded to a page); zero after, where Linux would raise SIGBUS.
    const uint64_t file_pages = file_size <= offset ? 0 : std::min(*rounded, *pages(file_size - offset));
    if (file_pages &&
        ::mmap(host_at(gpa), file_pages, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, fd,
               static_cast<off_t>(offset)) == MAP_FAILED) {
        const int err = errno;
        // MAP_FIXED may have dropped what was there: the range is unmapped now.
        release_host(gpa, end);
        pieces_.erase(gpa, end);
        sync_slots(gpa, end);
        return -err;
    }
    release_host(gpa + file_pages, end);
    sync_slots(gpa, end);
    return 0;
}

int FileWindow::map_anonymous(uint64_t gpa, uint64_t len, int prot) {
    std::lock_guard lock(mu_);
    return map_anonymous_locked(gpa, len, prot);
}

int FileWindow::map_anonymous_locked(uint64_t gpa, uint64_t len, int prot) {
    const auto rounded = pages(len);
    if (gpa % kPage || !rounded || !pieces_.inside(gpa, *rounded)) return -EINVAL;
    const uint64_t end = gpa + *rounded;
    const auto before = pieces_.snapshot(gpa, end);
    pieces_.insert(gpa, end, WindowPiece{end, prot, true, 0, {}});
    if (!within_limits(before, gpa, end)) return -ENOMEM;
    release_host(gpa, end);
    sync_slots(gpa, end);
    return 0;
}

int FileWindow::unmap(uint64_t gpa, uint64_t len) {
    std::lock_guard lock(mu_);
    return unmap_locked(gpa, len);
}

int FileWindow::unmap_locked(uint64_t gpa, uint64_t len) {
    uint64_t end;
    if (len == 0 || __builtin_add_overflow(gpa, len, &end)) return 0;
    const uint64_t s = std::max(gpa, pieces_.lo()), e = std::min(end, pieces_.hi());
    if (s >= e) return 0;
    const auto before = pieces_.snapshot(s, e);
    pieces_.erase(s, e);
    if (!within_limits(before, s, e)) return -ENOMEM; // a run cut in two needs one slot more
    release_host(s, e);
    sync_slots(s, e);
    return 0;
}

int FileWindow::protect(uint64_t gpa, uint64_t len, int prot) {
    const auto rounded = pages(len);
    if (!rounded || !pieces_.inside(gpa, *rounded)) return -ENOMEM;
    const uint64_t end = gpa + *rounded;
    std::lock_guard lock(mu_);
    if (!pieces_.fully_mapped(gpa, end)) return -ENOMEM;
    const auto before = pieces_.snapshot(gpa, end);
    pieces_.protect(gpa, end, prot);
    if (!within_limits(before, gpa, end)) return -ENOMEM;
    sync_slots(gpa, end);
    return 0;
}

int64_t FileWindow::remap(uint64_t old_addr, uint64_t old_len, uint64_t new_len, bool may_move) {
    const auto old_r = pages(old_len), new_r = pages(new_len);
    if (old_addr % kPage || !old_r || !new_r) return -EINVAL;
    if (!pieces_.inside(old_addr, *old_r)) return -EFAULT;
    std::lock_guard lock(mu_);
    if (*new_r <= *old_r) {
        if (const int err = unmap_locked(old_addr + *new_r, *old_r - *new_r)) return err;
        return static_cast<int64_t>(old_addr);
    }
    const auto piece = pieces_.at(old_addr);
    if (!piece || piece->second.end < old_addr + *old_r) return -EFAULT; // one mapping, as Linux asks
    if (!piece->second.anonymous) return -ENOMEM; // a file piece does not grow in the window
    const int prot = piece->second.prot;
    const uint64_t grow_at = old_addr + *old_r, grow = *new_r - *old_r;
    if (pieces_.inside(grow_at, grow) && pieces_.overlapping(grow_at, grow_at + grow).empty()) {
        if (const int err = map_anonymous_locked(grow_at, grow, prot)) return err;
        return static_cast<int64_t>(old_addr);
    }
    if (!may_move) return -ENOMEM;
    const auto to = pieces_.find_free(*new_r, k2M);
    if (!to) return -ENOMEM;
    if (const int err = map_anonymous_locked(*to, *new_r, prot)) return err;
    // Both inside the reservation, disjoint (the new place was free).
    std::memcpy(host_at(*to), host_at(old_addr), *old_r);
    if (const int err = unmap_locked(old_addr, *old_r)) {
        unmap_locked(*to, *new_r); // a run of its own: taking it away needs no slot
        return err;
    }
    return static_cast<int64_t>(*to);
}

void FileWindow::discard(uint64_t addr, uint64_t len) {
    uint64_t end;
    if (len == 0 || __builtin_add_overflow(addr, len, &end)) return;
    const uint64_t s = std::max(addr, pieces_.lo()), e = std::min(end, pieces_.hi());
    if (s >= e || s % kPage) return;
    std::lock_guard lock(mu_);
    ::madvise(host_at(s), ((e - s + kPage - 1) & ~(kPage - 1)), MADV_DONTNEED);
}

std::optional<std::span<uint8_t>> FileWindow::span(uint64_t addr, uint64_t len, bool any_prot) const {
    if (!pieces_.inside(addr, len)) return std::nullopt;
    std::lock_guard lock(mu_);
    uint64_t cursor = addr;
    for (const auto& [s, p] : pieces_.overlapping(addr, addr + len)) {
        if (s != cursor || (!any_prot && slot_class(p.prot) == SlotClass::None)) return std::nullopt;
        cursor = p.end;
    }
    if (cursor != addr + len) return std::nullopt;
    return std::span<uint8_t>(host_at(addr), len);
}

bool FileWindow::access(uint64_t addr, std::span<uint8_t> data, bool write) {
    if (!pieces_.inside(addr, data.size())) return false;
    std::lock_guard lock(mu_);
    uint64_t cursor = addr;
    for (const auto& [s, p] : pieces_.overlapping(addr, addr + data.size())) {
        const SlotClass cls = slot_class(p.prot);
        if (s != cursor || cls == SlotClass::None || (write && cls != SlotClass::Writable)) return false;
        cursor = p.end;
    }
    if (cursor != addr + data.size()) return false;
    if (write) std::memcpy(host_at(addr), data.data(), data.size());
    else std::memcpy(data.data(), host_at(addr), data.size());
    return true;
}

std::vector<MapsEntry> FileWindow::maps() const {
    std::lock_guard lock(mu_);
    std::vector<MapsEntry> out;
    for (const auto& [s, p] : pieces_.overlapping(pieces_.lo(), pieces_.hi())) {
        std::string perms = "---p";
        if (p.prot & PROT_READ) perms[0] = 'r';
        if (p.prot & PROT_WRITE) perms[1] = 'w';
        if (p.prot & PROT_EXEC) perms[2] = 'x';
        out.push_back(MapsEntry{s, p.end, perms, p.anonymous ? "" : p.name, p.anonymous ? 0 : p.offset});
    }
    return out;
}

size_t FileWindow::slots() const {
    std::lock_guard lock(mu_);
    return slots_.size();
}

size_t FileWindow::pieces() const {
    std::lock_guard lock(mu_);
    return pieces_.count();
}

std::string FileWindow::describe() const {
    std::lock_guard lock(mu_);
    return std::to_string(slots_.size()) + " slots and " + std::to_string(pieces_.count()) + " pieces held, " +
           std::to_string(slot_changes_) + " slot changes (" + std::to_string(slot_refusals_) + " refused)";
}

} // namespace kvmgpu::linux_abi
