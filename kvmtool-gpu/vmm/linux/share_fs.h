// The directory a Linux-ABI guest may see (`--share DIR[:ro]`), and the
// only way guest paths reach the host file system. The share is the guest's
// root: every path (absolute; one relative to the guest's cwd is joined to
// it first, guest_cwd.h) resolves inside it through openat2 with
// RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, so "..", absolute symlinks and
// /proc magic links cannot leave it; what
// lies on the kernel's pseudo file systems is ENOENT (pseudo_fs.h).
// A path relative to a directory descriptor resolves with that directory
// as its root. Only regular files and directories are opened: a path is
// first resolved with O_PATH (which opens nothing), its type checked, and
// only then opened for I/O through /proc/self/fd, so a FIFO, device or
// socket in the share gets EACCES without ever being opened (no blocking,
// no driver's side effect). Results are Linux errno values (negative),
// never exceptions.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>

#include "kvmtool-gpu/kvm/unique_fd.h"

namespace kvmgpu::linux_abi {

class ShareRoot {
public:
    // Opens DIR (O_PATH | O_DIRECTORY). Throws std::runtime_error naming the
    // path and errno when it is not a directory the VMM can open.
    ShareRoot(const std::string& dir, bool read_only);

    bool read_only() const { return read_only_; }
    const std::string& path() const { return path_; }
    int fd() const { return root_.get(); }

    // openat2 of `path` (guest-supplied, any bytes but NUL) under `dirfd`
    // (a directory descriptor of the share; -1 for the share root) with the
    // guest's open flags (Linux values) and mode. Returns a host fd or -errno.
    int open(int dirfd, const std::string& path, uint64_t flags, uint64_t mode) const;
    // stat / lstat of a path; -errno.
    int stat(int dirfd, const std::string& path, bool follow, struct stat* out) const;
    // readlink of a path: bytes written to `buf` (at most len) or -errno.
    long readlink(int dirfd, const std::string& path, char* buf, uint64_t len) const;
    // mkdirat, unlinkat (rmdir with `directory`) and renameat2 of the last
    // component of a path, in the directory its other components name
    // (resolved as open resolves: inside the share, never through a magic
    // link); the last component itself is never followed. "." or ".." as the
    // last component: -EINVAL; the share's own root: -EBUSY; a read-only
    // share: -EROFS. -errno.
    int mkdir(int dirfd, const std::string& path, uint64_t mode) const;
    int unlink(int dirfd, const std::string& path, bool directory) const;
    // `to` in this share too (GuestFs gives -EXDEV across mounts); flags:
    // RENAME_NOREPLACE and RENAME_EXCHANGE, else -EINVAL.
    int rename(int from_dirfd, const std::string& from, int to_dirfd, const std::string& to, uint64_t flags) const;
    // linkat: a new name `to` for `from`'s inode, both in this share.
    // `follow` (AT_SYMLINK_FOLLOW): the file `from` resolves to, inside the
    // share; else `from`'s last component itself, a symlink included.
    int link(int from_dirfd, const std::string& from, int to_dirfd, const std::string& to, bool follow) const;
    // symlinkat: `path` becomes a symlink holding `target` (any bytes; it is
    // only ever followed inside a mount, as every path is).
    int symlink(const std::string& target, int dirfd, const std::string& path) const;

private:
    // An O_PATH descriptor of the regular file or directory `path` names, or -errno.
    int locate(int dirfd, const std::string& path, uint64_t flags) const;
    // `path_fd`'s inode opened with `flags` (host values), or -errno.
    static int reopen(int path_fd, uint64_t flags);
    int resolve(int dirfd, const std::string& path, uint64_t open_flags, uint64_t resolve_extra, uint64_t mode) const;
    // The directory that holds `path`'s last component (O_PATH) and that
    // component; `err` (-errno) when there is none.
    struct Parent {
        UniqueFd dir;
        std::string name;
        int err = 0;
    };
    Parent parent_of(int dirfd, const std::string& path) const;

    std::string path_;
    bool read_only_;
    UniqueFd root_;
};

} // namespace kvmgpu::linux_abi
