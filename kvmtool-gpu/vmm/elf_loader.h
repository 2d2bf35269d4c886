// Loads a static x86-64 ELF guest image into guest RAM. Every header field
// is checked: a malformed, truncated, overlapping or out-of-RAM image is
// refused with an ImageError whose what() is one line.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "memmap/guest_memory.h"

namespace kvmgpu {

struct ImageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct LoadedImage {
    uint64_t entry = 0;
    uint64_t lowest = 0;   // lowest loaded GPA
    uint64_t end = 0;      // one past the highest loaded byte
    uint32_t segments = 0;
};

// Parses and validates without touching memory (for tests and --check).
LoadedImage inspect_elf(std::span<const uint8_t> file, uint64_t ram_bytes);
// Validates, then copies each PT_LOAD to its p_paddr and zero-fills the rest
// of its memsz.
LoadedImage load_elf(std::span<const uint8_t> file, const memmap::GuestMemory& mem);

// Reads a whole file; throws ImageError naming the path and errno.
std::vector<uint8_t> read_image_file(const std::string& path);

} // namespace kvmgpu
