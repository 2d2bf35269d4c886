// The bookkeeping of the file window (file_window.h): which pages of
// [lo, hi) hold what, as disjoint pieces (a file's pages from an offset, or
// anonymous memory), each with the protection the guest gave, and the runs
// of pieces that one KVM memory slot serves. Pure interval arithmetic, no
// host memory, no KVM: every value reaching it is the guest's, so each
// operation checks for wrap and for the window's bounds itself.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kvmgpu::linux_abi {

struct WindowPiece {
    uint64_t end = 0;
    int prot = 0;           // PROT_READ | PROT_WRITE | PROT_EXEC as the guest gave them
    bool anonymous = false;
    uint64_t offset = 0;    // the file offset of the piece's first byte (file pieces)
    std::string name;       // the file's guest path (/proc/self/maps)
};

// What a slot over a piece is: none (PROT_NONE: the guest's access faults),
// read-only (KVM_MEM_READONLY: a write exits) or writable.
enum class SlotClass { None, ReadOnly, Writable };
SlotClass slot_class(int prot);

// A run of touching pieces of one class (never None): one memory slot.
struct SlotRun {
    uint64_t start = 0, end = 0;
    SlotClass cls = SlotClass::ReadOnly;
    bool operator==(const SlotRun&) const = default;
};

class WindowPieces {
public:
    WindowPieces(uint64_t lo, uint64_t hi) : lo_(lo), hi_(hi) {}

    // [start, start + len) lies in the window: no wrap, len > 0.
    bool inside(uint64_t start, uint64_t len) const;
    // The lowest `align`-aligned start of `len` free bytes (align a power of two).
    std::optional<uint64_t> find_free(uint64_t len, uint64_t align) const;
    // Puts `piece` at [start, end), replacing whatever was there.
    void insert(uint64_t start, uint64_t end, WindowPiece piece);
    // Forgets [start, end); what lies outside stays, split where cut.
    void erase(uint64_t start, uint64_t end);
    // Every page of [start, end) is in some piece.
    bool fully_mapped(uint64_t start, uint64_t end) const;
    // Sets the protection of [start, end) (every page mapped: the caller checks).
    void protect(uint64_t start, uint64_t end, int prot);
    // The piece holding addr: its start and the piece; nullopt in a hole.
    std::optional<std::pair<uint64_t, WindowPiece>> at(uint64_t addr) const;
    // Pieces overlapping [start, end), clipped to it, in address order.
    std::vector<std::pair<uint64_t, WindowPiece>> overlapping(uint64_t start, uint64_t end) const;
    // The slot runs inside [start, end), which must be piece boundaries.
    std::vector<SlotRun> runs(uint64_t start, uint64_t end) const;
    size_t count() const { return pieces_.size(); }

    // What an operation on [start, end) may change (the pieces that overlap
    // or touch it, whole), to put back with restore() when it is refused.
    struct Snapshot {
        uint64_t start = 0, end = 0;
        std::vector<std::pair<uint64_t, WindowPiece>> pieces;
    };
    Snapshot snapshot(uint64_t start, uint64_t end) const;
    void restore(const Snapshot& s);
    uint64_t lo() const { return lo_; }
    uint64_t hi() const { return hi_; }

private:
    void split_at(uint64_t addr);    // a piece across addr becomes two
    void merge_around(uint64_t addr); // joins the pieces meeting at addr when they are one mapping's

    uint64_t lo_, hi_;
    std::map<uint64_t, WindowPiece> pieces_; // start -> piece
};

} // namespace kvmgpu::linux_abi
