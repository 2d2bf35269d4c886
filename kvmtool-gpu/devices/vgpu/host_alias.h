// A host-virtual alias of scattered guest pages: one contiguous range of
// this process's address space whose pages are the guest's own (mremap
// with old size 0 duplicates a shared mapping), so a backend can register
// it and hand out one device address for a buffer the guest built from
// scattered frames (cuMemHostRegister on pageable memory). Only 4 KiB host
// pages can be aliased page by page.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "memmap/scatter_gather.h"

namespace kvmgpu::vgpu {

class HostAlias {
public:
    // runs: the buffer's pieces in order, host views of 4 KiB-page guest
    // RAM; only the first may start, and only the last may end, inside a
    // page. nullptr with *why otherwise, or when the kernel refuses.
    static std::unique_ptr<HostAlias> make(std::span<const memmap::HostRun> runs, std::string* why);
    ~HostAlias();
    HostAlias(const HostAlias&) = delete;
    HostAlias& operator=(const HostAlias&) = delete;

    uint8_t* data() const { return base_ + offset_; } // the buffer's first byte
    uint64_t bytes() const { return bytes_; }
    uint8_t* mapping() const { return base_; }        // page-aligned start of the alias
    uint64_t mapping_bytes() const { return mapped_; }

private:
    HostAlias(uint8_t* base, uint64_t mapped, uint64_t offset, uint64_t bytes)
        : base_(base), mapped_(mapped), offset_(offset), bytes_(bytes) {}
    uint8_t* base_;
    uint64_t mapped_, offset_, bytes_;
};

} // namespace kvmgpu::vgpu
