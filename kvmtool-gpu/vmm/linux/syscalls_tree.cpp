// The calls that change a tree: mkdir, unlink, rmdir, rename, link and
// symlink, served in
// writable mounts only (a --share, the private /tmp), resolved as opens are
// (GuestFs, ShareRoot). The VMM's made-up files and the root are not writable:
// EROFS from the root, ENOENT where the path names nothing on a mount.
#include <fcntl.h>

#include <cerrno>

#include "kvmtool-gpu/vmm/linux/syscall_server.h"

namespace kvmgpu::linux_abi {

int64_t SyscallServer::sys_mkdirat(int64_t dirfd, uint64_t path_addr, uint64_t mode) {
    auto [path, err] = user_.string(path_addr, kPathMax);
    if (err) return err;
    if (const int64_t rc = from_cwd(dirfd, path, false)) return rc;
    if (!opts_.share) return -ENOENT; // no file system
    const int dir = dir_host_fd(dirfd, path);
    if (dir < -1) return dir;
    return opts_.share->mkdir(dir, path, mode);
}

int64_t SyscallServer::sys_unlinkat(int64_t dirfd, uint64_t path_addr, uint64_t flags) {
    if (flags & ~uint64_t{AT_REMOVEDIR}) return -EINVAL;
    auto [path, err] = user_.string(path_addr, kPathMax);
    if (err) return err;
    if (const int64_t rc = from_cwd(dirfd, path, false)) return rc;
    if (!opts_.share) return -ENOENT;
    const int dir = dir_host_fd(dirfd, path);
    if (dir < -1) return dir;
    return opts_.share->unlink(dir, path, flags & AT_REMOVEDIR);
}

int64_t SyscallServer::sys_renameat2(int64_t from_dirfd, uint64_t from_addr, int64_t to_dirfd, uint64_t to_addr,
                                     uint64_t flags) {
    auto [from, err] = user_.string(from_addr, kPathMax);
    if (err) return err;
    auto [to, err_to] = user_.string(to_addr, kPathMax);
    if (err_to) return err_to;
    if (const int64_t rc = from_cwd(from_dirfd, from, false)) return rc;
    if (const int64_t rc = from_cwd(to_dirfd, to, false)) return rc;
    if (!opts_.share) return -ENOENT;
    const int from_dir = dir_host_fd(from_dirfd, from);
    if (from_dir < -1) return from_dir;
    const int to_dir = dir_host_fd(to_dirfd, to);
    if (to_dir < -1) return to_dir;
    return opts_.share->rename(from_dir, from, to_dir, to, flags);
}

int64_t SyscallServer::sys_linkat(int64_t from_dirfd, uint64_t from_addr, int64_t to_dirfd, uint64_t to_addr,
                                  uint64_t flags) {
    if (flags & ~uint64_t{AT_SYMLINK_FOLLOW | AT_EMPTY_PATH}) return -EINVAL;
    auto [from, err] = user_.string(from_addr, kPathMax);
    if (err) return err;
    auto [to, err_to] = user_.string(to_addr, kPathMax);
    if (err_to) return err_to;
    if (const int64_t rc = from_cwd(from_dirfd, from, false)) return rc;
    if (const int64_t rc = from_cwd(to_dirfd, to, false)) return rc;
    // AT_EMPTY_PATH links a descriptor's file: Linux lets only CAP_DAC_READ_SEARCH, ENOENT for the rest.
    if (flags & AT_EMPTY_PATH) return from.empty() ? -ENOENT : -EINVAL;
    if (!opts_.share) return -ENOENT;
    const int from_dir = dir_host_fd(from_dirfd, from);
    if (from_dir < -1) return from_dir;
    const int to_dir = dir_host_fd(to_dirfd, to);
    if (to_dir < -1) return to_dir;
    return opts_.share->link(from_dir, from, to_dir, to, flags & AT_SYMLINK_FOLLOW);
}

int64_t SyscallServer::sys_symlinkat(uint64_t target_addr, int64_t dirfd, uint64_t path_addr) {
    auto [target, err] = user_.string(target_addr, kPathMax);
    if (err) return err;
    auto [path, err_path] = user_.string(path_addr, kPathMax);
    if (err_path) return err_path;
    if (const int64_t rc = from_cwd(dirfd, path, false)) return rc;
    if (!opts_.share) return -ENOENT;
    const int dir = dir_host_fd(dirfd, path);
    if (dir < -1) return dir;
    return opts_.share->symlink(target, dir, path);
}

} // namespace kvmgpu::linux_abi
