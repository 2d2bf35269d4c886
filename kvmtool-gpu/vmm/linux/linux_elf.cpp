#include "kvmtool-gpu/vmm/linux/linux_elf.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kvmtool-gpu/abi/linux_abi.h"
#include "memmap/guest_phys_addr.h"

namespace kvmgpu::linux_abi {

using memmap::hex;

namespace {

using elf_check::checked_header;
using elf_check::read_struct;
using elf_check::refuse;

std::vector<Elf64_Phdr> program_headers(const ImageSource& file, const Elf64_Ehdr& eh) {
    std::vector<Elf64_Phdr> out;
    for (uint32_t i = 0; i < eh.e_phnum; ++i)
        out.push_back(read_struct<Elf64_Phdr>(file, eh.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr), "program header"));
    return out;
}

struct Segment {
    uint64_t addr, memsz, offset, filesz;
    bool exec;
};

struct Checked {
    LinuxImage image;
    std::vector<Segment> segs;
};

// PT_INTERP: a path of 1..kMaxInterpPath-1 bytes inside the file, ending
// in its only NUL, and only one such header.
std::string interp_path(const ImageSource& file, const Elf64_Phdr& ph) {
    uint64_t end;
    if (ph.p_filesz < 2 || ph.p_filesz > kMaxInterpPath) refuse("interpreter path: bad length");
    if (__builtin_add_overflow(ph.p_offset, ph.p_filesz, &end) || end > file.size())
        refuse("interpreter path lies past the end of the file (truncated?)");
    std::string path(ph.p_filesz, '\0');
    file.read(ph.p_offset, path.data(), ph.p_filesz);
    if (path.back() != '\0' || path.find('\0') != path.size() - 1) refuse("interpreter path: not one NUL-terminated string");
    path.pop_back();
    return path;
}

Checked check(const ImageSource& file, uint64_t dyn_base, uint64_t limit) {
    const auto eh = checked_header(file);
    if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
        refuse("not an executable (e_type " + std::to_string(eh.e_type) + ")");
    const auto phs = program_headers(file, eh);
    Checked c;
    c.image.pie = eh.e_type == ET_DYN;
    if (dyn_base % 4096) refuse("load address " + hex(dyn_base) + " not page aligned");
    c.image.base = c.image.pie ? dyn_base : 0;
    const uint64_t base = c.image.base;
    uint64_t phdr_offset_in_file = eh.e_phoff, phdr_addr = 0;
    bool phdr_found = false;
    for (size_t i = 0; i < phs.size(); ++i) {
        const auto& ph = phs[i];
        if (ph.p_type == PT_INTERP) {
            if (!c.image.interp.empty()) refuse("more than one interpreter (PT_INTERP)");
            c.image.interp = interp_path(file, ph);
        }
        if (ph.p_type != PT_LOAD || ph.p_memsz == 0) continue;
        uint64_t addr, mem_end, file_end;
        if (__builtin_add_overflow(ph.p_vaddr, base, &addr) || __builtin_add_overflow(addr, ph.p_memsz, &mem_end))
            refuse("segment " + std::to_string(i) + ": address wraps");
        const std::string where = "segment " + std::to_string(i) + " at " + hex(addr);
        if (ph.p_filesz > ph.p_memsz) refuse(where + ": file size exceeds memory size");
        if (__builtin_add_overflow(ph.p_offset, ph.p_filesz, &file_end) || file_end > file.size())
            refuse(where + ": data lies past the end of the file (truncated?)");
        if (ph.p_align > 1 && ((ph.p_align & (ph.p_align - 1)) || (ph.p_vaddr - ph.p_offset) % std::min<uint64_t>(ph.p_align, 4096)))
            refuse(where + ": bad alignment");
        if (ph.p_align > c.image.align) c.image.align = ph.p_align;
        if (addr < KVMGPU_IMAGE_BASE) refuse(where + ": below " + hex(KVMGPU_IMAGE_BASE) + " (the VMM's boot area)");
        if (mem_end > limit) refuse(where + ": ends at " + hex(mem_end) + ", beyond the " + hex(limit) + " a program may use in this guest (--mem)");
        if (phdr_offset_in_file >= ph.p_offset && phdr_offset_in_file - ph.p_offset < ph.p_filesz &&
            ph.p_filesz - (phdr_offset_in_file - ph.p_offset) >= uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr)) {
            phdr_found = true;
            phdr_addr = addr + (phdr_offset_in_file - ph.p_offset);
        }
        c.segs.push_back({addr, ph.p_memsz, ph.p_offset, ph.p_filesz, (ph.p_flags & PF_X) != 0});
    }
    if (c.segs.empty()) refuse("no loadable segment");
    if (!phdr_found) refuse("program headers are not inside a loaded segment (AT_PHDR)");
    std::sort(c.segs.begin(), c.segs.end(), [](const Segment& a, const Segment& b) { return a.addr < b.addr; });
    for (size_t i = 1; i < c.segs.size(); ++i)
        if (c.segs[i - 1].addr + c.segs[i - 1].memsz > c.segs[i].addr)
            refuse("segments at " + hex(c.segs[i - 1].addr) + " and " + hex(c.segs[i].addr) + " overlap");
    uint64_t entry;
    if (__builtin_add_overflow(eh.e_entry, base, &entry)) refuse("entry point wraps");
    const bool entry_ok = std::any_of(c.segs.begin(), c.segs.end(), [&](const Segment& s) {
        return s.exec && entry >= s.addr && entry - s.addr < s.memsz;
    });
    if (!entry_ok) refuse("entry point " + hex(entry) + " is not inside an executable segment");
    c.image.entry = entry;
    c.image.phdr = phdr_addr;
    c.image.phnum = eh.e_phnum;
    c.image.lowest = c.segs.front().addr & ~uint64_t{0xfff};
    for (const auto& s : c.segs) c.image.end = std::max(c.image.end, s.addr + s.memsz);
    return c;
}

} // namespace

ImageKind classify_image(const ImageSource& file) {
    const auto eh = checked_header(file);
    const auto phs = program_headers(file, eh);
    bool only_load = true;
    for (const auto& ph : phs)
        if (ph.p_type != PT_LOAD) only_load = false;
    if (eh.e_type == ET_EXEC && only_load) return ImageKind::Project;
    return ImageKind::Linux;
}

LinuxImage inspect_linux_elf(const ImageSource& file, uint64_t limit) {
    return check(file, KVMGPU_LINUX_PIE_BASE, limit).image;
}

LinuxImage inspect_linux_elf_at(const ImageSource& file, uint64_t dyn_base, uint64_t limit) {
    return check(file, dyn_base, limit).image;
}

LinuxImage load_linux_elf(const ImageSource& file, const memmap::GuestMemory& mem, uint64_t limit) {
    return load_linux_elf_at(file, mem, KVMGPU_LINUX_PIE_BASE, limit);
}

LinuxImage load_linux_elf_at(const ImageSource& file, const memmap::GuestMemory& mem, uint64_t dyn_base,
                             uint64_t limit) {
    const auto c = check(file, dyn_base, limit);
    for (const auto& s : c.segs) {
        auto dst = mem.translate(memmap::GuestPhysAddr{s.addr}, s.memsz);
        if (!dst) refuse("segment at " + hex(s.addr) + " is not inside guest RAM");
        // SAFETY: dst spans exactly memsz bytes of guest RAM; filesz <= memsz and the file range was checked.
        if (s.filesz) file.read(s.offset, dst->data(), s.filesz);
        std::memset(dst->data() + s.filesz, 0, s.memsz - s.filesz);
    }
    return c.image;
}

} // namespace kvmgpu::linux_abi
