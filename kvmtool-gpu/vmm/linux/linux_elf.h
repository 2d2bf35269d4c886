// x86-64 Linux executables as guests, static or dynamic: telling them from
// project images, checking every header field, and loading their PT_LOAD
// segments into guest RAM at their virtual addresses plus a load bias
// (guest virtual == guest physical; a PIE at KVMGPU_LINUX_PIE_BASE, an
// interpreter where linux_interp.h places it). A dynamic executable's
// PT_INTERP names its interpreter (ld.so), which the caller loads from the
// guest's root. Errors are ImageError with a one-line what().
#pragma once

#include <cstdint>
#include <string>

#include "kvmtool-gpu/vmm/elf_loader.h"

namespace kvmgpu::linux_abi {

enum class ImageKind {
    Project, // linked by guest-stub/runtime/guest.ld: PT_LOAD headers only
    Linux,   // an ordinary toolchain's static executable
};

// Reads the ELF and program headers only. A project image is an ET_EXEC
// whose program headers are all PT_LOAD (guest.ld's PHDRS); a Linux one is
// an ET_EXEC or ET_DYN with any other header (every ordinary link emits
// PT_GNU_STACK; glibc programs also PT_TLS and PT_NOTE).
ImageKind classify_image(const ImageSource& image);

struct LinuxImage {
    uint64_t entry = 0;
    uint64_t base = 0;     // load bias: 0 for ET_EXEC, the placement of an ET_DYN
    uint64_t phdr = 0;     // guest address of the program headers (AT_PHDR)
    uint32_t phnum = 0;
    uint64_t lowest = 0;   // lowest loaded address (page aligned down)
    uint64_t end = 0;      // one past the highest loaded byte
    uint64_t align = 4096; // the largest PT_LOAD p_align (a power of two, at least a page)
    bool pie = false;
    std::string interp;    // PT_INTERP's path (empty: static)
};

// The longest interpreter path accepted (Linux: one page, NUL included).
constexpr uint64_t kMaxInterpPath = 4096;

// Validates a Linux executable for a guest whose image must fit in
// [KVMGPU_IMAGE_BASE, limit); an ET_DYN goes at KVMGPU_LINUX_PIE_BASE.
LinuxImage inspect_linux_elf(const ImageSource& image, uint64_t limit);
// The same with an ET_DYN's load bias given (`dyn_base`, page aligned).
LinuxImage inspect_linux_elf_at(const ImageSource& image, uint64_t dyn_base, uint64_t limit);
// Validates, then copies each segment's file bytes and zero-fills the rest.
LinuxImage load_linux_elf(const ImageSource& image, const memmap::GuestMemory& mem, uint64_t limit);
LinuxImage load_linux_elf_at(const ImageSource& image, const memmap::GuestMemory& mem, uint64_t dyn_base,
                             uint64_t limit);

} // namespace kvmgpu::linux_abi
