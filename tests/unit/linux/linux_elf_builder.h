// A Linux executable built in memory for the loader's tests (linux_elf_test,
// the fuzz smoke test's seeds).
#pragma once

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace kvmgpu::linux_abi {

// An ELF laid out as ld lays out a static executable: the first PT_LOAD
// starts at file offset 0 (so it holds the headers), code after them,
// then a data segment with .bss, a PT_TLS and a PT_GNU_STACK.
struct LinuxElf {
    Elf64_Ehdr eh{};
    std::vector<Elf64_Phdr> ph;
    std::vector<uint8_t> body = std::vector<uint8_t>(0x2000, 0x90);

    explicit LinuxElf(bool pie = false) {
        std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
        eh.e_ident[EI_CLASS] = ELFCLASS64;
        eh.e_ident[EI_DATA] = ELFDATA2LSB;
        eh.e_ident[EI_VERSION] = EV_CURRENT;
        eh.e_type = pie ? ET_DYN : ET_EXEC;
        eh.e_machine = EM_X86_64;
        eh.e_version = EV_CURRENT;
        eh.e_phoff = sizeof(Elf64_Ehdr);
        eh.e_phentsize = sizeof(Elf64_Phdr);
        const uint64_t base = pie ? 0 : 0x400000;
        eh.e_entry = base + 0x1000;
        ph.push_back(seg(PT_LOAD, PF_R | PF_X, 0, base, 0x1800, 0x1800));
        ph.push_back(seg(PT_LOAD, PF_R | PF_W, 0x1800, base + 0x2800, 0x800, 0x3000));
        ph.push_back(seg(PT_TLS, PF_R, 0x1800, base + 0x2800, 0x10, 0x20));
        ph.push_back(seg(PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0));
        if (pie) ph.push_back(seg(PT_DYNAMIC, PF_R | PF_W, 0x1900, base + 0x2900, 0x100, 0x100));
    }
    static Elf64_Phdr seg(uint32_t type, uint32_t flags, uint64_t off, uint64_t vaddr, uint64_t filesz, uint64_t memsz) {
        Elf64_Phdr p{};
        p.p_type = type, p.p_flags = flags, p.p_offset = off, p.p_vaddr = p.p_paddr = vaddr;
        p.p_filesz = filesz, p.p_memsz = memsz, p.p_align = type == PT_LOAD ? 0x1000 : 8;
        return p;
    }
    std::vector<uint8_t> bytes() {
        eh.e_phnum = static_cast<uint16_t>(ph.size());
        std::vector<uint8_t> out = body;
        std::memcpy(out.data(), &eh, sizeof eh);
        std::memcpy(out.data() + sizeof eh, ph.data(), ph.size() * sizeof(Elf64_Phdr));
        out[0x1000] = 0xCC; // the entry's first byte, checked after loading
        out[0x1800] = 0x5A; // the data segment's first byte
        return out;
    }
};

} // namespace kvmgpu::linux_abi
