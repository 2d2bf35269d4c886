#include "kvmtool-gpu/vmm/guest_fault.h"

#include <cstdio>
#include <iterator>

#include "kvmtool-gpu/abi/platform_abi.h"
#include "kvmtool-gpu/vmm/boot_state.h"

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

namespace {

// Up to 8 bytes at va as hex, and the culprit's name if recognised.
std::string instruction_at(const memmap::GuestMemory& mem, uint64_t cr3, uint64_t va) {
    uint8_t bytes[15];
    size_t got = 0;
    for (; got < sizeof bytes; ++got) { // byte by byte: the instruction may straddle a page
        const auto gpa = guest_virt_to_phys(mem, cr3, va + got);
        if (!gpa || !mem.read(memmap::GuestPhysAddr{*gpa}, &bytes[got], 1)) break;
    }
    if (got == 0) return "bytes unreadable";
    std::string text = "bytes";
    for (size_t i = 0; i < std::min<size_t>(got, 8); ++i) {
        char b[4];
        std::snprintf(b, sizeof b, " %02x", bytes[i]);
        text += b;
    }
    const std::string culprit = name_faulting_instruction({bytes, got});
    return culprit.empty() ? text : text + ": " + culprit;
}

const char* vector_name(uint32_t v) {
    static const char* const names[] = {
        "#DE (divide error)", "#DB (debug)", "NMI", "#BP (breakpoint)", "#OF (overflow)", "#BR (bound range)",
        "#UD (invalid opcode)", "#NM (device not available)", "#DF (double fault)", "vector 9",
        "#TS (invalid TSS)", "#NP (segment not present)", "#SS (stack fault)", "#GP (general protection)",
        "#PF (page fault)", "vector 15", "#MF (x87 error)", "#AC (alignment check)", "#MC (machine check)",
        "#XM (SIMD floating-point)", "#VE (virtualization)", "#CP (control protection)"};
    return v < std::size(names) ? names[v] : "a reserved vector";
}

} // namespace

bool exception_has_error_code(uint32_t v) {
    return v == 8 || (v >= 10 && v <= 14) || v == 17 || v == 21 || v == 29 || v == 30;
}

std::string describe_exception(const memmap::GuestMemory& mem, uint32_t vector, const kvm_regs& regs,
                               const kvm_sregs& sregs) {
    // The frame the CPU pushed on the ring-0 stack: [error code,] RIP, CS,
    // RFLAGS, RSP, SS; below it the stub's saved RAX and RDX.
    const uint64_t cpu_frame = regs.rsp + KVMGPU_FAULT_SAVED_BYTES;
    const uint64_t frame = cpu_frame + (exception_has_error_code(vector) ? 8 : 0);
    const auto error = mem.read_obj<uint64_t>(memmap::GuestPhysAddr{cpu_frame});
    const auto rip = mem.read_obj<uint64_t>(memmap::GuestPhysAddr{frame});
    const auto cs = mem.read_obj<uint64_t>(memmap::GuestPhysAddr{frame + 8});
    const auto rsp = mem.read_obj<uint64_t>(memmap::GuestPhysAddr{frame + 24});
    char line[384];
    if (vector >= 32 || !rip || !cs || !rsp) {
        std::snprintf(line, sizeof line, "guest fault: vector %u, exception frame unreadable (stub RSP 0x%llx)", vector,
                      static_cast<unsigned long long>(regs.rsp));
        return line;
    }
    char access[96] = "";
    if (vector == 14 && error)
        std::snprintf(access, sizeof access, ", accessing 0x%llx (%s%s, %s)", static_cast<unsigned long long>(sregs.cr2),
                      (*error & 2) ? "write" : "read", (*error & 16) ? ", instruction fetch" : "",
                      (*error & 1) ? "protection" : "not present");
    else if (exception_has_error_code(vector) && error && *error)
        std::snprintf(access, sizeof access, ", error code 0x%llx", static_cast<unsigned long long>(*error));
    std::snprintf(line, sizeof line, "guest fault: %s at CPL%u, RIP 0x%llx (%s)%s, RSP 0x%llx", vector_name(vector),
                  static_cast<unsigned>(*cs & 3), static_cast<unsigned long long>(*rip),
                  instruction_at(mem, sregs.cr3, *rip).c_str(), access, static_cast<unsigned long long>(*rsp));
    return line;
}

std::string delivery_failure_reason(const memmap::GuestMemory& mem, const kvm_sregs& sregs) {
    char line[192];
    if (sregs.idt.base != KVMGPU_IDT_GPA || sregs.gdt.base != KVMGPU_GDT_GPA || sregs.tr.base != KVMGPU_TSS_GPA)
        return "the IDT, GDT or TR register no longer names the VMM's";
    if (const std::string damaged = boot_exception_state_damage(mem); !damaged.empty())
        return "the guest overwrote the VMM's " + damaged;
    const struct {
        const char* what;
        uint64_t va;
    } needed[] = {{"IDT", KVMGPU_IDT_GPA},
                  {"GDT", KVMGPU_GDT_GPA},
                  {"TSS", KVMGPU_TSS_GPA},
                  {"exception stubs", KVMGPU_FAULT_STUBS_GPA},
                  {"exception stack", KVMGPU_FAULT_STACK_TOP - 8}};
    for (const auto& n : needed)
        if (guest_virt_to_phys(mem, sregs.cr3, n.va) != n.va) {
            std::snprintf(line, sizeof line, "the page tables at CR3 0x%llx do not map the VMM's %s at 0x%llx",
                          static_cast<unsigned long long>(sregs.cr3), n.what, static_cast<unsigned long long>(n.va));
            return line;
        }
    return "the VMM's IDT, GDT, TSS, exception stubs and stack are intact and mapped: the CPU refused the delivery "
           "itself";
}

std::string describe_guest_fault(const memmap::GuestMemory& mem, const kvm_regs& regs, const kvm_sregs& sregs) {
    char line[384];
    std::snprintf(line, sizeof line,
                  "guest fault at CPL%u, not delivered (triple fault): RIP 0x%llx (%s), CR2 0x%llx (last page-fault "
                  "address), RSP 0x%llx",
                  static_cast<unsigned>(sregs.cs.selector & 3), static_cast<unsigned long long>(regs.rip),
                  instruction_at(mem, sregs.cr3, regs.rip).c_str(), static_cast<unsigned long long>(sregs.cr2),
                  static_cast<unsigned long long>(regs.rsp));
    return std::string(line) + "; undeliverable because " + delivery_failure_reason(mem, sregs);
}

} // namespace kvmgpu
