#include "kvmtool-gpu/util/seccomp_report.h"

#include <asm/unistd.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstddef>

#include "kvmtool-gpu/util/syscall_names.h"

namespace kvmgpu::seccomp {

namespace {

// Async-signal-safe formatting into a fixed buffer.
struct Line {
    char buf[320];
    size_t n = 0;
    void put(const char* s) {
        while (*s && n < sizeof buf) buf[n++] = *s++;
    }
    void hex(uint64_t v) {
        put("0x");
        char digits[16];
        int k = 0;
        do digits[k++] = "0123456789abcdef"[v & 0xf]; while ((v >>= 4) && k < 16);
        while (k && n < sizeof buf) buf[n++] = digits[--k];
    }
    void write_out() const { (void)!::write(STDERR_FILENO, buf, n); }
};

// si_code of a filter's SIGSYS: SYS_SECCOMP in <asm-generic/siginfo.h>,
// which glibc 2.36's headers leave out (and which clashes with <signal.h>).
constexpr int kFromSeccomp = 1;

// Set before the filter, read in the handler.
RefusalReport g_report{};
// The program's own code, for the report's return addresses.
uintptr_t g_text_lo = 0, g_text_hi = 0;

// Ends the process with SIGSYS. Every filter made by seccomp::Program kills
// the process for an x32 call number (its prologue), so this does not return
// under one; SA_RESETHAND has put SIGSYS back at its default for the raise
// below, which ends a process that was sent SIGSYS without a filter.
[[noreturn]] void end_with_sigsys() {
    syscall(__X32_SYSCALL_BIT | SYS_getpid);
    raise(SIGSYS);
    _exit(128 + SIGSYS);
}

void report_refused_call(int, siginfo_t* info, void* context) {
    if (info->si_code != kFromSeccomp) end_with_sigsys(); // sent by a process, not a filter: nothing to name
    const auto* regs = static_cast<ucontext_t*>(context)->uc_mcontext.gregs;
    Line line;
    line.put(g_report.prefix);
    line.put(": fatal: ");
    line.put(g_report.filter);
    line.put(" refused system call ");
    const char* name = known_syscall_name(static_cast<uint64_t>(info->si_syscall));
    line.put(name ? name : "?");
    line.put(" (");
    line.hex(static_cast<uint64_t>(info->si_syscall));
    line.put(", arguments ");
    line.hex(static_cast<uint64_t>(regs[REG_RDI]));
    line.put(" ");
    line.hex(static_cast<uint64_t>(regs[REG_RSI]));
    line.put(" ");
    line.hex(static_cast<uint64_t>(regs[REG_RDX]));
    line.put("): ");
    line.put(g_report.outcome);
    line.put("\n");
    line.write_out();
    // Where in the program it came from: return addresses on the stack that
    // lie in its own code, as offsets for addr2line -e kvmtool-gpu.
    Line where;
    where.put(g_report.prefix);
    where.put(": the call's stack holds these VMM code offsets:");
    const auto* sp = reinterpret_cast<const uintptr_t*>(regs[REG_RSP]);
    for (int i = 0, shown = 0; i < 256 && shown < 8; ++i)
        if (sp[i] >= g_text_lo && sp[i] < g_text_hi) {
            where.put(" ");
            where.hex(sp[i] - g_text_lo);
            ++shown;
        }
    where.put("\n");
    where.write_out();
    end_with_sigsys();
}

// The linker's names for the code of the object this is linked into (the
// executable, or libkvmgpu.so): __ehdr_start exists in both, unlike
// __executable_start, and hidden keeps an executable's etext from standing in
// for the shared object's.
extern "C" __attribute__((visibility("hidden"))) char __ehdr_start, etext;

} // namespace

void report_refused_calls(const RefusalReport& report) {
    g_report = report;
    g_text_lo = reinterpret_cast<uintptr_t>(&__ehdr_start);
    g_text_hi = reinterpret_cast<uintptr_t>(&etext);
    struct sigaction sa {};
    sa.sa_sigaction = report_refused_call;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSYS, &sa, nullptr);
}

} // namespace kvmgpu::seccomp
