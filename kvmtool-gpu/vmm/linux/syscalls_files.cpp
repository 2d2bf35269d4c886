// Descriptors: the console (0, 1, 2) and the share's files and directories
// (share_fs.h). The working directory is a guest path (chdir, fchdir): a
// path relative to AT_FDCWD is taken from it, then resolved as any
// absolute path is (root_fs.h). Data moves straight between the host file and the guest's
// RAM span, checked by UserMemory first.
#include <algorithm>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "kvmtool-gpu/vmm/linux/syscall_server.h"

namespace kvmgpu::linux_abi {

namespace {
constexpr int64_t kAtFdcwd = -100;
constexpr uint64_t kMaxIo = 0x7ffff000; // Linux's MAX_RW_COUNT
static_assert(sizeof(struct stat) == 144, "x86-64 struct stat");

struct stat console_stat() {
    struct stat st {};
    st.st_mode = S_IFCHR | 0620;
    st.st_blksize = 4096;
    st.st_nlink = 1;
    st.st_rdev = makedev(136, 0);
    return st;
}
} // namespace

int SyscallServer::dir_host_fd(int64_t dirfd, const std::string& path) const {
    if (path.starts_with('/') || dirfd == kAtFdcwd) return -1;
    const OpenFile* f = fds_.get(dirfd);
    if (!f) return -EBADF;
    if (f->kind != OpenFile::Kind::Host || !f->directory) return -ENOTDIR;
    return f->host.get();
}

int64_t SyscallServer::sys_read(uint64_t fd, uint64_t buf, uint64_t len, int64_t offset) {
    OpenFile* f = fds_.get(static_cast<int64_t>(fd));
    if (!f || f->kind == OpenFile::Kind::ConsoleOut) return -EBADF;
    len = std::min(len, kMaxIo);
    auto dst = user_.span(buf, len);
    if (!dst) return -EFAULT;
    if (f->kind == OpenFile::Kind::ConsoleIn) return offset >= 0 ? -ESPIPE : 0; // stdin: end of file
    if (f->directory) return -EISDIR;
    if (f->kind == OpenFile::Kind::Epoll) return -EINVAL;
    if ((f->flags & O_ACCMODE) == O_WRONLY) return -EBADF;
    const ssize_t n = offset >= 0 ? ::pread(f->host.get(), dst->data(), len, offset) : ::read(f->host.get(), dst->data(), len);
    return n < 0 ? -errno : n;
}

int64_t SyscallServer::sys_write(uint64_t fd, uint64_t buf, uint64_t len, int64_t offset) {
    OpenFile* f = fds_.get(static_cast<int64_t>(fd));
    if (!f || f->kind == OpenFile::Kind::ConsoleIn) return -EBADF;
    len = std::min(len, kMaxIo);
    auto src = user_.span(buf, len);
    if (!src) return -EFAULT;
    return write_file(*f, *src, offset);
}

int64_t SyscallServer::write_file(OpenFile& f, std::span<const uint8_t> src, int64_t offset) {
    if (f.kind == OpenFile::Kind::ConsoleIn) return -EBADF;
    if (f.kind == OpenFile::Kind::ConsoleOut) return offset >= 0 ? -ESPIPE : console_write(src, f.stdio);
    if (f.directory) return -EISDIR;
    if (f.kind == OpenFile::Kind::Epoll) return -EINVAL;
    if ((f.flags & O_ACCMODE) == O_RDONLY) return -EBADF;
    if (f.stream) block_sigpipe_on_this_thread();
    const ssize_t n = offset >= 0 ? ::pwrite(f.host.get(), src.data(), src.size(), offset)
                                  : ::write(f.host.get(), src.data(), src.size());
    return n < 0 ? -errno : n;
}

int64_t SyscallServer::console_write(std::span<const uint8_t> bytes, int stdio) {
    // A short count, as a terminal or pipe may give: the caller's loop comes
    // back, and between its calls the VM can be stopped (time-out, Ctrl-C,
    // exit_group on another thread). serve() emits the bytes after the lock.
    const uint64_t room = kConsoleChunk - std::min<uint64_t>(console_pending_.size(), kConsoleChunk);
    const uint64_t n = std::min<uint64_t>(bytes.size(), room);
    console_pending_.append(reinterpret_cast<const char*>(bytes.data()), n);
    console_stdio_ = stdio; // one call writes one descriptor
    return static_cast<int64_t>(n);
}

void SyscallServer::lend_host_stdio() {
    auto in = std::make_shared<OpenFile>();
    if (UniqueFd host = opts_.stdio->stdin_descriptor()) {
        in->host = std::move(host);
        in->stream = opts_.stdio->stdin_is_stream();
    } else {
        in->kind = OpenFile::Kind::ConsoleIn; // end of file
    }
    in->flags = O_RDONLY;
    fds_.place(0, std::move(in));
    for (int stream = 0; stream < 3; ++stream) {
        if (stream > 0) {
            auto out = std::make_shared<OpenFile>();
            out->kind = OpenFile::Kind::ConsoleOut;
            out->flags = O_WRONLY;
            fds_.place(stream, std::move(out));
        }
        OpenFile* f = fds_.get(stream);
        f->stdio = stream;
        f->link = opts_.stdio->link(stream);
    }
}

int64_t SyscallServer::stdio_ioctl(int stdio, uint64_t cmd, uint64_t arg) {
    const auto& tty = opts_.stdio->termios(stdio);
    switch (cmd) {
    case TCGETS:
        if (!tty) return -ENOTTY;
        return user_.write(arg, tty->data(), tty->size()) ? 0 : -EFAULT;
    case TIOCGWINSZ: {
        const auto& w = opts_.stdio->window(stdio);
        if (!w) return -ENOTTY;
        return user_.write(arg, w->data(), w->size()) ? 0 : -EFAULT;
    }
    default: return tty ? -EPERM : -ENOTTY; // the terminal is the user's: a guest reads it, never sets it
    }
}

int64_t SyscallServer::sys_iov(uint64_t fd, uint64_t iov, uint64_t count, bool write) {
    if (!fds_.get(static_cast<int64_t>(fd))) return -EBADF;
    if (count > 1024) return -EINVAL; // UIO_MAXIOV
    std::vector<uint64_t> vec(count * 2);
    if (count && !user_.read(iov, vec.data(), count * 16)) return -EFAULT;
    uint64_t total = 0;
    for (uint64_t i = 0; i < count; ++i) {
        if (vec[2 * i + 1] > kMaxIo || total + vec[2 * i + 1] > kMaxIo) return -EINVAL;
        total += vec[2 * i + 1];
    }
    int64_t done = 0;
    for (uint64_t i = 0; i < count; ++i) {
        const uint64_t base = vec[2 * i], len = vec[2 * i + 1];
        if (len == 0) continue;
        const int64_t n = write ? sys_write(fd, base, len, -1) : sys_read(fd, base, len, -1);
        if (n < 0) return done ? done : n;
        done += n;
        if (static_cast<uint64_t>(n) < len) break;
    }
    return done;
}

int64_t SyscallServer::sys_sendfile(uint64_t out_fd, uint64_t in_fd, uint64_t offset_addr, uint64_t count) {
    OpenFile* in = fds_.get(static_cast<int64_t>(in_fd));
    OpenFile* out = fds_.get(static_cast<int64_t>(out_fd));
    if (!in || !out) return -EBADF;
    if (in->kind != OpenFile::Kind::Host || (in->flags & O_ACCMODE) == O_WRONLY) return -EBADF;
    if (out->kind == OpenFile::Kind::ConsoleIn || (out->flags & O_ACCMODE) == O_RDONLY) return -EBADF;
    if (out->flags & O_APPEND) return -EINVAL; // as Linux
    struct stat st {};
    if (::fstat(in->host.get(), &st) != 0 || !S_ISREG(st.st_mode)) return -EINVAL; // a file the guest can seek
    std::optional<int64_t> offset;
    if (offset_addr) {
        offset = user_.read_obj<int64_t>(offset_addr);
        if (!offset) return -EFAULT;
        if (*offset < 0) return -EINVAL;
    }
    const uint64_t n = std::min({count, kSendfileChunk, kMaxIo});
    if (n == 0) return 0;
    std::vector<uint8_t> bounce(n);
    const ssize_t got = offset ? ::pread(in->host.get(), bounce.data(), n, *offset)
                               : ::read(in->host.get(), bounce.data(), n);
    if (got <= 0) return got < 0 ? -errno : 0;
    const int64_t put = write_file(*out, std::span<const uint8_t>(bounce.data(), static_cast<size_t>(got)), -1);
    // What did not reach the output (a console takes a chunk a call) stays
    // unread: the file's offset (or the caller's) moves by what was written.
    const int64_t moved = std::max<int64_t>(put, 0);
    if (!offset && moved < got) ::lseek(in->host.get(), moved - got, SEEK_CUR);
    if (offset && moved > 0 && !user_.write_obj(offset_addr, *offset + moved)) return -EFAULT;
    return put;
}

// Copies remote iovec by remote iovec, each whole or not at all (Linux
// stops at the first page it cannot reach: a count, then EFAULT).
int64_t SyscallServer::sys_process_vm(uint64_t pid, uint64_t local, uint64_t local_count, uint64_t remote,
                                      uint64_t remote_count, uint64_t flags, bool write) {
    if (flags != 0) return -EINVAL;
    if (pid != 1) return -ESRCH; // no other process exists
    if (local_count > 1024 || remote_count > 1024) return -EINVAL; // UIO_MAXIOV
    std::vector<uint64_t> lv(local_count * 2), rv(remote_count * 2);
    if (local_count && !user_.read(local, lv.data(), local_count * 16)) return -EFAULT;
    if (remote_count && !user_.read(remote, rv.data(), remote_count * 16)) return -EFAULT;
    uint64_t local_total = 0, remote_total = 0;
    for (uint64_t i = 0; i < local_count; ++i)
        if ((local_total += std::min(lv[2 * i + 1], kMaxIo)) > kMaxIo) return -EINVAL;
    for (uint64_t i = 0; i < remote_count; ++i)
        if ((remote_total += std::min(rv[2 * i + 1], kMaxIo)) > kMaxIo) return -EINVAL;
    // The "remote" side is this process too: a read copies remote to local, a write local to remote.
    std::vector<uint64_t>& src = write ? lv : rv;
    std::vector<uint64_t>& dst = write ? rv : lv;
    uint64_t si = 0, s_off = 0, di = 0, d_off = 0;
    int64_t done = 0;
    std::vector<uint8_t> bounce;
    while (si < src.size() / 2 && di < dst.size() / 2) {
        const uint64_t s_len = src[2 * si + 1], d_len = dst[2 * di + 1];
        if (s_off == s_len) { ++si, s_off = 0; continue; }
        if (d_off == d_len) { ++di, d_off = 0; continue; }
        const uint64_t n = std::min<uint64_t>({s_len - s_off, d_len - d_off, 1u << 20});
        bounce.resize(n);
        if (!user_.read(src[2 * si] + s_off, bounce.data(), n) || !user_.write(dst[2 * di] + d_off, bounce.data(), n))
            return done ? done : -EFAULT;
        s_off += n, d_off += n, done += static_cast<int64_t>(n);
    }
    return done;
}

int64_t SyscallServer::sys_openat(int64_t dirfd, uint64_t path_addr, uint64_t flags, uint64_t mode) {
    auto [path, err] = user_.string(path_addr, kPathMax);
    if (err) return err;
    if (const int64_t rc = from_cwd(dirfd, path, !(flags & O_NOFOLLOW))) return rc;
    if (auto special = open_special(dirfd, path, flags)) return *special;
    if (!opts_.share) return -ENOENT; // no --share: no file system
    const int dir = dir_host_fd(dirfd, path);
    if (dir < -1) return dir;
    const int host = opts_.share->open(dir, path, flags, mode);
    if (host < 0) return host;
    auto file = std::make_shared<OpenFile>();
    file->host = UniqueFd(host);
    file->flags = flags;
    const OpenFile* at = path.starts_with('/') || dirfd == kAtFdcwd ? nullptr : fds_.get(dirfd);
    file->link = GuestFs::normalize((at ? at->link : std::string()) + "/" + path);
    struct stat st {};
    file->directory = ::fstat(host, &st) == 0 && S_ISDIR(st.st_mode);
    return fds_.install(std::move(file));
}

int64_t SyscallServer::sys_close(uint64_t fd) { return fds_.close(static_cast<int64_t>(fd)); }

int64_t SyscallServer::sys_fstat(uint64_t fd, uint64_t buf) {
    const OpenFile* f = fds_.get(static_cast<int64_t>(fd));
    if (!f) return -EBADF;
    struct stat st = console_stat();
    if (f->kind == OpenFile::Kind::Host && ::fstat(f->host.get(), &st) != 0) return -errno;
    if (f->kind != OpenFile::Kind::Host && f->stdio >= 0)
        if (const int rc = opts_.stdio->stat(f->stdio, &st); rc < 0) return rc;
    if (f->kind == OpenFile::Kind::ProcFdDir || f->kind == OpenFile::Kind::Epoll) {
        st = {};
        st.st_mode = f->kind == OpenFile::Kind::ProcFdDir ? S_IFDIR | 0500 : 0600; // an anonymous inode has no type
        st.st_nlink = f->kind == OpenFile::Kind::ProcFdDir ? 2 : 1;
        st.st_blksize = 4096;
    }
    return user_.write_obj(buf, st) ? 0 : -EFAULT;
}

int64_t SyscallServer::sys_newfstatat(int64_t dirfd, uint64_t path_addr, uint64_t buf, uint64_t flags) {
    constexpr uint64_t kEmptyPath = 0x1000, kNoFollow = 0x100, kNoAutomount = 0x800;
    if (flags & ~(kEmptyPath | kNoFollow | kNoAutomount)) return -EINVAL;
    auto [path, err] = user_.string(path_addr, kPathMax);
    if (err) return err;
    if (path.empty() && (flags & kEmptyPath)) {
        if (dirfd != kAtFdcwd) return sys_fstat(static_cast<uint64_t>(dirfd), buf);
        path.assign(1, '.'); // the cwd itself (assign: GCC 12's -Wrestrict misfires on = ".")
    }
    if (const int64_t rc = from_cwd(dirfd, path, !(flags & kNoFollow))) return rc;
    if (auto special = stat_special(dirfd, path, buf)) return *special;
    if (!opts_.share) return -ENOENT;
    const int dir = dir_host_fd(dirfd, path);
    if (dir < -1) return dir;
    struct stat st {};
    const int rc = opts_.share->stat(dir, path, !(flags & kNoFollow), &st);
    if (rc < 0) return rc;
    return user_.write_obj(buf, st) ? 0 : -EFAULT;
}

int64_t SyscallServer::sys_statx(int64_t dirfd, uint64_t path_addr, uint64_t flags, uint64_t buf) {
    constexpr uint64_t kSyncType = 0x6000; // AT_STATX_FORCE_SYNC, AT_STATX_DONT_SYNC: nothing to sync here
    if ((flags & kSyncType) == kSyncType) return -EINVAL;
    struct statx sx {};
    if (!user_.span(buf, sizeof sx)) return -EFAULT;
    // Served as newfstatat, into the start of the guest's own buffer (a
    // struct stat is smaller), then widened in place. Only the guest's
    // result depends on those bytes.
    static_assert(sizeof(struct stat) <= sizeof(struct statx));
    const int64_t rc = sys_newfstatat(dirfd, path_addr, buf, flags & ~kSyncType);
    if (rc != 0) return rc;
    struct stat st {};
    if (!user_.read(buf, &st, sizeof st)) return -EFAULT;
    sx.stx_mask = STATX_BASIC_STATS;
    sx.stx_blksize = static_cast<uint32_t>(st.st_blksize);
    sx.stx_nlink = static_cast<uint32_t>(st.st_nlink);
    sx.stx_uid = st.st_uid;
    sx.stx_gid = st.st_gid;
    sx.stx_mode = static_cast<uint16_t>(st.st_mode);
    sx.stx_ino = st.st_ino;
    sx.stx_size = static_cast<uint64_t>(st.st_size);
    sx.stx_blocks = static_cast<uint64_t>(st.st_blocks);
    const auto ts = [](const timespec& t) {
        return statx_timestamp{t.tv_sec, static_cast<uint32_t>(t.tv_nsec), 0};
    };
    sx.stx_atime = ts(st.st_atim);
    sx.stx_mtime = ts(st.st_mtim);
    sx.stx_ctime = ts(st.st_ctim);
    sx.stx_rdev_major = major(st.st_rdev);
    sx.stx_rdev_minor = minor(st.st_rdev);
    sx.stx_dev_major = major(st.st_dev);
    sx.stx_dev_minor = minor(st.st_dev);
    return user_.write_obj(buf, sx) ? 0 : -EFAULT;
}

int64_t SyscallServer::sys_lseek(uint64_t fd, int64_t off, uint64_t whence) {
    OpenFile* f = fds_.get(static_cast<int64_t>(fd));
    if (!f) return -EBADF;
    if (f->kind == OpenFile::Kind::ProcFdDir) { // rewinddir, seekdir to a position getdents64 gave
        if (whence != SEEK_SET || off < 0) return -EINVAL;
        f->dir_next = static_cast<uint64_t>(off);
        return off;
    }
    if (f->kind != OpenFile::Kind::Host) return -ESPIPE;
    if (whence > 4) return -EINVAL; // SEEK_SET .. SEEK_HOLE
    const off_t r = ::lseek(f->host.get(), off, static_cast<int>(whence));
    return r < 0 ? -errno : r;
}

int64_t SyscallServer::sys_ioctl(uint64_t fd, uint64_t cmd, uint64_t arg) {
    OpenFile* f = fds_.get(static_cast<int64_t>(fd));
    if (!f) return -EBADF;
    switch (cmd) {
    case FIONBIO: { // as F_SETFL's O_NONBLOCK (Python's os.set_blocking uses it)
        const auto on = user_.read_obj<int32_t>(arg);
        if (!on) return -EFAULT;
        if (f->stream) f->flags = (f->flags & ~uint64_t{O_NONBLOCK}) | (*on ? O_NONBLOCK : 0);
        return 0;
    }
    case FIOCLEX:
    case FIONCLEX: return 0; // close-on-exec means nothing without exec (as F_SETFD)
    default:
        if (f->stdio >= 0 && opts_.stdio) return stdio_ioctl(f->stdio, cmd, arg);
        return -ENOTTY; // no terminal: stdio buffers fully
    }
}

int64_t SyscallServer::sys_readlinkat(int64_t dirfd, uint64_t path_addr, uint64_t buf, uint64_t len) {
    auto [path, err] = user_.string(path_addr, kPathMax);
    if (err) return err;
    if (const int64_t rc = from_cwd(dirfd, path, false)) return rc;
    if (static_cast<int64_t>(len) <= 0) return -EINVAL;
    if (!user_.span(buf, len)) return -EFAULT; // the whole buffer, not just the target's bytes
    len = std::min<uint64_t>(len, kPathMax); // a link's target is never longer
    if (auto special = readlink_special(dirfd, path, buf, len)) return *special;
    if (!opts_.share) return -ENOENT;
    const int dir = dir_host_fd(dirfd, path);
    if (dir < -1) return dir;
    char target[kPathMax];
    const long n = opts_.share->readlink(dir, path, target, len);
    if (n < 0) return n;
    return user_.write(buf, target, static_cast<uint64_t>(n)) ? n : -EFAULT;
}

int64_t SyscallServer::sys_faccessat(int64_t dirfd, uint64_t path_addr, uint64_t mode) {
    if (mode & ~uint64_t{7}) return -EINVAL;
    auto [path, err] = user_.string(path_addr, kPathMax);
    if (err) return err;
    if (const int64_t rc = from_cwd(dirfd, path, true)) return rc;
    if (auto special = access_special(dirfd, path, mode)) return *special;
    if (!opts_.share) return -ENOENT;
    const int dir = dir_host_fd(dirfd, path);
    if (dir < -1) return dir;
    struct stat st {};
    const int rc = opts_.share->stat(dir, path, true, &st);
    if (rc < 0) return rc;
    // The guest runs as root: existence decides, except writes to a read-only mount.
    if ((mode & W_OK) && opts_.share->read_only_at(dir, path)) return -EROFS;
    if ((mode & X_OK) && !S_ISDIR(st.st_mode) && !(st.st_mode & 0111)) return -EACCES;
    return 0;
}

int64_t SyscallServer::sys_getdents64(uint64_t fd, uint64_t buf, uint64_t len) {
    OpenFile* f = fds_.get(static_cast<int64_t>(fd));
    if (!f) return -EBADF;
    if (!f->directory) return -ENOTDIR;
    len = std::min<uint64_t>(len, 1 << 16);
    if (!user_.span(buf, len)) return -EFAULT;
    if (f->kind == OpenFile::Kind::ProcFdDir) return proc_fd_entries(*f, buf, len);
    std::vector<uint8_t> tmp(len);
    const long n = ::syscall(SYS_getdents64, f->host.get(), tmp.data(), len);
    if (n < 0) return -errno;
    return user_.write(buf, tmp.data(), static_cast<uint64_t>(n)) ? n : -EFAULT;
}

int64_t SyscallServer::sys_fcntl(uint64_t fd, uint64_t cmd, uint64_t arg) {
    OpenFile* f = fds_.get(static_cast<int64_t>(fd));
    if (!f) return -EBADF;
    switch (cmd) {
    case F_DUPFD:
    case F_DUPFD_CLOEXEC:
        if (static_cast<int64_t>(arg) < 0 || arg >= static_cast<uint64_t>(fds_.limit())) return -EINVAL;
        return fds_.install(fds_.share(static_cast<int64_t>(fd)), static_cast<int>(arg));
    case F_GETFD:
    case F_SETFD: return 0; // close-on-exec means nothing without exec
    case F_GETFL: return static_cast<int64_t>(f->flags);
    case F_SETFL:
        // A pipe or eventfd's O_NONBLOCK is the guest's to choose (its host fd
        // is always non-blocking: syscalls_events.cpp); other files' flag
        // changes are not carried to the host file.
        if (f->stream) f->flags = (f->flags & ~uint64_t{O_NONBLOCK}) | (arg & O_NONBLOCK);
        return 0;
    default: return -EINVAL;
    }
}

int64_t SyscallServer::sys_dup(uint64_t oldfd, int64_t newfd, uint64_t flags, bool dup3) {
    auto file = fds_.share(static_cast<int64_t>(oldfd));
    if (!file) return -EBADF;
    if (newfd < 0 && !dup3) return fds_.install(std::move(file)); // dup
    if (dup3 && (flags & ~uint64_t{O_CLOEXEC})) return -EINVAL;
    if (static_cast<int64_t>(oldfd) == newfd) return dup3 ? -EINVAL : newfd;
    const int rc = fds_.place(newfd, std::move(file));
    return rc < 0 ? rc : newfd;
}

} // namespace kvmgpu::linux_abi
