// One line that says why a ring-3 guest stopped with KVM_EXIT_SHUTDOWN. The
// guest has no IDT, so any exception ends the run and its vector is lost;
// what is left is RIP, CR2 (the last page-fault address) and the bytes at
// RIP, read through the guest's own page tables, which name the usual
// culprits (a privileged instruction, UD2) outright.
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

std::string describe_guest_fault(const memmap::GuestMemory& mem, const kvm_regs& regs, const kvm_sregs& sregs);

} // namespace kvmgpu
