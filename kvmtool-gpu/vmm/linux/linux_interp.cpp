#include "kvmtool-gpu/vmm/linux/linux_interp.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kvmtool-gpu/abi/linux_abi.h"

namespace kvmgpu::linux_abi {

FdImage::FdImage(UniqueFd fd, std::string what) : fd_(std::move(fd)), what_(std::move(what)) {
    struct stat st {};
    if (!fd_ || ::fstat(fd_.get(), &st) != 0 || !S_ISREG(st.st_mode))
        elf_check::refuse(what_ + ": not a regular file");
    size_ = static_cast<uint64_t>(st.st_size);
}

void FdImage::read(uint64_t offset, void* dst, uint64_t len) const {
    uint64_t end;
    if (__builtin_add_overflow(offset, len, &end) || end > size_) elf_check::refuse(what_ + ": read past the end");
    auto* out = static_cast<uint8_t*>(dst);
    uint64_t done = 0;
    while (done < len) {
        const ssize_t n = ::pread(fd_.get(), out + done, len - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) elf_check::refuse(what_ + ": " + (n < 0 ? std::strerror(errno) : "shorter than it was"));
        done += static_cast<uint64_t>(n);
    }
}

uint64_t place_interpreter(const ImageSource& interp, uint64_t lo, uint64_t hi) {
    // A first look with the bias at the image base tells the span and the
    // alignment (an ET_DYN's addresses are offsets from its bias).
    const uint64_t probe_base = KVMGPU_IMAGE_BASE;
    const LinuxImage probe = inspect_linux_elf_at(interp, probe_base, UINT64_MAX);
    if (!probe.pie) elf_check::refuse("interpreter: not a shared object (ET_DYN)");
    if (!probe.interp.empty()) elf_check::refuse("interpreter: names an interpreter of its own");
    const uint64_t first = probe.lowest - probe_base; // page aligned
    const uint64_t last = ((probe.end - probe_base) + 4095) & ~uint64_t{4095};
    const uint64_t size = last - first;
    const uint64_t align = std::clamp<uint64_t>(probe.align, 4096, kMaxInterpAlign);
    if (hi < lo || size > hi - lo) elf_check::refuse("interpreter: " + std::to_string(size >> 10) + " KiB do not fit guest RAM (--mem)");
    const uint64_t start = (hi - size) & ~(align - 1);
    if (start < lo || start < first) elf_check::refuse("interpreter: does not fit guest RAM (--mem)");
    return start - first;
}

} // namespace kvmgpu::linux_abi
