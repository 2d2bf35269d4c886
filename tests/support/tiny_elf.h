// Builds minimal static x86-64 ELF images in memory for tests: one PT_LOAD
// of the given machine code at a physical address, entry at its start.
#pragma once

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

namespace kvmgpu::test {

inline std::vector<uint8_t> tiny_elf(const std::vector<uint8_t>& code, uint64_t paddr = 0x100000,
                                     uint64_t memsz = 0) {
    Elf64_Ehdr eh{};
    std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_type = ET_EXEC;
    eh.e_machine = EM_X86_64;
    eh.e_version = EV_CURRENT;
    eh.e_entry = paddr;
    eh.e_phoff = sizeof(Elf64_Ehdr);
    eh.e_ehsize = sizeof(Elf64_Ehdr);
    eh.e_phentsize = sizeof(Elf64_Phdr);
    eh.e_phnum = 1;
    Elf64_Phdr ph{};
    ph.p_type = PT_LOAD;
    ph.p_flags = PF_R | PF_X;
    ph.p_offset = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
    ph.p_vaddr = ph.p_paddr = paddr;
    ph.p_filesz = code.size();
    ph.p_memsz = memsz ? memsz : code.size();
    ph.p_align = 0x1000;
    std::vector<uint8_t> out(ph.p_offset + code.size());
    std::memcpy(out.data(), &eh, sizeof eh);
    std::memcpy(out.data() + sizeof eh, &ph, sizeof ph);
    std::memcpy(out.data() + ph.p_offset, code.data(), code.size());
    return out;
}

// Offsets into a tiny_elf image, for tests that corrupt fields.
constexpr size_t kPhdrOffset = sizeof(Elf64_Ehdr);

inline std::string write_temp_image(const std::vector<uint8_t>& bytes, const std::string& tag) {
    const std::string path = "/tmp/kvmgpu-test-" + tag + "-" + std::to_string(::getpid()) + ".elf";
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return path;
}

// Machine code snippets (64-bit).
namespace code {
// mov eax, imm32; mov dx, 0x500; out dx, eax; hlt
inline std::vector<uint8_t> exit_with(uint32_t v) {
    return {0xB8, uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24), 0x66, 0xBA, 0x00, 0x05, 0xEF, 0xF4};
}
inline const std::vector<uint8_t> spin = {0xEB, 0xFE};       // jmp $
inline const std::vector<uint8_t> halt = {0xF4};             // hlt
// pxor xmm0,xmm0; movaps xmm1,xmm0; then exit 0: SSE must work at entry.
inline std::vector<uint8_t> sse_then_exit() {
    std::vector<uint8_t> c = {0x66, 0x0F, 0xEF, 0xC0, 0x0F, 0x28, 0xC8};
    auto e = exit_with(0);
    c.insert(c.end(), e.begin(), e.end());
    return c;
}
inline const std::vector<uint8_t> ud2 = {0x0F, 0x0B};        // #UD with no IDT: triple fault

// movabs rax, addr; mov rcx, value (sign-extended imm32); mov [rax], rcx
inline std::vector<uint8_t> store64(uint64_t addr, uint32_t value) {
    std::vector<uint8_t> c = {0x48, 0xB8};
    for (int i = 0; i < 8; ++i) c.push_back(uint8_t(addr >> (8 * i)));
    c.insert(c.end(), {0x48, 0xC7, 0xC1, uint8_t(value), uint8_t(value >> 8), uint8_t(value >> 16),
                       uint8_t(value >> 24), 0x48, 0x89, 0x08});
    return c;
}
inline std::vector<uint8_t> then_exit(std::vector<uint8_t> c, uint32_t code = 0) {
    auto e = exit_with(code);
    c.insert(c.end(), e.begin(), e.end());
    return c;
}
// The runtime's calibration protocol (platform_abi.h): open the window with
// n, count rcx down to 0, close it with that 0; then exit 0.
inline std::vector<uint8_t> calibrate_then_exit(uint64_t cpu_control_calibrate_gpa, uint32_t n) {
    auto c = store64(cpu_control_calibrate_gpa, n);
    c.insert(c.end(), {0x48, 0xFF, 0xC9, 0x75, 0xFB, 0x48, 0x89, 0x08}); // 1: dec rcx; jnz 1b; mov [rax], rcx
    return then_exit(c);
}
} // namespace code

} // namespace kvmgpu::test
