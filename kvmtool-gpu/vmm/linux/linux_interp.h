// A dynamic executable's interpreter (ld.so): the file PT_INTERP names,
// read from the guest's root, checked as strictly as the executable (it is
// guest-supplied too), and placed where Linux puts it, at the top of the
// area below the stack (mmap's base), so the brk keeps the room above the
// program and mmap hands out what lies between.
#pragma once

#include <cstdint>
#include <string>

#include "kvmtool-gpu/kvm/unique_fd.h"
#include "kvmtool-gpu/vmm/elf_loader.h"
#include "kvmtool-gpu/vmm/linux/linux_elf.h"

namespace kvmgpu::linux_abi {

// An open regular file read with pread; throws ImageError on a short read.
class FdImage final : public ImageSource {
public:
    // `what` names the file in errors. Throws ImageError when fd is not a regular file.
    FdImage(UniqueFd fd, std::string what);
    uint64_t size() const override { return size_; }
    void read(uint64_t offset, void* dst, uint64_t len) const override;

private:
    UniqueFd fd_;
    std::string what_;
    uint64_t size_ = 0;
};

// The largest alignment honoured when placing an interpreter (a larger
// p_align is legal ELF; Linux caps nothing, but 2 MiB is what a huge-page
// linked ld.so asks and all a guest's RAM layout can spare).
constexpr uint64_t kMaxInterpAlign = 2ull << 20;

// The load bias for `interp` so that its pages end at or below `hi` and
// start at or above `lo`, aligned to its p_align (at most kMaxInterpAlign).
// Refuses (ImageError) an interpreter that is not ET_DYN, names an
// interpreter itself, or does not fit.
uint64_t place_interpreter(const ImageSource& interp, uint64_t lo, uint64_t hi);

} // namespace kvmgpu::linux_abi
