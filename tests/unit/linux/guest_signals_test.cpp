// Signal frames as the x86-64 kernel lays them out, and the server's
// signal bookkeeping: a frame pushed and read back gives every register
// again; what comes back from the guest is checked (RIP canonical, RFLAGS
// filtered, the FPU pointer aligned and the guest's); the stack, the
// sigaltstack and SS_AUTODISARM; each exception's signal; kill/tgkill of
// the guest's own process pending until unblocked, default actions, and
// the handler's mask, SA_NODEFER and SA_RESETHAND.
#include <sys/syscall.h>

#include <linux/sched.h>

#include <gtest/gtest.h>

#include <cstring>

#include "kvmtool-gpu/abi/platform_abi.h"
#include "kvmtool-gpu/vmm/linux/guest_signals.h"
#include "kvmtool-gpu/vmm/linux/signal_fpstate.h"
#include "tests/unit/linux/server_fixture.h"

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;

constexpr int kSigUsr1 = 10, kSigUsr2 = 12, kSigSegv = 11, kSigChld = 17, kSigTerm = 15;

SigAction handler_at(uint64_t handler, uint64_t flags = kSaSiginfo | kSaRestorer) {
    return SigAction{handler, flags, 0x401000, 0};
}

kvm_regs some_regs() {
    kvm_regs r{};
    uint64_t* all = reinterpret_cast<uint64_t*>(&r);
    for (size_t i = 0; i < sizeof r / 8; ++i) all[i] = 0x1000 + i;
    r.rsp = 31 * kMiB - 1000; // on the fixture's stack
    r.rip = 0x400123;
    r.rflags = 0x202 | 0x1 | (1ull << 8); // CF, TF
    return r;
}

struct Signals : Server {
    std::variant<Delivered, std::string> push(const SigAction& act, const FrameIn& in, int sig = kSigSegv) {
        SignalInfo info;
        info.signo = sig;
        info.code = 1;
        info.addr = 0xdead000;
        return push_signal_frame(server->user_memory(), act, info, in);
    }
    void set_action(int sig, const SigAction& a) {
        std::memcpy(at(kBuf + 4000), &a, sizeof a);
        ASSERT_EQ(ret(SYS_rt_sigaction, sig, kBuf + 4000, 0, 8), 0);
    }
};

TEST_F(Signals, AFramePushedAndReadBackGivesEveryRegister) {
    make(false);
    FrameIn in;
    in.regs = some_regs();
    in.saved_mask = 0x5a5a;
    in.fpu.assign(512, 0); // the FXSAVE image: a guest without XSAVE
    in.fpu[24] = 0x80; // MXCSR's low byte
    in.fpu[160] = 0x77; // XMM0
    auto pushed = push(handler_at(0x402000), in);
    ASSERT_TRUE(std::holds_alternative<Delivered>(pushed)) << std::get<std::string>(pushed);
    const Delivered d = std::get<Delivered>(pushed);
    // The handler's entry: SA_SIGINFO's arguments, 16-byte alignment minus the return address.
    EXPECT_EQ(d.regs.rip, 0x402000u);
    EXPECT_EQ(d.regs.rsp, d.frame);
    EXPECT_EQ(d.regs.rsp % 16, 8u);
    EXPECT_LT(d.frame + 440 + 512, in.regs.rsp - 128 + 64) << "below the red zone";
    EXPECT_EQ(d.regs.rdi, static_cast<uint64_t>(kSigSegv));
    EXPECT_EQ(d.regs.rsi, d.frame + 312);
    EXPECT_EQ(d.regs.rdx, d.frame + 8);
    EXPECT_EQ(d.regs.rflags & (1ull << 8), 0u) << "TF off in the handler";
    uint64_t restorer;
    std::memcpy(&restorer, at(d.frame), 8);
    EXPECT_EQ(restorer, 0x401000u);
    int32_t signo, code;
    uint64_t addr;
    std::memcpy(&signo, at(d.frame + 312), 4);
    std::memcpy(&code, at(d.frame + 320), 4);
    std::memcpy(&addr, at(d.frame + 328), 8);
    EXPECT_EQ(signo, kSigSegv);
    EXPECT_EQ(code, 1);
    EXPECT_EQ(addr, 0xdead000u);
    // mcontext's RIP (gregs[16]) where glibc's REG_RIP reads it.
    uint64_t rip;
    std::memcpy(&rip, at(d.frame + 8 + 40 + 16 * 8), 8);
    EXPECT_EQ(rip, 0x400123u);

    // The handler returns into the restorer: RSP is the frame plus 8.
    auto back = pop_signal_frame(server->user_memory(), d.frame + 8, kvm_regs{}, GuestXstate{}, 0xffbf);
    ASSERT_TRUE(std::holds_alternative<Restored>(back)) << std::get<std::string>(back);
    const Restored r = std::get<Restored>(back);
    kvm_regs want = in.regs;
    want.rflags = 0x202 | 0x1 | (1ull << 8);
    EXPECT_EQ(std::memcmp(&r.regs, &want, sizeof want), 0) << "every register as it was";
    EXPECT_EQ(r.mask, 0x5a5au);
    ASSERT_EQ(r.fpu.size(), 512u) << r.fpu_refused;
    EXPECT_EQ(r.fpu[24], 0x80);
    EXPECT_EQ(r.fpu[160], 0x77);
    EXPECT_EQ(r.alt.flags, 2) << "SS_DISABLE: no sigaltstack";
}

TEST_F(Signals, WhatTheGuestHandsBackIsChecked) {
    make(false);
    FrameIn in;
    in.regs = some_regs();
    in.fpu.assign(512, 0);
    const Delivered d = std::get<Delivered>(push(handler_at(0x402000), in));
    const uint64_t uc = d.frame + 8;
    const auto pop = [&] { return pop_signal_frame(server->user_memory(), uc, kvm_regs{}, GuestXstate{}, 0xffbf); };
    // RFLAGS: only what ring 3 may change (no IOPL, IF kept on).
    const uint64_t wild = ~0ull;
    std::memcpy(at(uc + 40 + 17 * 8), &wild, 8);
    auto back = pop();
    ASSERT_TRUE(std::holds_alternative<Restored>(back));
    EXPECT_EQ(std::get<Restored>(back).regs.rflags & (3ull << 12), 0u) << "IOPL 0";
    EXPECT_NE(std::get<Restored>(back).regs.rflags & (1ull << 9), 0u) << "IF 1";
    // A non-canonical RIP is refused, never returned to.
    const uint64_t bad_rip = 1ull << 47;
    std::memcpy(at(uc + 40 + 16 * 8), &bad_rip, 8);
    EXPECT_TRUE(std::holds_alternative<std::string>(pop()));
    std::memcpy(at(uc + 40 + 16 * 8), &in.regs.rip, 8);
    // The FPU pointer: 16-byte aligned (FXRSTOR's) and the guest's, else the
    // FPU state is refused (Linux's SIGSEGV) while the registers come back.
    for (uint64_t fp : {uint64_t{kGuard}, uint64_t{d.frame + 4}, uint64_t{~0ull - 100}}) {
        std::memcpy(at(uc + 40 + 23 * 8), &fp, 8);
        back = pop();
        ASSERT_TRUE(std::holds_alternative<Restored>(back)) << fp;
        EXPECT_FALSE(std::get<Restored>(back).fpu_refused.empty()) << fp;
        EXPECT_TRUE(std::get<Restored>(back).fpu.empty()) << fp;
        EXPECT_EQ(std::get<Restored>(back).regs.rip, in.regs.rip) << fp;
    }
    // No FPU state: the initial one.
    const uint64_t none = 0;
    std::memcpy(at(uc + 40 + 23 * 8), &none, 8);
    back = pop();
    ASSERT_TRUE(std::holds_alternative<Restored>(back));
    ASSERT_EQ(std::get<Restored>(back).fpu.size(), 512u);
    EXPECT_EQ(std::get<Restored>(back).fpu[0], 0x7f);
    // The frame itself must be the guest's memory.
    EXPECT_TRUE(std::holds_alternative<std::string>(
        pop_signal_frame(server->user_memory(), kGuard - 8, kvm_regs{}, GuestXstate{}, 0xffbf)));
    EXPECT_TRUE(std::holds_alternative<std::string>(
        pop_signal_frame(server->user_memory(), ~0ull - 8, kvm_regs{}, GuestXstate{}, 0xffbf)));
    // A MXCSR with reserved bits comes back limited to the CPU's.
    std::vector<uint8_t> fx(512, 0);
    const uint32_t mxcsr = 0xffffffff;
    std::memcpy(fx.data() + 24, &mxcsr, 4);
    EXPECT_EQ(kvm_from_fx(fx, 0xffbf).mxcsr, 0xffbfu);
}

TEST_F(Signals, StackChoiceAltstackAndRefusals) {
    make(false);
    FrameIn in;
    in.regs = some_regs();
    in.fpu.assign(512, 0);
    in.alt = AltStack{kBuf + 65536, 16384, 0};
    // SA_ONSTACK: on the sigaltstack, inside it.
    auto pushed = push(handler_at(0x402000, kSaSiginfo | kSaRestorer | kSaOnstack), in);
    ASSERT_TRUE(std::holds_alternative<Delivered>(pushed));
    Delivered d = std::get<Delivered>(pushed);
    EXPECT_TRUE(d.on_altstack);
    EXPECT_GE(d.frame, kBuf + 65536);
    EXPECT_LT(d.frame, kBuf + 65536 + 16384);
    int32_t ss_flags;
    std::memcpy(&ss_flags, at(d.frame + 8 + 16 + 8), 4);
    EXPECT_EQ(ss_flags, 1) << "SS_ONSTACK in uc_stack";
    // Already on it (a fault inside the handler): the frame goes below, on the same stack.
    in.regs.rsp = d.frame - 64;
    d = std::get<Delivered>(push(handler_at(0x402000, kSaSiginfo | kSaRestorer | kSaOnstack), in));
    EXPECT_FALSE(d.on_altstack);
    EXPECT_LT(d.frame, in.regs.rsp);
    // Without SA_ONSTACK: the thread's own stack.
    in.regs = some_regs();
    d = std::get<Delivered>(push(handler_at(0x402000), in));
    EXPECT_FALSE(d.on_altstack);
    // A sigaltstack too small for the frame, a stack that is not the guest's, no restorer.
    in.alt.size = 512;
    EXPECT_TRUE(std::holds_alternative<std::string>(push(handler_at(0x402000, kSaSiginfo | kSaRestorer | kSaOnstack), in)));
    in.alt = {};
    in.regs.rsp = kGuard + 4096; // the guard
    EXPECT_TRUE(std::holds_alternative<std::string>(push(handler_at(0x402000), in)));
    in.regs.rsp = 100;
    EXPECT_TRUE(std::holds_alternative<std::string>(push(handler_at(0x402000), in)));
    in.regs = some_regs();
    EXPECT_TRUE(std::holds_alternative<std::string>(push(handler_at(0x402000, kSaSiginfo), in)));
}

TEST(SignalsForFaults, EachVectorGetsLinuxsSignal) {
    const auto pf = fault_signal_info(14, 0x6, 0x400000, 0x1234);
    ASSERT_TRUE(pf);
    EXPECT_EQ(pf->signo, kSigSegv);
    EXPECT_EQ(pf->code, 1) << "SEGV_MAPERR: not present";
    EXPECT_EQ(pf->addr, 0x1234u);
    EXPECT_EQ(fault_signal_info(14, 0x7, 0, 0x1234)->code, 2) << "SEGV_ACCERR: protection";
    EXPECT_EQ(fault_signal_info(13, 0, 0, 0)->signo, kSigSegv);
    EXPECT_EQ(fault_signal_info(6, 0, 0x400010, 0)->signo, 4);  // SIGILL
    EXPECT_EQ(fault_signal_info(6, 0, 0x400010, 0)->addr, 0x400010u);
    EXPECT_EQ(fault_signal_info(0, 0, 0, 0)->signo, 8);  // SIGFPE
    EXPECT_EQ(fault_signal_info(3, 0, 0, 0)->signo, 5);  // SIGTRAP
    EXPECT_EQ(fault_signal_info(17, 0, 0, 0)->signo, 7); // SIGBUS
    for (uint32_t v : {2u, 8u, 18u, 31u, 1000u}) EXPECT_FALSE(fault_signal_info(v, 0, 0, 0)) << v;
}

TEST_F(Signals, KillOfItselfIsPendingUntilUnblocked) {
    make(false);
    set_action(kSigUsr1, handler_at(0x402000));
    // raise(): block everything, tgkill, restore the mask.
    const uint64_t all = ~0ull;
    std::memcpy(at(kBuf + 100), &all, 8);
    ASSERT_EQ(ret(SYS_rt_sigprocmask, 0 /* SIG_BLOCK */, kBuf + 100, kBuf + 200, 8), 0);
    EXPECT_EQ(ret(SYS_tgkill, 1, 1, kSigUsr1), 0);
    EXPECT_FALSE(server->take_pending(1).deliver) << "blocked: stays pending";
    ASSERT_EQ(ret(SYS_rt_sigprocmask, 2 /* SIG_SETMASK */, kBuf + 200, 0, 8), 0);
    const PendingSignal p = server->take_pending(1);
    ASSERT_TRUE(p.deliver);
    EXPECT_EQ(p.deliver->sig, kSigUsr1);
    EXPECT_EQ(p.deliver->code, -6) << "SI_TKILL";
    EXPECT_EQ(p.deliver->saved_mask, 0u);
    EXPECT_FALSE(server->take_pending(1).deliver) << "taken once";
    // While the handler runs its own signal is blocked (no SA_NODEFER).
    ASSERT_EQ(ret(SYS_rt_sigprocmask, 0, 0, kBuf + 300, 8), 0);
    uint64_t mask;
    std::memcpy(&mask, at(kBuf + 300), 8);
    EXPECT_EQ(mask, 1ull << (kSigUsr1 - 1));
    server->signal_returned(1, 0, AltStack{0, 0, 2});
    ASSERT_EQ(ret(SYS_rt_sigprocmask, 0, 0, kBuf + 300, 8), 0);
    std::memcpy(&mask, at(kBuf + 300), 8);
    EXPECT_EQ(mask, 0u) << "rt_sigreturn's mask";
    // kill(): SI_USER; other processes do not exist.
    EXPECT_EQ(ret(SYS_kill, 1, kSigUsr1), 0);
    EXPECT_EQ(server->take_pending(1).deliver->code, 0);
    EXPECT_EQ(ret(SYS_kill, 2, kSigUsr1), -ESRCH);
    EXPECT_EQ(ret(SYS_kill, 1, 65), -EINVAL);
    EXPECT_EQ(ret(SYS_kill, 1, 0), 0) << "signal 0: only a check";
    EXPECT_EQ(ret(SYS_tgkill, 2, 1, kSigUsr1), -ESRCH);
    EXPECT_EQ(ret(SYS_tgkill, 1, 999, kSigUsr1), -ESRCH);
    EXPECT_EQ(ret(SYS_tkill, 0, kSigUsr1), -EINVAL);
}

// A call made by thread `tid` (the fixture's calls are the first thread's).
int64_t call_as(SyscallServer& server, uint32_t tid, uint64_t nr, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0,
                uint64_t a3 = 0, uint64_t a4 = 0) {
    SyscallCall c;
    c.nr = nr;
    c.tid = tid;
    const uint64_t a[6] = {a0, a1, a2, a3, a4, 0};
    std::copy(std::begin(a), std::end(a), c.arg);
    CpuState cpu;
    const SyscallOutcome out = server.serve(c, cpu);
    return out.ret;
}

TEST_F(Signals, EachThreadHasItsOwnMaskAndItsOwnSignals) {
    make(false);
    set_action(kSigUsr1, handler_at(0x402000));
    set_action(kSigUsr2, handler_at(0x402000));
    const uint64_t usr1 = 1ull << (kSigUsr1 - 1), usr2 = 1ull << (kSigUsr2 - 1);
    std::memcpy(at(kBuf + 100), &usr1, 8);
    ASSERT_EQ(ret(SYS_rt_sigprocmask, 0 /* SIG_BLOCK */, kBuf + 100, 0, 8), 0);
    // A thread starts with its creator's mask, then changes only its own.
    constexpr uint64_t kThread = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
    const int64_t t = ret(SYS_clone, kThread, kBuf + 65536);
    ASSERT_GT(t, 1);
    const auto tid = static_cast<uint32_t>(t);
    ASSERT_EQ(call_as(*server, tid, SYS_rt_sigprocmask, 0, 0, kBuf + 200, 8), 0);
    uint64_t mask;
    std::memcpy(&mask, at(kBuf + 200), 8);
    EXPECT_EQ(mask, usr1) << "inherited";
    const uint64_t none = 0;
    std::memcpy(at(kBuf + 100), &none, 8);
    ASSERT_EQ(call_as(*server, tid, SYS_rt_sigprocmask, 2 /* SIG_SETMASK */, kBuf + 100, 0, 8), 0);
    ASSERT_EQ(ret(SYS_rt_sigprocmask, 0, 0, kBuf + 200, 8), 0);
    std::memcpy(&mask, at(kBuf + 200), 8);
    EXPECT_EQ(mask, usr1) << "the first thread's mask is its own";
    // tgkill goes to its thread alone, whatever the others' masks.
    EXPECT_EQ(ret(SYS_tgkill, 1, t, kSigUsr1), 0);
    EXPECT_FALSE(server->take_pending(1).deliver) << "sent to the other thread";
    PendingSignal p = server->take_pending(tid);
    ASSERT_TRUE(p.deliver);
    EXPECT_EQ(p.deliver->sig, kSigUsr1);
    EXPECT_EQ(p.deliver->code, -6) << "SI_TKILL";
    EXPECT_EQ(p.deliver->saved_mask, 0u) << "the thread's own mask";
    server->signal_returned(tid, 0, AltStack{0, 0, 2});
    EXPECT_EQ(ret(SYS_tgkill, 1, 1, kSigUsr1), 0);
    EXPECT_FALSE(server->take_pending(tid).deliver) << "sent to the first thread";
    EXPECT_FALSE(server->take_pending(1).deliver) << "which blocks it";
    ASSERT_EQ(ret(SYS_rt_sigprocmask, 2, kBuf + 100, 0, 8), 0); // the first thread unblocks it
    p = server->take_pending(1);
    ASSERT_TRUE(p.deliver);
    EXPECT_EQ(p.deliver->sig, kSigUsr1);
    server->signal_returned(1, usr2, AltStack{0, 0, 2}); // back from the handler with USR2 blocked
    // kill goes to the process: the first thread to return with it unblocked takes it.
    EXPECT_EQ(ret(SYS_kill, 1, kSigUsr2), 0);
    EXPECT_FALSE(server->take_pending(1).deliver) << "blocked in the first thread";
    p = server->take_pending(tid);
    ASSERT_TRUE(p.deliver);
    EXPECT_EQ(p.deliver->sig, kSigUsr2);
    EXPECT_EQ(p.deliver->code, 0) << "SI_USER";
    // A fault's signal: the faulting thread's mask decides.
    set_action(kSigSegv, handler_at(0x402000));
    const uint64_t segv = 1ull << (kSigSegv - 1);
    std::memcpy(at(kBuf + 100), &segv, 8);
    ASSERT_EQ(ret(SYS_rt_sigprocmask, 0, kBuf + 100, 0, 8), 0);
    EXPECT_FALSE(server->fault_signal(1, kSigSegv));
    EXPECT_TRUE(server->fault_signal(tid, kSigSegv));
    // A thread gone: tgkill finds no such thread, and what was sent to it is dropped.
    EXPECT_EQ(ret(SYS_tgkill, 1, t, kSigUsr1), 0);
    server->thread_exit(tid);
    EXPECT_EQ(ret(SYS_tgkill, 1, t, kSigUsr1), -ESRCH);
    EXPECT_FALSE(server->take_pending(1).deliver);
}

TEST_F(Signals, DefaultActionsIgnoreOrEndTheRun) {
    make(false);
    EXPECT_EQ(ret(SYS_kill, 1, kSigChld), 0);
    PendingSignal p = server->take_pending(1);
    EXPECT_FALSE(p.deliver);
    EXPECT_TRUE(p.ends.empty()) << "SIGCHLD's default: ignored";
    EXPECT_EQ(ret(SYS_kill, 1, kSigTerm), 0);
    p = server->take_pending(1);
    EXPECT_NE(p.ends.find("SIGTERM"), std::string::npos) << p.ends;
    set_action(kSigTerm, SigAction{kSigIgnore, 0, 0, 0});
    EXPECT_EQ(ret(SYS_kill, 1, kSigTerm), 0);
    EXPECT_TRUE(server->take_pending(1).ends.empty()) << "SIG_IGN";
    EXPECT_EQ(ret(SYS_kill, 1, 9), 0);
    EXPECT_NE(server->take_pending(1).ends.find("SIGKILL"), std::string::npos);
}

TEST_F(Signals, FaultSignalsNeedAnUnblockedHandlerAndResethandIsOneShot) {
    make(false);
    EXPECT_FALSE(server->fault_signal(1, kSigSegv)) << "no handler: the fault ends the run";
    SigAction a = handler_at(0x402000, kSaSiginfo | kSaRestorer | kSaResethand | kSaNodefer);
    set_action(kSigSegv, a);
    auto d = server->fault_signal(1, kSigSegv);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->act.handler, 0x402000u);
    EXPECT_FALSE(server->fault_signal(1, kSigSegv)) << "SA_RESETHAND: the default again";
    set_action(kSigSegv, handler_at(0x402000));
    ASSERT_TRUE(server->fault_signal(1, kSigSegv));
    EXPECT_FALSE(server->fault_signal(1, kSigSegv)) << "a fault inside its own handler (blocked): the run ends";
    // SS_AUTODISARM: the frame on the sigaltstack disarms it.
    const uint64_t ss[3] = {kBuf + 65536, uint64_t{1u << 31}, 16384};
    std::memcpy(at(kBuf + 500), ss, sizeof ss);
    ASSERT_EQ(ret(SYS_sigaltstack, kBuf + 500, 0), 0);
    server->signal_frame_pushed(1, true);
    ASSERT_EQ(ret(SYS_sigaltstack, 0, kBuf + 600), 0);
    int32_t flags;
    std::memcpy(&flags, at(kBuf + 608), 4);
    EXPECT_EQ(flags, 2) << "SS_DISABLE after the frame went on it";
}

} // namespace
} // namespace kvmgpu::linux_abi
