// One line that says why a guest's run ended in an exception. Normally the
// VMM's IDT delivers it to a stub that writes the vector to the fault port,
// and describe_exception reads the exception frame; if delivery itself
// fails (a triple fault, KVM_EXIT_SHUTDOWN) describe_guest_fault says what
// the registers still show. Both read the bytes at RIP through the guest's
// own page tables and name the usual culprits (a privileged instruction,
// UD2) outright.
#pragma once

#include <linux/kvm.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "memmap/guest_memory.h"

namespace kvmgpu {

// va -> gpa through the 4-level tables at cr3 (4 KiB, 2 MiB and 1 GiB
// leaves); nullopt when unmapped or a table lies outside RAM.
std::optional<uint64_t> guest_virt_to_phys(const memmap::GuestMemory& mem, uint64_t cr3, uint64_t va);

// What the instruction bytes at RIP are, if a ring-3 guest cannot run them
// ("HLT (privileged)", "UD2 (invalid opcode)"); "" when not recognised.
std::string name_faulting_instruction(std::span<const uint8_t> bytes);

// The line, with why the exception could not be delivered (delivery_failure_reason).
std::string describe_guest_fault(const memmap::GuestMemory& mem, const kvm_regs& regs, const kvm_sregs& sregs);

// Why a triple fault happened, as far as the VMM's exception state shows:
// its registers changed, the guest overwrote the IDT/GDT/TSS/stubs, or the
// page tables at CR3 do not map them (a guest-loaded CR3); else that all of
// it was intact.
std::string delivery_failure_reason(const memmap::GuestMemory& mem, const kvm_sregs& sregs);

// Whether the CPU pushes an error code for exception `vector`.
bool exception_has_error_code(uint32_t vector);

// "#PF (page fault) ..." for `vector` (guest-written: any value), with the
// exception frame read above the stub's saved registers at regs.rsp (the
// ring-0 stack: platform_abi.h, KVMGPU_FAULT_SAVED_BYTES).
std::string describe_exception(const memmap::GuestMemory& mem, uint32_t vector, const kvm_regs& regs,
                               const kvm_sregs& sregs);

} // namespace kvmgpu
