// Which shared memory objects back a range of this process's address space,
// read from /proc/self/maps. A GPU worker compares its own answer with the
// VMM's before it uses a host pointer of the VMM's: equal answers mean the
// same pages at the same address in both processes (guest RAM mapped
// MAP_SHARED before the worker was forked), not a copy-on-write snapshot.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "memmap/fork_sharing.h"

namespace kvmgpu::vgpu {

// One stretch of the range backed by one object, contiguous in it.
struct SharedPiece {
    uint64_t start, end; // [start, end): clipped to the range asked about
    uint64_t dev, inode; // the object (shmem of a MAP_SHARED|MAP_ANONYMOUS mapping, a hugetlbfs file)
    uint64_t offset;     // offset in the object at `start`
    bool operator==(const SharedPiece&) const = default;
};

// The first mapping in this process that holds a VM's memory or vCPU state
// (guest RAM, a worker channel, vGPU counters, a kvm_run page) and lies
// outside `own`, described in one line; nullopt if there is none. A GPU
// worker checks this before it makes its backend: it must hold its own VM
// and nothing of any other.
std::optional<std::string> foreign_vm_mapping(std::span<const memmap::ForkShare> own);

// nullopt if bytes is 0, the range wraps, or any byte of it is unmapped or
// mapped privately (MAP_PRIVATE: a forked process would see a snapshot).
std::optional<std::vector<SharedPiece>> shared_pieces(const void* addr, uint64_t bytes);

} // namespace kvmgpu::vgpu
