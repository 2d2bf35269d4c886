#include "kvmtool-gpu/vmm/guest_fault.h"

#include <cstdio>

namespace kvmgpu {

namespace {
constexpr uint64_t kPresent = 1, kLarge = 1ull << 7, kAddrMask = 0x000FFFFFFFFFF000ull;
} // namespace

std::optional<uint64_t> guest_virt_to_phys(const memmap::GuestMemory& mem, uint64_t cr3, uint64_t va) {
    uint64_t table = cr3 & kAddrMask;
    for (int level = 4; level >= 1; --level) {
        const int shift = 12 + 9 * (level - 1);
        const uint64_t index = (va >> shift) & 511;
        const auto entry = mem.read_obj<uint64_t>(memmap::GuestPhysAddr{table + index * 8});
        if (!entry || !(*entry & kPresent)) return std::nullopt;
        const bool leaf = level == 1 || ((level == 2 || level == 3) && (*entry & kLarge));
        if (leaf) {
            const uint64_t page_mask = (1ull << shift) - 1;
            return ((*entry & kAddrMask) & ~page_mask) | (va & page_mask);
        }
        table = *entry & kAddrMask;
    }
    return std::nullopt;
}

std::string name_faulting_instruction(std::span<const uint8_t> b) {
    if (b.empty()) return "";
    switch (b[0]) {
    case 0xF4: return "HLT (privileged)";
    case 0xFA: return "CLI (needs IOPL 3)";
    case 0xFB: return "STI (needs IOPL 3)";
    case 0xCC: return "INT3 (no handler)";
    case 0xCD: return "INT n (no handler)";
    default: break;
    }
    if (b[0] != 0x0F || b.size() < 2) return "";
    switch (b[1]) {
    case 0x0B: return "UD2 (invalid opcode)";
    case 0x05: return "SYSCALL (no handler)";
    case 0x30: return "WRMSR (privileged)";
    case 0x32: return "RDMSR (privileged)";
    case 0x20: case 0x22: return "MOV to/from a control register (privileged)";
    case 0x01: return "a system instruction (0F 01: LGDT/LIDT/INVLPG/...; privileged)";
    case 0x06: return "CLTS (privileged)";
    case 0x09: return "WBINVD (privileged)";
    default: return "";
    }
}

std::string describe_guest_fault(const memmap::GuestMemory& mem, const kvm_regs& regs, const kvm_sregs& sregs) {
    char line[384];
    std::string bytes_text = "unreadable";
    std::string culprit;
    uint8_t bytes[15];
    size_t got = 0;
    for (; got < sizeof bytes; ++got) { // byte by byte: the instruction may straddle a page
        const auto gpa = guest_virt_to_phys(mem, sregs.cr3, regs.rip + got);
        if (!gpa || !mem.read(memmap::GuestPhysAddr{*gpa}, &bytes[got], 1)) break;
    }
    if (got) {
        bytes_text.clear();
        for (size_t i = 0; i < std::min<size_t>(got, 8); ++i) {
            char b[4];
            std::snprintf(b, sizeof b, i ? " %02x" : "%02x", bytes[i]);
            bytes_text += b;
        }
        culprit = name_faulting_instruction({bytes, got});
    }
    std::snprintf(line, sizeof line,
                  "guest fault at CPL%u, no exception handler: RIP 0x%llx (bytes %s%s%s), CR2 0x%llx (last page-fault "
                  "address), RSP 0x%llx",
                  static_cast<unsigned>(sregs.cs.selector & 3), static_cast<unsigned long long>(regs.rip),
                  bytes_text.c_str(), culprit.empty() ? "" : ": ", culprit.c_str(),
                  static_cast<unsigned long long>(sregs.cr2), static_cast<unsigned long long>(regs.rsp));
    return line;
}

} // namespace kvmgpu
