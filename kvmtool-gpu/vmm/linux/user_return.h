// The ring-3 state a Linux-ABI guest gets back from a system call. The
// VMM returns itself (no SYSRET runs: kvm-pvm ends the VM on one), so it
// applies what SYSRET and Linux's return path apply: RIP from RCX only when
// that is a canonical user address (Linux falls back to IRET there, whose
// #GP becomes SIGSEGV; here the run ends with a guest fault), RFLAGS from
// R11 filtered to what ring 3 may change itself.
#pragma once

#include <cstdint>
#include <string>

namespace kvmgpu::linux_abi {

// RFLAGS a Linux-ABI guest runs with from its first instruction: IF and
// the reserved bit 1; IOPL 0, so CLI, STI, IN and OUT fault in ring 3.
inline constexpr uint64_t kUserRflags = (1ull << 9) | (1ull << 1);

// R11's CF PF AF ZF SF TF DF OF AC ID, on kUserRflags: never IOPL, NT, RF,
// VM, VIF or VIP, never IF clear.
uint64_t user_rflags(uint64_t r11);

// "" when RCX is a user address to return to (the lower canonical half);
// else the one line that ends the run.
std::string user_return_refusal(uint64_t rcx);

} // namespace kvmgpu::linux_abi
