// Loads a static x86-64 ELF guest image into guest RAM. Every header field
// is checked before anything else is read: a malformed, truncated,
// overlapping or out-of-RAM image is refused with an ImageError whose what()
// is one line. A file is read with pread, headers first, then each segment
// straight into guest RAM: a huge non-ELF file costs one 64-byte read.
#pragma once

#include <elf.h>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

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

// Where an image's bytes come from. read() copies [offset, offset + len)
// or throws ImageError (past the end, I/O error).
class ImageSource {
public:
    virtual ~ImageSource() = default;
    virtual uint64_t size() const = 0;
    virtual void read(uint64_t offset, void* dst, uint64_t len) const = 0;
};

// A guest image file, opened read-only; throws ImageError naming the path
// and errno, or when it is not a regular, non-empty file.
class ImageFile final : public ImageSource {
public:
    explicit ImageFile(const std::string& path);
    ~ImageFile() override;
    ImageFile(const ImageFile&) = delete;
    ImageFile& operator=(const ImageFile&) = delete;
    uint64_t size() const override { return size_; }
    void read(uint64_t offset, void* dst, uint64_t len) const override;

private:
    std::string path_;
    int fd_ = -1;
    uint64_t size_ = 0;
};

// An image already in memory (tests).
class ImageBytes final : public ImageSource {
public:
    explicit ImageBytes(std::span<const uint8_t> bytes) : bytes_(bytes) {}
    uint64_t size() const override { return bytes_.size(); }
    void read(uint64_t offset, void* dst, uint64_t len) const override;

private:
    std::span<const uint8_t> bytes_;
};

// Shared by this loader and the Linux-ABI one (linux/linux_elf.h).
namespace elf_check {
// Throws ImageError("guest image refused: " + why).
[[noreturn]] void refuse(const std::string& why);
// Copies a T at `offset` out of the file after checking that it fits.
template <typename T>
T read_struct(const ImageSource& file, uint64_t offset, const char* what) {
    uint64_t end;
    if (__builtin_add_overflow(offset, sizeof(T), &end) || end > file.size())
        refuse(std::string(what) + " lies past the end of the file (truncated?)");
    T out;
    file.read(offset, &out, sizeof(T));
    return out;
}
// The ELF header of a little-endian 64-bit x86-64 file with 1..64 program
// headers of the standard size; e_type is the caller's to check.
Elf64_Ehdr checked_header(const ImageSource& file);
} // namespace elf_check

// Parses and validates, reading headers only.
LoadedImage inspect_elf(const ImageSource& image, uint64_t ram_bytes);
// Validates, then reads each PT_LOAD to its p_paddr and zero-fills the rest
// of its memsz.
LoadedImage load_elf(const ImageSource& image, const memmap::GuestMemory& mem);
inline LoadedImage inspect_elf(std::span<const uint8_t> bytes, uint64_t ram_bytes) {
    return inspect_elf(ImageBytes(bytes), ram_bytes);
}
inline LoadedImage load_elf(std::span<const uint8_t> bytes, const memmap::GuestMemory& mem) {
    return load_elf(ImageBytes(bytes), mem);
}

} // namespace kvmgpu
