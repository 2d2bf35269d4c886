// The building blocks of this project's hand-written seccomp-BPF filters
// (no libseccomp): the vCPU thread's (vmm/vcpu_seccomp.cpp) and the GPU
// worker's (devices/vgpu_worker/worker_sandbox.cpp). A program starts by
// refusing anything but native x86-64 call numbers (an i386 or x32 number
// means another call), then tests the number against single calls and
// guarded blocks, and ends in a default action.
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kvmgpu::seccomp {

inline constexpr uint32_t kKill = SECCOMP_RET_KILL_PROCESS; // SIGSYS for the whole process
inline constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
// The call fails with `err` instead of running.
constexpr uint32_t errno_action(uint16_t err) { return SECCOMP_RET_ERRNO | err; }

// Offsets into struct seccomp_data; an argument's low 32 bits (x86-64 is
// little-endian). Where the kernel takes an argument as an int (fds, ioctl
// commands, prot, flags, pids) the low word is all it looks at.
inline constexpr uint32_t kNr = offsetof(seccomp_data, nr);
inline constexpr uint32_t kArch = offsetof(seccomp_data, arch);
constexpr uint32_t arg_lo(int i) { return offsetof(seccomp_data, args) + 8 * i; }

constexpr sock_filter stmt(uint16_t code, uint32_t k) { return BPF_STMT(code, k); }
constexpr sock_filter jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) { return BPF_JUMP(code, k, jt, jf); }
constexpr sock_filter ret(uint32_t action) { return stmt(BPF_RET | BPF_K, action); }

// A filter program under construction.
class Program {
public:
    // The architecture and x32 checks; either failing ends in kKill.
    Program();
    // `nr` returns `action` whatever its arguments.
    void on(int nr, uint32_t action);
    void allow(std::span<const int> nrs) {
        for (int nr : nrs) on(nr, kAllow);
    }
    // `nr` runs `block` (at most 255 instructions), which must end in a
    // return on every path.
    void guarded(int nr, std::span<const sock_filter> block);
    // The default for every other call; the finished program.
    std::vector<sock_filter> finish(uint32_t default_action);

private:
    std::vector<sock_filter> p_;
};

// Sanitizer builds (KVMGPU_SANITIZE) only: the ASan/LSan runtime probes
// whether memory is readable by writing it into a pipe (pipe2, write,
// close) and asks for its thread's id and CPUs, on any thread (seen at
// thread exit with detect_stack_use_after_return). Every filter allows
// these there; release builds get a list that adds nothing.
std::span<const int> sanitizer_runtime_calls();

// The filter's bytes are the kernel's to copy: `program` can go afterwards.
// PR_SET_NO_NEW_PRIVS, then seccomp(SECCOMP_SET_MODE_FILTER, flags, program).
// Returns seccomp()'s result (the listener fd with
// SECCOMP_FILTER_FLAG_NEW_LISTENER, else 0). Throws std::system_error
// "<who>: <call>: <errno text><hint>" when the kernel refuses.
int install(std::span<const sock_filter> program, unsigned flags, const char* who, const char* hint = "");

} // namespace kvmgpu::seccomp
