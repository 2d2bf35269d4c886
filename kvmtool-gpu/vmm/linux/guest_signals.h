// A Linux-ABI guest's signal frames, as the x86-64 kernel lays them out:
// delivering a signal to a handler pushes a struct rt_sigframe (the
// restorer's address, a ucontext with the interrupted registers in its
// mcontext, the saved signal mask and alternate stack, a siginfo) and the
// FPU state (signal_fpstate.h: the XSAVE area where the guest has XSAVE,
// else the 512-byte FXSAVE image) on the thread's stack or its
// sigaltstack, and starts the handler with SA_SIGINFO's arguments (RDI the
// signal, RSI the siginfo, RDX the ucontext); its return lands on the
// restorer, whose rt_sigreturn reads the frame back. Everything read back
// is guest-written: RIP must be a canonical user address, RFLAGS keeps
// what ring 3 may change (user_return.h), the segments are ring 3's
// whatever the frame says, the FPU state is checked as Linux checks it.
// Pure functions over guest memory and register structs: no KVM here.
#pragma once

#include <linux/kvm.h>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kvmtool-gpu/vmm/linux/guest_xstate.h"
#include "kvmtool-gpu/vmm/linux/user_memory.h"

namespace kvmgpu::linux_abi {

// struct kernel_sigaction as rt_sigaction records it.
struct SigAction {
    uint64_t handler = 0, flags = 0, restorer = 0, mask = 0;
};
constexpr uint64_t kSigDefault = 0, kSigIgnore = 1;
constexpr uint64_t kSaSiginfo = 0x4, kSaRestorer = 0x04000000, kSaOnstack = 0x08000000, kSaRestart = 0x10000000,
                   kSaNodefer = 0x40000000, kSaResethand = 0x80000000;

// What siginfo says: the signal, its code, and for a fault the address
// (si_addr); for kill/tgkill the sender (pid 1, uid 0).
struct SignalInfo {
    int signo = 0;
    int code = 0;          // SI_USER, SI_TKILL, SEGV_MAPERR, ...
    uint64_t addr = 0;     // faults: si_addr
    bool from_process = false; // kill/tgkill: si_pid, si_uid
    uint64_t trapno = 0, error = 0, cr2 = 0; // mcontext's trapno, err, cr2 (faults)
};

struct AltStack {
    uint64_t sp = 0, size = 0; // size 0: none
    int32_t flags = 0;         // SS_AUTODISARM as given
};

struct FrameIn {
    kvm_regs regs{};          // the state the handler's return resumes
    uint64_t saved_mask = 0;  // the mask to restore then
    AltStack alt;             // the thread's sigaltstack now
    GuestXstate xstate;       // the guest's XSAVE state (none: FXSAVE only)
    std::vector<uint8_t> fpu; // the FXSAVE image without XSAVE, else KVM_GET_XSAVE's area
};
struct Delivered {
    kvm_regs regs{};          // the handler's entry state (RIP, RSP, RDI, RSI, RDX, RAX 0, RFLAGS)
    uint64_t frame = 0;       // where the frame starts (the restorer's address)
    bool on_altstack = false; // the frame went on the sigaltstack (SS_AUTODISARM then disarms it)
};

// Builds the frame and the handler's entry state; a string says why it
// cannot (no SA_RESTORER, the stack not the guest's: Linux then kills with
// SIGSEGV, and so does the caller).
std::variant<Delivered, std::string> push_signal_frame(const UserMemory& mem, const SigAction& act,
                                                       const SignalInfo& info, const FrameIn& in);

struct Restored {
    kvm_regs regs{};          // RAX included: the interrupted code's value
    uint64_t mask = 0;        // uc_sigmask
    AltStack alt;             // uc_stack, as sigaltstack would be given it
    // The FPU state to load (signal_fpstate.h: the FXSAVE image without
    // XSAVE, else a KVM_SET_XSAVE area); empty when `fpu_refused` says why
    // Linux refuses it: its rt_sigreturn has then restored the registers
    // and the mask, not the sigaltstack, reset the FPU state to the initial
    // one, and sends SIGSEGV.
    std::vector<uint8_t> fpu;
    std::string fpu_refused;
};
// rt_sigreturn with RSP `sp` (the frame's ucontext, its restorer address
// popped) by a guest with `xs`; `now` gives what the frame does not hold.
// A string says why the frame cannot be used at all (the run ends).
std::variant<Restored, std::string> pop_signal_frame(const UserMemory& mem, uint64_t sp, const kvm_regs& now,
                                                     const GuestXstate& xs, uint32_t mxcsr_mask);

// Linux's AT_MINSIGSTKSZ for frames of a guest with `xs`: the frame, the
// FPU state, their alignment, and the 32-bit FSAVE header room that
// kernels with IA32 emulation (the distributions') count, rounded to 16.
uint64_t min_signal_stack(const GuestXstate& xs);

// The signal Linux sends a thread for CPU exception `vector` taken in ring
// 3 (error code `error`, faulting RIP `rip`, CR2 `cr2`): SIGSEGV for #PF
// (SEGV_MAPERR or SEGV_ACCERR at CR2) and #GP, SIGILL for #UD, SIGFPE for
// #DE, #MF and #XM, SIGTRAP for #DB and #BP, SIGBUS for #NP, #SS and #AC;
// nullopt for the vectors Linux does not turn into a signal (NMI, #DF,
// #MC, ...).
std::optional<SignalInfo> fault_signal_info(uint32_t vector, uint64_t error, uint64_t rip, uint64_t cr2);

// "SIGSEGV" for 11, "signal 40" for a number without a name.
std::string signal_name(int sig);

} // namespace kvmgpu::linux_abi
