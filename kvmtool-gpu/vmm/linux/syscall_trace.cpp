#include "kvmtool-gpu/vmm/linux/syscall_trace.h"

#include <sys/syscall.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "kvmtool-gpu/vmm/linux/syscall_server.h"

namespace kvmgpu::linux_abi {
namespace {

// The argument that names a path, for the calls that take one (-1: none).
int path_argument(uint64_t nr) {
    switch (nr) {
    case SYS_open: case SYS_stat: case SYS_lstat: case SYS_access: case SYS_readlink: case SYS_execve:
    case SYS_mkdir: case SYS_rmdir: case SYS_unlink: case SYS_rename: case SYS_chdir: case SYS_truncate:
    case SYS_statfs: case SYS_creat: case SYS_chmod: case SYS_symlink: case SYS_link:
        return 0;
    case SYS_openat: case SYS_newfstatat: case SYS_faccessat: case SYS_faccessat2: case SYS_readlinkat:
    case SYS_statx: case SYS_mkdirat: case SYS_unlinkat: case SYS_renameat: case SYS_renameat2:
    case SYS_openat2: case SYS_execveat: case SYS_fchmodat: case SYS_utimensat: case SYS_name_to_handle_at:
        return 1;
    default: return -1;
    }
}

// How many arguments a line shows: the call's own count for the common
// calls, else all six.
int shown_arguments(uint64_t nr) {
    switch (nr) {
    case SYS_getpid: case SYS_gettid: case SYS_getuid: case SYS_geteuid: case SYS_getgid: case SYS_getegid:
    case SYS_getppid: case SYS_sched_yield: case SYS_pause:
        return 0;
    case SYS_close: case SYS_brk: case SYS_exit: case SYS_exit_group: case SYS_uname: case SYS_chdir:
    case SYS_set_tid_address: case SYS_dup: case SYS_unlink: case SYS_rmdir: case SYS_umask:
        return 1;
    case SYS_munmap: case SYS_arch_prctl: case SYS_stat: case SYS_fstat: case SYS_lstat: case SYS_access:
    case SYS_mkdir: case SYS_rename: case SYS_dup2: case SYS_clock_gettime: case SYS_gettimeofday:
    case SYS_getrlimit: case SYS_kill: case SYS_sigaltstack: case SYS_statfs: case SYS_fstatfs:
        return 2;
    case SYS_open: case SYS_read: case SYS_write: case SYS_lseek: case SYS_mprotect: case SYS_ioctl:
    case SYS_readlink: case SYS_fcntl: case SYS_getdents64: case SYS_madvise: case SYS_poll: case SYS_execve:
    case SYS_tgkill: case SYS_getrandom: case SYS_sched_getaffinity: case SYS_dup3: case SYS_mkdirat:
    case SYS_unlinkat: case SYS_readv: case SYS_writev:
        return 3;
    case SYS_openat: case SYS_newfstatat: case SYS_faccessat: case SYS_readlinkat: case SYS_rt_sigaction:
    case SYS_rt_sigprocmask: case SYS_prlimit64: case SYS_faccessat2: case SYS_pread64: case SYS_pwrite64:
        return 4;
    default: return 6;
    }
}

std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\x%02x", static_cast<unsigned char>(c));
            out += esc;
        } else {
            out += c;
        }
    }
    out += '"';
    return out;
}

} // namespace

std::shared_ptr<SyscallTrace> SyscallTrace::open(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) throw std::runtime_error("--trace-syscalls " + path + ": " + std::strerror(errno));
    return std::shared_ptr<SyscallTrace>(new SyscallTrace(f));
}

SyscallTrace::~SyscallTrace() { std::fclose(file_); }

std::string SyscallTrace::format(const SyscallCall& call, int64_t ret, const UserMemory& user) {
    std::string line = std::to_string(call.tid) + " " + syscall_name(call.nr) + "(";
    const int path_arg = path_argument(call.nr);
    const int shown = shown_arguments(call.nr);
    for (int i = 0; i < shown; ++i) {
        if (i) line += ", ";
        if (i == path_arg) { // unreadable: its address, as any other argument
            if (auto [path, err] = user.string(call.arg[i], kPathMax); err == 0) {
                line += quoted(path);
                continue;
            }
        }
        char hex[24];
        std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(call.arg[i]));
        line += hex;
    }
    line += ") = ";
    if (ret < 0 && ret >= -4095) {
        const char* name = strerrorname_np(static_cast<int>(-ret));
        line += "-1 " + std::string(name != nullptr ? name : "E?") + " (" + std::strerror(static_cast<int>(-ret)) + ")";
    } else if (ret > 0xffff) {
        char hex[24];
        std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(ret));
        line += hex;
    } else {
        line += std::to_string(ret);
    }
    return line;
}

void SyscallTrace::record(const SyscallCall& call, int64_t ret, const UserMemory& user) {
    const std::string line = format(call, ret, user);
    std::lock_guard lock(mu_);
    std::fprintf(file_, "%s\n", line.c_str());
    std::fflush(file_);
}

} // namespace kvmgpu::linux_abi
