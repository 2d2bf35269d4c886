#include "kvmtool-gpu/vmm/linux/guest_signals.h"

#include <cstdio>
#include <cstring>
#include <iterator>
#include <vector>

#include "kvmtool-gpu/abi/platform_abi.h"
#include "kvmtool-gpu/vmm/linux/signal_fpstate.h"
#include "kvmtool-gpu/vmm/linux/user_return.h"

namespace kvmgpu::linux_abi {

namespace {
// struct rt_sigframe, from its start (the address the handler's RSP holds).
constexpr uint64_t kPretcode = 0, kUc = 8, kFrameBytes = 440;
// Inside the ucontext (struct ucontext: uc_flags, uc_link, uc_stack, uc_mcontext, uc_sigmask).
constexpr uint64_t kUcFlags = 0, kUcStack = 16, kUcMcontext = 40, kUcSigmask = 296, kUcBytes = 304;
constexpr uint64_t kInfo = kUc + kUcBytes; // struct siginfo, 128 bytes
static_assert(kInfo + 128 == kFrameBytes);
// Inside struct sigcontext (the mcontext): the general registers in this order, then the rest.
enum Greg { R8, R9, R10, R11, R12, R13, R14, R15, Rdi, Rsi, Rbp, Rbx, Rdx, Rax, Rcx, Rsp, Rip, Eflags, Segs, Err,
            Trapno, Oldmask, Cr2, Fpstate, kGregs };
constexpr uint64_t kUcSigcontextSs = 0x2, kUcStrictRestoreSs = 0x4;
constexpr uint64_t kRedZone = 128;
constexpr uint64_t kTf = 1ull << 8, kDf = 1ull << 10, kRf = 1ull << 16;
constexpr uint64_t kUserTop = 1ull << 47;

void regs_to_gregs(const kvm_regs& r, uint64_t* g) {
    const uint64_t v[] = {r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15, r.rdi, r.rsi, r.rbp, r.rbx,
                          r.rdx, r.rax, r.rcx, r.rsp, r.rip, r.rflags};
    std::memcpy(g, v, sizeof v);
}

void put(std::vector<uint8_t>& b, uint64_t at, const void* v, size_t n) { std::memcpy(&b[at], v, n); }
template <class T>
void put_obj(std::vector<uint8_t>& b, uint64_t at, const T& v) { put(b, at, &v, sizeof v); }
} // namespace

uint64_t min_signal_stack(const GuestXstate& xs) {
    constexpr uint64_t kFsaveHeader = 112; // struct fregs_state
    const uint64_t fpstate = xs.enabled() ? xs.size + 4 : kFxBytes; // FP_XSTATE_MAGIC2 after an XSAVE area
    return (kFrameBytes + 15 + fpstate + kFsaveHeader + 63 + 15) & ~uint64_t{15};
}

std::variant<Delivered, std::string> push_signal_frame(const UserMemory& mem, const SigAction& act,
                                                       const SignalInfo& info, const FrameIn& in) {
    if (!(act.flags & kSaRestorer) || act.restorer == 0)
        return std::string("its handler has no restorer (SA_RESTORER), which x86-64 Linux requires");
    uint64_t sp = in.regs.rsp - kRedZone;
    const bool have_alt = in.alt.size != 0;
    const bool on_alt_now = have_alt && in.regs.rsp - in.alt.sp < in.alt.size;
    bool on_alt = false;
    if ((act.flags & kSaOnstack) && have_alt && !on_alt_now) {
        sp = in.alt.sp + in.alt.size;
        on_alt = true;
    }
    const std::vector<uint8_t> fpstate = frame_fpstate(in.fpu, in.xstate);
    if (sp < fpstate.size() + kFrameBytes + 64) return std::string("the stack pointer is too low for a signal frame");
    const uint64_t fx_at = (sp - fpstate.size()) & ~uint64_t{63};
    const uint64_t frame = ((fx_at - kFrameBytes) & ~uint64_t{15}) - 8;
    if (on_alt && (frame < in.alt.sp || fx_at + fpstate.size() > in.alt.sp + in.alt.size))
        return std::string("the signal frame does not fit the sigaltstack");

    std::vector<uint8_t> b(kFrameBytes, 0);
    put_obj(b, kPretcode, act.restorer);
    put_obj(b, kUc + kUcFlags, kUcSigcontextSs | kUcStrictRestoreSs | (in.xstate.enabled() ? kUcFpXstate : 0));
    // uc_stack: the sigaltstack as it was (SS_ONSTACK when this frame is on it).
    const int32_t ss_flags = !have_alt ? 2 /* SS_DISABLE */ : (on_alt || on_alt_now) ? 1 /* SS_ONSTACK */ : in.alt.flags;
    put_obj(b, kUc + kUcStack, in.alt.sp);
    put_obj(b, kUc + kUcStack + 8, ss_flags);
    put_obj(b, kUc + kUcStack + 16, in.alt.size);
    uint64_t g[kGregs] = {};
    regs_to_gregs(in.regs, g);
    const uint16_t segs[4] = {KVMGPU_USER_CODE_SELECTOR, 0, 0, KVMGPU_USER_DATA_SELECTOR}; // cs gs fs ss
    std::memcpy(&g[Segs], segs, 8);
    g[Err] = info.error;
    g[Trapno] = info.trapno;
    g[Oldmask] = in.saved_mask;
    g[Cr2] = info.cr2;
    g[Fpstate] = fx_at;
    put(b, kUc + kUcMcontext, g, sizeof g);
    put_obj(b, kUc + kUcSigmask, in.saved_mask);
    // siginfo: signo, errno, code, then the union (si_addr; or si_pid, si_uid).
    const int32_t head[3] = {info.signo, 0, info.code};
    put(b, kInfo, head, sizeof head);
    if (info.from_process) {
        const int32_t pid_uid[2] = {1, 0};
        put(b, kInfo + 16, pid_uid, sizeof pid_uid);
    } else {
        put_obj(b, kInfo + 16, info.addr);
    }
    // Both pieces must be the guest's memory, whole, before anything is written.
    if (!mem.span(frame, kFrameBytes) || !mem.span(fx_at, fpstate.size()))
        return std::string("its stack is not the guest's memory");
    mem.write(fx_at, fpstate.data(), fpstate.size());
    mem.write(frame, b.data(), b.size());

    Delivered d;
    d.regs = in.regs;
    d.regs.rsp = frame;
    d.regs.rip = act.handler;
    d.regs.rdi = static_cast<uint64_t>(info.signo);
    d.regs.rsi = frame + kInfo;
    d.regs.rdx = frame + kUc;
    d.regs.rax = 0;
    d.regs.rflags = user_rflags(in.regs.rflags & ~(kTf | kDf | kRf));
    d.frame = frame;
    d.on_altstack = on_alt;
    return d;
}

std::variant<Restored, std::string> pop_signal_frame(const UserMemory& mem, uint64_t sp, const kvm_regs& now,
                                                     const GuestXstate& xs, uint32_t mxcsr_mask) {
    uint8_t uc[kUcBytes];
    if (!mem.read(sp, uc, sizeof uc)) return std::string("its frame is not the guest's memory");
    uint64_t g[kGregs];
    std::memcpy(g, uc + kUcMcontext, sizeof g);
    Restored r;
    r.regs = now;
    r.regs.r8 = g[R8], r.regs.r9 = g[R9], r.regs.r10 = g[R10], r.regs.r11 = g[R11];
    r.regs.r12 = g[R12], r.regs.r13 = g[R13], r.regs.r14 = g[R14], r.regs.r15 = g[R15];
    r.regs.rdi = g[Rdi], r.regs.rsi = g[Rsi], r.regs.rbp = g[Rbp], r.regs.rbx = g[Rbx];
    r.regs.rdx = g[Rdx], r.regs.rax = g[Rax], r.regs.rcx = g[Rcx], r.regs.rsp = g[Rsp];
    r.regs.rip = g[Rip];
    r.regs.rflags = user_rflags(g[Eflags]);
    if (r.regs.rip >= kUserTop) {
        char line[96];
        std::snprintf(line, sizeof line, "it names RIP 0x%llx, not a canonical user address",
                      static_cast<unsigned long long>(r.regs.rip));
        return std::string(line);
    }
    std::memcpy(&r.mask, uc + kUcSigmask, 8);
    std::memcpy(&r.alt.sp, uc + kUcStack, 8);
    std::memcpy(&r.alt.flags, uc + kUcStack + 8, 4);
    std::memcpy(&r.alt.size, uc + kUcStack + 16, 8);
    auto fpu = fpstate_from_frame(mem, g[Fpstate], xs, mxcsr_mask);
    if (auto* why = std::get_if<std::string>(&fpu)) r.fpu_refused = std::move(*why);
    else r.fpu = std::move(std::get<std::vector<uint8_t>>(fpu));
    return r;
}

std::optional<SignalInfo> fault_signal_info(uint32_t vector, uint64_t error, uint64_t rip, uint64_t cr2) {
    constexpr int kSigIll = 4, kSigTrap = 5, kSigBus = 7, kSigFpe = 8, kSigSegv = 11;
    constexpr int kSiKernel = 0x80;
    SignalInfo i;
    i.trapno = vector;
    i.error = error;
    switch (vector) {
    case 0: i.signo = kSigFpe, i.code = 1 /* FPE_INTDIV */, i.addr = rip; break;
    case 1: i.signo = kSigTrap, i.code = 2 /* TRAP_TRACE */, i.addr = rip; break;
    case 3: i.signo = kSigTrap, i.code = kSiKernel; break;
    case 4:
    case 5:
    case 10:
    case 13: i.signo = kSigSegv, i.code = kSiKernel; break;
    case 6: i.signo = kSigIll, i.code = 2 /* ILL_ILLOPN */, i.addr = rip; break;
    case 11:
    case 12: i.signo = kSigBus, i.code = kSiKernel; break;
    case 14:
        i.signo = kSigSegv;
        i.code = (error & 1) ? 2 /* SEGV_ACCERR */ : 1 /* SEGV_MAPERR */;
        i.addr = i.cr2 = cr2;
        break;
    case 16:
    case 19: i.signo = kSigFpe, i.code = 7 /* FPE_FLTINV */, i.addr = rip; break;
    case 17: i.signo = kSigBus, i.code = 1 /* BUS_ADRALN */; break;
    default: return std::nullopt;
    }
    return i;
}

std::string signal_name(int sig) {
    static const char* const names[] = {"",        "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",   "SIGTRAP",
                                        "SIGABRT", "SIGBUS",  "SIGFPE",    "SIGKILL", "SIGUSR1",  "SIGSEGV",
                                        "SIGUSR2", "SIGPIPE", "SIGALRM",   "SIGTERM", "SIGSTKFLT", "SIGCHLD",
                                        "SIGCONT", "SIGSTOP", "SIGTSTP",   "SIGTTIN", "SIGTTOU",  "SIGURG",
                                        "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO",
                                        "SIGPWR",  "SIGSYS"};
    if (sig > 0 && sig < static_cast<int>(std::size(names))) return names[sig];
    return "signal " + std::to_string(sig);
}

} // namespace kvmgpu::linux_abi
