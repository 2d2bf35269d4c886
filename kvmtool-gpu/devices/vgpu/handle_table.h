// Per-VM table that turns backend objects (contexts, modules, functions,
// streams, events, arrays, graphs) into the VM-local numbers a guest sees. Each entry has an
// owner (the context it was made in; 0 for none), so a handle used while
// another context is current can be refused. A handle never contains a
// host pointer: it packs a table tag, a slot generation and a slot index, so
// a stale handle (slot freed, maybe reused), one from another table, another
// VM, or one never issued is refused.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace kvmgpu::vgpu {

// Which table a handle belongs to; part of the handle value, so passing a
// stream where an event is expected is refused too.
enum class HandleKind : uint8_t {
    Context = 0x43,
    Module = 0x4d,
    Function = 0x46,
    Stream = 0x53,
    Event = 0x45,
    Registration = 0x52,
    Array = 0x41,
    Blas = 0x42,
    Rand = 0x47,
    Fft = 0x54,
    Graph = 0x48,
    GraphExec = 0x58,
    GraphNode = 0x4e,
    Physical = 0x50, // cuMemCreate's memory
};

// Bounded table of T. Handle layout: bits 63..56 kind, 55..32 generation,
// 31..0 slot index + 1. 0 is never issued (the ABI uses 0 for "default").
// A slot whose generation would come back to the first one it issued is
// retired, never reused: a freed handle stays refused however many times
// its slot turns over (2^24 times at most; the table's capacity then shrinks
// by that slot). GenBits is the generation's width, narrower only in tests.
// Not thread-safe: owned by the executor thread.
template <typename T, unsigned GenBits = 24>
class HandleTable {
    static_assert(GenBits >= 1 && GenBits <= 24, "the generation has 24 bits in a handle");

public:
    // `generation_seed` makes two VMs issue different numbers for the same
    // slot, so a handle leaked from one VM is refused by another.
    HandleTable(HandleKind kind, uint32_t capacity, uint32_t generation_seed)
        : kind_(kind), capacity_(capacity), seed_(generation_seed & kGenMask) {}

    // nullopt when `capacity` handles are live (the caller reports OUT_OF_MEMORY).
    std::optional<uint64_t> insert(const T& value, uint64_t owner = 0) {
        uint32_t index;
        if (!free_.empty()) {
            index = free_.back();
            free_.pop_back();
        } else {
            if (slots_.size() >= capacity_) return std::nullopt;
            index = static_cast<uint32_t>(slots_.size());
            slots_.push_back(Slot{T{}, 0, seed_, false});
        }
        Slot& s = slots_[index];
        s.value = value;
        s.owner = owner;
        s.live = true;
        ++live_;
        return encode(index, s.generation);
    }

    // nullptr for any handle this table did not issue or has since freed.
    T* find(uint64_t handle) {
        Slot* s = slot(handle);
        return s ? &s->value : nullptr;
    }

    // ... and nullptr for one another owner holds.
    T* find(uint64_t handle, uint64_t owner) {
        Slot* s = slot(handle);
        return s && s->owner == owner ? &s->value : nullptr;
    }

    // Frees the slot and returns what it held; nullopt as for find(handle, owner).
    std::optional<T> erase(uint64_t handle, uint64_t owner = 0) {
        Slot* s = slot(handle);
        if (!s || s->owner != owner) return std::nullopt;
        T out = s->value;
        release(static_cast<uint32_t>(s - slots_.data()));
        --live_;
        return out;
    }

    // Visits every live entry as fn(handle, value&).
    template <typename Fn>
    void for_each(Fn&& fn) {
        for (uint32_t i = 0; i < slots_.size(); ++i)
            if (slots_[i].live) fn(encode(i, slots_[i].generation), slots_[i].value);
    }

    // Visits, then frees, every entry `owner` holds: fn(value&).
    template <typename Fn>
    void erase_owned_by(uint64_t owner, Fn&& fn) {
        for (uint32_t i = 0; i < slots_.size(); ++i)
            if (slots_[i].live && slots_[i].owner == owner) {
                fn(slots_[i].value);
                release(i);
                --live_;
            }
    }

    // Drops every entry; handles issued so far all become stale.
    void clear() {
        for (uint32_t i = 0; i < slots_.size(); ++i)
            if (slots_[i].live) release(i);
        live_ = 0;
    }

    uint32_t size() const { return live_; }
    uint32_t capacity() const { return capacity_; }

private:
    static constexpr uint32_t kGenMask = (1u << GenBits) - 1;
    struct Slot {
        T value;
        uint64_t owner;
        uint32_t generation;
        bool live;
    };

    // Later use of the slot's handle is stale; the slot is reused unless its
    // next generation is the one it started with. The value goes at once:
    // what it owns (a registration's host alias) must not wait for reuse.
    void release(uint32_t index) {
        Slot& s = slots_[index];
        s.value = T{};
        s.live = false;
        s.generation = (s.generation + 1) & kGenMask;
        if (s.generation != seed_) free_.push_back(index);
    }

    uint64_t encode(uint32_t index, uint32_t gen) const {
        return (uint64_t{static_cast<uint8_t>(kind_)} << 56) | (uint64_t{gen} << 32) | (uint64_t{index} + 1);
    }
    Slot* slot(uint64_t handle) {
        if ((handle >> 56) != static_cast<uint8_t>(kind_)) return nullptr;
        const uint64_t low = handle & 0xFFFFFFFFull;
        if (low == 0 || low > slots_.size()) return nullptr;
        Slot& s = slots_[low - 1];
        if (!s.live || s.generation != ((handle >> 32) & kGenMask)) return nullptr;
        return &s;
    }

    HandleKind kind_;
    uint32_t capacity_;
    uint32_t seed_;
    uint32_t live_ = 0;
    std::vector<Slot> slots_;
    std::vector<uint32_t> free_;
};

} // namespace kvmgpu::vgpu
