#include "kvmtool-gpu/vmm/elf_loader.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kvmtool-gpu/abi/platform_abi.h"
#include "memmap/guest_phys_addr.h"

namespace kvmgpu {

using memmap::hex;

namespace {

using elf_check::read_struct;
using elf_check::refuse;

struct Segment {
    uint64_t paddr, memsz, offset, filesz;
    bool exec;
};

std::vector<Segment> validated_segments(const ImageSource& file, uint64_t ram_bytes, uint64_t* entry) {
    const auto eh = elf_check::checked_header(file);
    if (eh.e_type != ET_EXEC) refuse("not a static executable (e_type " + std::to_string(eh.e_type) + ")");

    std::vector<Segment> segs;
    for (uint32_t i = 0; i < eh.e_phnum; ++i) {
        const auto ph = read_struct<Elf64_Phdr>(file, eh.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr), "program header");
        if (ph.p_type == PT_DYNAMIC || ph.p_type == PT_INTERP) refuse("dynamic images are not supported");
        if (ph.p_type != PT_LOAD || ph.p_memsz == 0) continue;
        const std::string where = "segment " + std::to_string(i) + " at " + hex(ph.p_paddr);
        if (ph.p_filesz > ph.p_memsz) refuse(where + ": file size exceeds memory size");
        uint64_t file_end, mem_end;
        if (__builtin_add_overflow(ph.p_offset, ph.p_filesz, &file_end) || file_end > file.size())
            refuse(where + ": data lies past the end of the file (truncated?)");
        if (__builtin_add_overflow(ph.p_paddr, ph.p_memsz, &mem_end)) refuse(where + ": size wraps");
        if (ph.p_paddr < KVMGPU_IMAGE_BASE) refuse(where + ": below the image base " + hex(KVMGPU_IMAGE_BASE));
        if (mem_end > ram_bytes) refuse(where + ": ends at " + hex(mem_end) + ", beyond guest RAM " + hex(ram_bytes));
        if (ph.p_vaddr != ph.p_paddr) refuse(where + ": virtual and physical addresses differ");
        segs.push_back({ph.p_paddr, ph.p_memsz, ph.p_offset, ph.p_filesz, (ph.p_flags & PF_X) != 0});
    }
    if (segs.empty()) refuse("no loadable segment");
    std::sort(segs.begin(), segs.end(), [](const Segment& a, const Segment& b) { return a.paddr < b.paddr; });
    for (size_t i = 1; i < segs.size(); ++i)
        if (segs[i - 1].paddr + segs[i - 1].memsz > segs[i].paddr)
            refuse("segments at " + hex(segs[i - 1].paddr) + " and " + hex(segs[i].paddr) + " overlap");
    const bool entry_ok = std::any_of(segs.begin(), segs.end(), [&](const Segment& s) {
        return s.exec && eh.e_entry >= s.paddr && eh.e_entry - s.paddr < s.memsz;
    });
    if (!entry_ok) refuse("entry point " + hex(eh.e_entry) + " is not inside an executable segment");
    *entry = eh.e_entry;
    return segs;
}

LoadedImage summarize(const std::vector<Segment>& segs, uint64_t entry) {
    return LoadedImage{entry, segs.front().paddr, segs.back().paddr + segs.back().memsz,
                       static_cast<uint32_t>(segs.size())};
}

} // namespace

namespace elf_check {

void refuse(const std::string& why) { throw ImageError("guest image refused: " + why); }

Elf64_Ehdr checked_header(const ImageSource& file) {
    constexpr uint32_t kMaxProgramHeaders = 64;
    const auto eh = read_struct<Elf64_Ehdr>(file, 0, "ELF header");
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) refuse("not an ELF file");
    if (eh.e_ident[EI_CLASS] != ELFCLASS64) refuse("not a 64-bit ELF");
    if (eh.e_ident[EI_DATA] != ELFDATA2LSB) refuse("not little-endian");
    if (eh.e_machine != EM_X86_64) refuse("not an x86-64 image (e_machine " + std::to_string(eh.e_machine) + ")");
    if (eh.e_phentsize != sizeof(Elf64_Phdr)) refuse("bad program header size");
    if (eh.e_phnum == 0 || eh.e_phnum > kMaxProgramHeaders)
        refuse("program header count " + std::to_string(eh.e_phnum) + " outside 1.." +
               std::to_string(kMaxProgramHeaders));
    return eh;
}

} // namespace elf_check

LoadedImage inspect_elf(const ImageSource& file, uint64_t ram_bytes) {
    uint64_t entry = 0;
    return summarize(validated_segments(file, ram_bytes, &entry), entry);
}

LoadedImage load_elf(const ImageSource& file, const memmap::GuestMemory& mem) {
    uint64_t entry = 0;
    const auto segs = validated_segments(file, mem.total_bytes(), &entry);
    for (const auto& s : segs) {
        auto dst = mem.translate(memmap::GuestPhysAddr{s.paddr}, s.memsz);
        if (!dst) refuse("segment at " + hex(s.paddr) + " is not inside one RAM region");
        // SAFETY: dst spans exactly memsz bytes of guest RAM (checked above);
        // filesz <= memsz and the file range was bounds-checked.
        if (s.filesz) file.read(s.offset, dst->data(), s.filesz);
        std::memset(dst->data() + s.filesz, 0, s.memsz - s.filesz);
    }
    return summarize(segs, entry);
}

ImageFile::ImageFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw ImageError("cannot open guest image " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        const std::string why = !S_ISREG(st.st_mode) ? "is not a regular file" : "is empty";
        ::close(fd_);
        throw ImageError("guest image " + path + " " + why);
    }
    size_ = static_cast<uint64_t>(st.st_size);
}

ImageFile::~ImageFile() { ::close(fd_); }

void ImageFile::read(uint64_t offset, void* dst, uint64_t len) const {
    auto* out = static_cast<uint8_t*>(dst);
    while (len > 0) {
        const ssize_t n = ::pread(fd_, out, std::min<uint64_t>(len, 1ull << 30), static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw ImageError("reading guest image " + path_ + " at " + hex(offset) + ": " +
                             (n == 0 ? "unexpected end of file (changed while loading?)" : std::strerror(errno)));
        out += n, offset += static_cast<uint64_t>(n), len -= static_cast<uint64_t>(n);
    }
}

void ImageBytes::read(uint64_t offset, void* dst, uint64_t len) const {
    uint64_t end;
    if (__builtin_add_overflow(offset, len, &end) || end > bytes_.size())
        refuse("read past the end of the image at " + hex(offset));
    std::memcpy(dst, bytes_.data() + offset, len);
}

} // namespace kvmgpu
