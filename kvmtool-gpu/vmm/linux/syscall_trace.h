// --trace-syscalls: one line per system call a Linux-ABI guest makes, as
// strace prints them (thread, name, arguments, result), so a program that
// fails as a guest and not natively shows which call it was refused or
// given something it did not expect. Path arguments are shown as strings.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

namespace kvmgpu::linux_abi {

class UserMemory;
struct SyscallCall;

class SyscallTrace {
public:
    // Opens (truncates) `path` on the host; std::runtime_error naming it if
    // it cannot be written.
    static std::shared_ptr<SyscallTrace> open(const std::string& path);
    ~SyscallTrace();
    SyscallTrace(const SyscallTrace&) = delete;
    SyscallTrace& operator=(const SyscallTrace&) = delete;

    // One call and what it returned; guest memory is read for path arguments.
    void record(const SyscallCall& call, int64_t ret, const UserMemory& user);

    // The line record() writes (without its newline), for tests.
    static std::string format(const SyscallCall& call, int64_t ret, const UserMemory& user);

private:
    explicit SyscallTrace(std::FILE* f) : file_(f) {}
    std::mutex mu_;
    std::FILE* file_;
};

} // namespace kvmgpu::linux_abi
