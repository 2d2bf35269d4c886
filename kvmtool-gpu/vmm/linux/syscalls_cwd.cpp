// The guest's working directory (guest_cwd.h): chdir, fchdir, getcwd, and
// the joining of every path an *at call names relative to AT_FDCWD.
#include <cerrno>

#include "kvmtool-gpu/vmm/linux/syscall_server.h"

namespace kvmgpu::linux_abi {

namespace {
constexpr int64_t kAtFdcwd = -100;

// /proc/self/cwd and its other names: the link to the cwd (syscalls_proc_files.cpp).
bool names_cwd_link(const std::string& absolute) {
    if (absolute.find("/cwd") == std::string::npos) return false; // most paths: no normalising
    const std::string n = GuestFs::normalize(absolute);
    return n == "/proc/self/cwd" || n == "/proc/1/cwd" || n == "/proc/thread-self/cwd";
}
} // namespace

int64_t SyscallServer::from_cwd(int64_t dirfd, std::string& path, bool follow_cwd_link) {
    if (!path.empty() && !path.starts_with('/') && dirfd == kAtFdcwd) {
        std::string cwd;
        if (const int rc = cwd_.current(opts_.share.get(), cwd)) return rc;
        path = GuestCwd::join(cwd, path);
        if (path.size() >= kPathMax) return -ENAMETOOLONG;
    }
    if (follow_cwd_link && path.starts_with('/') && names_cwd_link(path)) {
        if (const int rc = cwd_.current(opts_.share.get(), path)) return rc;
    }
    return 0;
}

int64_t SyscallServer::sys_chdir(uint64_t path_addr) {
    auto [path, err] = user_.string(path_addr, kPathMax);
    if (err) return err;
    if (path.empty()) return -ENOENT;
    if (const int64_t rc = from_cwd(kAtFdcwd, path, true)) return rc;
    if (!opts_.share) return GuestFs::normalize(path) == "/" ? 0 : -ENOENT; // no files: only "/"
    return cwd_.change(*opts_.share, path);
}

int64_t SyscallServer::sys_fchdir(uint64_t fd) {
    const OpenFile* f = fds_.get(static_cast<int64_t>(fd));
    if (!f) return -EBADF;
    if (!f->directory) return -ENOTDIR;
    // /proc/self/fd and /dev/fd are the VMM's own, no place in the mounts.
    if (f->kind != OpenFile::Kind::Host || !opts_.share) return -EACCES;
    return cwd_.change_to(*opts_.share, f->host.get(), f->link);
}

int64_t SyscallServer::sys_getcwd(uint64_t buf, uint64_t len) {
    std::string cwd;
    if (const int rc = cwd_.current(opts_.share.get(), cwd)) return rc; // removed: ENOENT, as Linux
    // The whole buffer the caller gave must be the guest's, not just the path's bytes.
    if (!user_.span(buf, len)) return -EFAULT;
    if (len < cwd.size() + 1) return -ERANGE;
    return user_.write(buf, cwd.c_str(), cwd.size() + 1) ? static_cast<int64_t>(cwd.size() + 1) : -EFAULT;
}

} // namespace kvmgpu::linux_abi
