#include "kvmtool-gpu/vmm/linux/share_fs.h"

#include "kvmtool-gpu/vmm/linux/pseudo_fs.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace kvmgpu::linux_abi {

namespace {
// Linux x86-64 values (the host's are the same: the VMM is x86-64 Linux).
constexpr uint64_t kAllowed = O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC |
                              O_SYNC | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | 0100000 /* O_LARGEFILE */;
// openat2's retries after EAGAIN (resolve says why).
constexpr int kResolveAttempts = 64;
} // namespace

ShareRoot::ShareRoot(const std::string& dir, bool read_only) : path_(dir), read_only_(read_only) {
    root_ = UniqueFd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root_) throw std::runtime_error("--share " + dir + ": " + std::strerror(errno));
}

int ShareRoot::resolve(int dirfd, const std::string& path, uint64_t open_flags, uint64_t resolve_extra,
                       uint64_t mode) const {
    if (path.empty()) return -ENOENT;
    if (path.size() >= 4096) return -ENAMETOOLONG;
    open_how how{};
    how.flags = open_flags | O_CLOEXEC;
    how.mode = mode;
    // The share is the guest's root: "..", absolute paths and absolute
    // symlinks stay inside it; /proc-style magic links are refused.
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | resolve_extra;
    // EAGAIN: a rename or mount anywhere on the host happened while ".." was
    // being resolved (a symlink such as ld.so's "../lib/..." target), and the
    // kernel could not prove the walk stayed inside; it asks for a retry. A
    // busy host (or the guest renaming in its own share) makes that happen,
    // so try again, a bounded number of times.
    long fd = -1;
    for (int attempt = 0; attempt < kResolveAttempts; ++attempt) {
        fd = ::syscall(SYS_openat2, dirfd < 0 ? root_.get() : dirfd, path.c_str(), &how, sizeof how);
        if (fd >= 0 || errno != EAGAIN) break;
    }
    if (fd < 0) return -errno;
    if (on_pseudo_fs(static_cast<int>(fd))) { // the host's /proc, /sys, ...: not the guest's
        ::close(static_cast<int>(fd));
        return -ENOENT;
    }
    return static_cast<int>(fd);
}

int ShareRoot::open(int dirfd, const std::string& path, uint64_t flags, uint64_t mode) const {
    if (flags & ~kAllowed) return -EINVAL;
    const bool writes = (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
    if ((flags & O_ACCMODE) == O_ACCMODE) return -EINVAL;
    if (read_only_ && writes) return -EROFS;
    // O_NOCTTY | O_NONBLOCK as a second line of defence: only regular files
    // and directories are ever opened, on which they change nothing.
    const uint64_t host_flags = (flags & ~uint64_t{0100000 /* O_LARGEFILE */}) | O_NOCTTY | O_NONBLOCK;
    if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) // always a new regular file (a symlink is not followed)
        return resolve(dirfd, path, host_flags, 0, mode & 0777);
    for (int attempt = 0; attempt < 2; ++attempt) {
        const int found = locate(dirfd, path, flags);
        if (found >= 0) {
            const int fd = reopen(found, host_flags & ~uint64_t{O_CREAT | O_EXCL | O_NOFOLLOW});
            ::close(found);
            return fd;
        }
        if (found != -ENOENT || !(flags & O_CREAT)) return found;
        const int created = resolve(dirfd, path, host_flags | O_EXCL, 0, mode & 0777);
        if (created != -EEXIST) return created;
        // Another opener made it between the two steps: look again.
    }
    return -EEXIST;
}

int ShareRoot::locate(int dirfd, const std::string& path, uint64_t flags) const {
    // O_PATH opens nothing: no FIFO handshake, no device driver's open.
    const int fd = resolve(dirfd, path, O_PATH | (flags & (O_NOFOLLOW | O_DIRECTORY)), 0, 0);
    if (fd < 0) return fd;
    struct stat st {};
    const int type_err = ::fstat(fd, &st) != 0 ? -errno
                         : S_ISLNK(st.st_mode)                        ? -ELOOP // O_NOFOLLOW met a symlink
                         : S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) ? 0
                                                                      : -EACCES;
    if (type_err) {
        ::close(fd);
        return type_err;
    }
    return fd;
}

int ShareRoot::reopen(int path_fd, uint64_t flags) {
    // The O_PATH descriptor's own inode, whatever the path names by now.
    char self[40];
    std::snprintf(self, sizeof self, "/proc/self/fd/%d", path_fd);
    open_how how{};
    how.flags = flags | O_CLOEXEC;
    const long fd = ::syscall(SYS_openat2, AT_FDCWD, self, &how, sizeof how);
    return fd < 0 ? -errno : static_cast<int>(fd);
}

int ShareRoot::stat(int dirfd, const std::string& path, bool follow, struct stat* out) const {
    const int fd = resolve(dirfd, path, O_PATH | (follow ? 0 : O_NOFOLLOW), 0, 0);
    if (fd < 0) return fd;
    const int rc = ::fstat(fd, out) == 0 ? 0 : -errno;
    ::close(fd);
    return rc;
}

long ShareRoot::readlink(int dirfd, const std::string& path, char* buf, uint64_t len) const {
    const int fd = resolve(dirfd, path, O_PATH | O_NOFOLLOW, 0, 0);
    if (fd < 0) return fd;
    const ssize_t n = ::readlinkat(fd, "", buf, len);
    const long rc = n < 0 ? -errno : n;
    ::close(fd);
    return rc;
}

ShareRoot::Parent ShareRoot::parent_of(int dirfd, const std::string& path) const {
    Parent p;
    if (path.empty()) return p.err = -ENOENT, std::move(p);
    if (path.size() >= 4096) return p.err = -ENAMETOOLONG, std::move(p);
    std::string trimmed = path;
    while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back(); // "dir/" names dir
    const size_t slash = trimmed.rfind('/');
    p.name = slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
    if (p.name.empty()) return p.err = -EBUSY, std::move(p); // the share's root
    if (p.name == "." || p.name == "..") return p.err = -EINVAL, std::move(p);
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : trimmed.substr(0, slash);
    const int fd = resolve(dirfd, dir, O_PATH | O_DIRECTORY, 0, 0);
    if (fd < 0) return p.err = fd, std::move(p);
    p.dir = UniqueFd(fd);
    return p;
}

int ShareRoot::mkdir(int dirfd, const std::string& path, uint64_t mode) const {
    if (read_only_) return -EROFS;
    const Parent p = parent_of(dirfd, path);
    if (p.err) return p.err == -EBUSY ? -EEXIST : p.err;
    return ::mkdirat(p.dir.get(), p.name.c_str(), static_cast<mode_t>(mode & 07777)) == 0 ? 0 : -errno;
}

int ShareRoot::unlink(int dirfd, const std::string& path, bool directory) const {
    if (read_only_) return -EROFS;
    const Parent p = parent_of(dirfd, path);
    if (p.err) return p.err;
    return ::unlinkat(p.dir.get(), p.name.c_str(), directory ? AT_REMOVEDIR : 0) == 0 ? 0 : -errno;
}

int ShareRoot::rename(int from_dirfd, const std::string& from, int to_dirfd, const std::string& to,
                      uint64_t flags) const {
    if (flags & ~uint64_t{RENAME_NOREPLACE | RENAME_EXCHANGE}) return -EINVAL;
    if (read_only_) return -EROFS;
    const Parent a = parent_of(from_dirfd, from);
    if (a.err) return a.err;
    const Parent b = parent_of(to_dirfd, to);
    if (b.err) return b.err;
    // The system call itself: glibc's renameat2 issues renameat when flags
    // are 0, which the vCPU's seccomp filter does not allow.
    return ::syscall(SYS_renameat2, a.dir.get(), a.name.c_str(), b.dir.get(), b.name.c_str(),
                     static_cast<unsigned>(flags)) == 0
               ? 0
               : -errno;
}

int ShareRoot::link(int from_dirfd, const std::string& from, int to_dirfd, const std::string& to, bool follow) const {
    if (read_only_) return -EROFS;
    const Parent b = parent_of(to_dirfd, to);
    if (b.err) return b.err == -EBUSY ? -EEXIST : b.err;
    if (follow) {
        // The inode the path resolves to inside the share, linked through
        // its O_PATH descriptor (the documented way to link an open file).
        const int found = locate(from_dirfd, from, 0);
        if (found < 0) return found;
        char self[40];
        std::snprintf(self, sizeof self, "/proc/self/fd/%d", found);
        const int rc = ::linkat(AT_FDCWD, self, b.dir.get(), b.name.c_str(), AT_SYMLINK_FOLLOW) == 0 ? 0 : -errno;
        ::close(found);
        return rc;
    }
    const Parent a = parent_of(from_dirfd, from);
    if (a.err) return a.err == -EBUSY ? -EPERM : a.err;
    return ::linkat(a.dir.get(), a.name.c_str(), b.dir.get(), b.name.c_str(), 0) == 0 ? 0 : -errno;
}

int ShareRoot::symlink(const std::string& target, int dirfd, const std::string& path) const {
    if (read_only_) return -EROFS;
    if (target.empty()) return -ENOENT;
    const Parent p = parent_of(dirfd, path);
    if (p.err) return p.err == -EBUSY ? -EEXIST : p.err;
    return ::symlinkat(target.c_str(), p.dir.get(), p.name.c_str()) == 0 ? 0 : -errno;
}

} // namespace kvmgpu::linux_abi
