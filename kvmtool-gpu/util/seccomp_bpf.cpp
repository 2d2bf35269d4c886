#include "kvmtool-gpu/util/seccomp_bpf.h"

#include <linux/audit.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

namespace kvmgpu::seccomp {

namespace {
#if defined(__SANITIZE_ADDRESS__)
#define KVMGPU_SECCOMP_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KVMGPU_SECCOMP_SANITIZER 1
#endif
#endif
#ifdef KVMGPU_SECCOMP_SANITIZER
constexpr int kSanitizerRuntime[] = {SYS_pipe2, SYS_close, SYS_gettid, SYS_getpid, SYS_sched_getaffinity};
#else
constexpr int kSanitizerRuntime[] = {SYS_exit}; // nothing extra (every filter here allows exit)
#endif
} // namespace

std::span<const int> sanitizer_runtime_calls() { return kSanitizerRuntime; }

Program::Program() {
    p_.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, kArch));
    p_.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
    p_.push_back(ret(kKill));
    p_.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, kNr));
    p_.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, __X32_SYSCALL_BIT, 0, 1));
    p_.push_back(ret(kKill));
}

// Every path that goes on past a single call or a block has not changed the
// accumulator (a block returns on each of its own paths), so it holds nr
// from the prologue to the end.
void Program::on(int nr, uint32_t action) {
    p_.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 1));
    p_.push_back(ret(action));
}

void Program::guarded(int nr, std::span<const sock_filter> block) {
    p_.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, static_cast<uint8_t>(block.size())));
    p_.insert(p_.end(), block.begin(), block.end());
}

std::vector<sock_filter> Program::finish(uint32_t default_action) {
    p_.push_back(ret(default_action));
    return std::move(p_);
}

int install(std::span<const sock_filter> program, unsigned flags, const char* who, const char* hint) {
    const sock_fprog prog{static_cast<unsigned short>(program.size()), const_cast<sock_filter*>(program.data())};
    // Required for a filter without CAP_SYS_ADMIN; per thread, like the filter
    // (SECCOMP_FILTER_FLAG_TSYNC gives it to the other threads too).
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        throw std::system_error(errno, std::generic_category(), std::string(who) + ": prctl(PR_SET_NO_NEW_PRIVS)" + hint);
    const long r = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
    if (r < 0)
        throw std::system_error(errno, std::generic_category(),
                                std::string(who) + ": seccomp(SECCOMP_SET_MODE_FILTER)" + hint);
    return static_cast<int>(r);
}

} // namespace kvmgpu::seccomp
