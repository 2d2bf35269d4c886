// The files a guest expects that the VMM makes up rather than takes from
// the host (whose /proc and /sys are the VMM's and never reach a guest:
// pseudo_fs.h): /proc/self/exe (the guest's executable), /proc/self/cwd
// (a link to the guest's cwd; where a call follows it, from_cwd has made
// it the cwd's path before it gets here), /dev/stdin,
// /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N (the guest's own
// descriptor N, shared as dup shares it; readlink gives the path the guest
// opened it by, made absolute, or "pipe:[ino]", "anon_inode:[eventfd]",
// ...), /proc/self/fd and /dev/fd (a directory of the guest's open
// descriptors, read by getdents64 at the time of each read), /dev/null, /dev/zero,
// /dev/urandom and /dev/random (the host's character devices, none of
// which blocks), /sys/devices/system/cpu/{online,possible,present}
// ("0": one CPU, as sched_getaffinity says), /proc/self/maps (the guest's
// address space as the server records it), /proc/self/status, /proc/cpuinfo and /proc/meminfo
// (guest_proc_text.h). Made-up text is a memfd written when the guest opens
// it, so read, pread, lseek, fstat and mmap treat it as any file.
#include <cstdio>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kvmtool-gpu/vmm/linux/syscall_server.h"

namespace kvmgpu::linux_abi {

namespace {
constexpr int64_t kAtFdcwd = -100;

enum class Special { None, Exe, Cwd, OwnFd, FdDir, HostDevice, Text, Maps, Status, CpuInfo, MemInfo };

struct Resolved {
    Special kind = Special::None;
    int fd = -1;             // OwnFd
    const char* device = ""; // HostDevice: its host path
    unsigned minor = 0;      // HostDevice: mem device minor (major 1)
    const char* text = "";   // Text
};

// -1 unless `s` is a decimal descriptor number below kMaxFds.
int fd_number(const std::string& s) {
    if (s.empty() || s.size() > 4) return -1;
    int n = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return -1;
        n = n * 10 + (c - '0');
    }
    return n < kMaxFds ? n : -1;
}

Resolved resolve(int64_t dirfd, const std::string& path) {
    Resolved r;
    if (path.empty() || (!path.starts_with('/') && dirfd != kAtFdcwd)) return r;
    const std::string n = GuestFs::normalize(path.starts_with('/') ? path : "/" + path);
    for (const char* self : {"/proc/self/", "/proc/1/", "/proc/thread-self/"}) {
        const std::string prefix = self;
        if (!n.starts_with(prefix)) continue;
        const std::string rest = n.substr(prefix.size());
        if (rest == "exe") r.kind = Special::Exe;
        if (rest == "cwd") r.kind = Special::Cwd;
        if (rest == "maps") r.kind = Special::Maps;
        if (rest == "status") r.kind = Special::Status;
        if (rest == "fd") r.kind = Special::FdDir;
        if (rest.starts_with("fd/") && (r.fd = fd_number(rest.substr(3))) >= 0) r.kind = Special::OwnFd;
        return r;
    }
    if (n == "/dev/fd") r.kind = Special::FdDir;
    if (n.starts_with("/dev/fd/") && (r.fd = fd_number(n.substr(8))) >= 0) r.kind = Special::OwnFd;
    const struct { const char* path; int fd; } stdio[] = {{"/dev/stdin", 0}, {"/dev/stdout", 1}, {"/dev/stderr", 2}};
    for (const auto& s : stdio)
        if (n == s.path) r = {Special::OwnFd, s.fd};
    const struct { const char* path; const char* host; unsigned minor; } devices[] = {
        {"/dev/null", "/dev/null", 3}, {"/dev/zero", "/dev/zero", 5},
        {"/dev/urandom", "/dev/urandom", 9}, {"/dev/random", "/dev/urandom", 9}};
    for (const auto& d : devices)
        if (n == d.path) r = {Special::HostDevice, -1, d.host, d.minor};
    for (const char* cpus : {"/sys/devices/system/cpu/online", "/sys/devices/system/cpu/possible",
                             "/sys/devices/system/cpu/present"})
        if (n == cpus) r = {Special::Text, -1, "", 0, "0\n"};
    if (n == "/proc/cpuinfo") r.kind = Special::CpuInfo;
    if (n == "/proc/meminfo") r.kind = Special::MemInfo;
    return r;
}

// A read-only descriptor holding `text`.
int text_file(const std::string& text) {
    const int fd = static_cast<int>(::syscall(SYS_memfd_create, "kvmgpu-guest-file", MFD_CLOEXEC));
    if (fd < 0) return -errno;
    const size_t len = text.size();
    if (::pwrite(fd, text.data(), len, 0) != static_cast<ssize_t>(len)) {
        const int err = errno ? errno : EIO;
        ::close(fd);
        return -err;
    }
    return fd;
}

// openat2 of a host path the VMM names itself (no guest bytes in it).
int open_host(const char* path, uint64_t access) {
    open_how how{};
    how.flags = access | O_CLOEXEC | O_NOCTTY;
    how.resolve = RESOLVE_NO_MAGICLINKS;
    const long fd = ::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    return fd < 0 ? -errno : static_cast<int>(fd);
}
} // namespace

std::optional<int64_t> SyscallServer::open_special(int64_t dirfd, const std::string& path, uint64_t flags) {
    const Resolved r = resolve(dirfd, path);
    if (r.kind == Special::None) return std::nullopt;
    const uint64_t access = flags & O_ACCMODE;
    if (access == O_ACCMODE) return -EINVAL;
    if (r.kind == Special::OwnFd) {
        auto file = fds_.share(r.fd);
        return file ? fds_.install(std::move(file)) : -ENOENT;
    }
    const std::string link = GuestFs::normalize(path.starts_with('/') ? path : "/" + path);
    if (r.kind == Special::FdDir) {
        if (access != O_RDONLY || (flags & (O_CREAT | O_TRUNC))) return -EISDIR;
        auto dir = std::make_shared<OpenFile>();
        dir->kind = OpenFile::Kind::ProcFdDir;
        dir->directory = true;
        dir->flags = flags & (O_ACCMODE | O_NONBLOCK | O_DIRECTORY);
        dir->link = link;
        return fds_.install(std::move(dir));
    }
    if (r.kind == Special::Cwd) return -ELOOP; // O_NOFOLLOW met the link
    if (flags & O_DIRECTORY) return -ENOTDIR;
    int host = -ENOENT;
    if (r.kind == Special::Exe) {
        if (access != O_RDONLY || (flags & (O_CREAT | O_TRUNC))) return -ETXTBSY;
        if (opts_.exe_host_path.empty()) return -ENOENT;
        host = open_host(opts_.exe_host_path.c_str(), O_RDONLY);
    } else if (r.kind == Special::HostDevice) {
        host = open_host(r.device, access);
        struct stat st {};
        if (host >= 0 && (::fstat(host, &st) != 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, r.minor))) {
            ::close(host);
            return -ENOENT; // not the device the name promises
        }
    } else {
        if (access != O_RDONLY || (flags & (O_CREAT | O_TRUNC))) return -EACCES;
        const uint64_t ram = user_.memory().total_bytes();
        const std::string text = r.kind == Special::Maps      ? maps()
                                 : r.kind == Special::Status  ? status_text(opts_.exe_guest_path, live_threads_.load(),
                                                                            ram - space_.free_bytes())
                                 : r.kind == Special::CpuInfo ? cpuinfo_text(opts_.cpuid)
                                 : r.kind == Special::MemInfo ? meminfo_text(ram, space_.free_bytes())
                                                              : std::string(r.text);
        host = text_file(text);
    }
    if (host < 0) return host;
    auto file = std::make_shared<OpenFile>();
    file->host = UniqueFd(host);
    file->flags = flags & (O_ACCMODE | O_APPEND | O_NONBLOCK);
    file->link = r.kind == Special::Exe ? opts_.exe_guest_path : link;
    return fds_.install(std::move(file));
}

std::optional<int64_t> SyscallServer::stat_special(int64_t dirfd, const std::string& path, uint64_t buf) {
    const Resolved r = resolve(dirfd, path);
    if (r.kind == Special::None) return std::nullopt;
    if (r.kind == Special::OwnFd) return fds_.get(r.fd) ? sys_fstat(static_cast<uint64_t>(r.fd), buf) : -ENOENT;
    if (r.kind == Special::Cwd) { // lstat: a link
        struct stat st {};
        st.st_mode = S_IFLNK | 0777;
        st.st_nlink = 1;
        st.st_blksize = 4096;
        return user_.write_obj(buf, st) ? 0 : -EFAULT;
    }
    const auto fd = open_special(dirfd, path, O_RDONLY);
    if (*fd < 0) return *fd;
    const int64_t rc = sys_fstat(static_cast<uint64_t>(*fd), buf);
    fds_.close(*fd);
    return rc;
}

std::optional<int64_t> SyscallServer::readlink_special(int64_t dirfd, const std::string& path, uint64_t buf,
                                                       uint64_t len) {
    const Resolved r = resolve(dirfd, path);
    if (r.kind == Special::None) return std::nullopt;
    std::string target;
    if (r.kind == Special::Exe && opts_.exe_host_path.empty()) return -ENOENT; // no program known (tests)
    const std::string name = GuestFs::normalize(path.starts_with('/') ? path : "/" + path);
    if (r.kind == Special::Exe) target = opts_.exe_guest_path;
    else if (r.kind == Special::Cwd) {
        if (const int rc = cwd_.current(opts_.share.get(), target)) return rc;
    } else if (r.kind == Special::OwnFd && name.starts_with("/dev/std")) target = "/proc/self/fd/" + std::to_string(r.fd);
    else if (r.kind == Special::OwnFd) {
        const OpenFile* f = fds_.get(r.fd);
        if (!f) return -ENOENT;
        target = f->link;
    } else if (r.kind == Special::FdDir && name == "/dev/fd") target = "/proc/self/fd";
    else return -EINVAL; // not a symbolic link
    const uint64_t n = std::min<uint64_t>(len, target.size());
    return user_.write(buf, target.data(), n) ? static_cast<int64_t>(n) : -EFAULT;
}

std::optional<int64_t> SyscallServer::access_special(int64_t dirfd, const std::string& path, uint64_t mode) {
    const Resolved r = resolve(dirfd, path);
    if (r.kind == Special::None) return std::nullopt;
    if (r.kind == Special::OwnFd) return fds_.get(r.fd) ? 0 : -ENOENT;
    if ((mode & W_OK) && r.kind != Special::OwnFd && r.kind != Special::HostDevice) return -EACCES;
    if ((mode & X_OK) && r.kind != Special::Exe) return -EACCES;
    return 0;
}

int64_t SyscallServer::proc_fd_entries(OpenFile& dir, uint64_t buf, uint64_t len) {
    // Positions as Linux's: 0 ".", 1 "..", then descriptor N at N + 2.
    constexpr uint8_t kDtDir = 4, kDtLnk = 10;
    std::vector<uint8_t> out;
    auto add = [&](uint64_t ino, uint64_t next, uint8_t type, const std::string& name) {
        const uint64_t reclen = (19 + name.size() + 1 + 7) & ~uint64_t{7};
        if (out.size() + reclen > len) return false;
        const size_t at = out.size();
        out.resize(at + reclen, 0);
        const uint16_t rl = static_cast<uint16_t>(reclen);
        std::memcpy(&out[at], &ino, 8);
        std::memcpy(&out[at + 8], &next, 8);
        std::memcpy(&out[at + 16], &rl, 2);
        out[at + 18] = type;
        std::memcpy(&out[at + 19], name.data(), name.size());
        dir.dir_next = next;
        return true;
    };
    bool room = true;
    if (dir.dir_next == 0) room = add(1, 1, kDtDir, ".");
    if (room && dir.dir_next == 1) room = add(2, 2, kDtDir, "..");
    for (int fd : fds_.open_fds())
        if (room && static_cast<uint64_t>(fd) + 2 >= dir.dir_next)
            room = add(0x1000 + static_cast<uint64_t>(fd), static_cast<uint64_t>(fd) + 3, kDtLnk, std::to_string(fd));
    if (out.empty() && !room) return -EINVAL; // not even one entry fits
    return user_.write(buf, out.data(), out.size()) ? static_cast<int64_t>(out.size()) : -EFAULT;
}

std::string SyscallServer::maps() const { return maps_text(maps_entries()); }

std::vector<MapsEntry> SyscallServer::maps_entries() const {
    std::vector<MapsEntry> entries;
    for (const MapsEntry& image : layout_.images) {
        if (!space_.in_managed(image.lo, image.hi - image.lo)) {
            entries.push_back(image);
            continue;
        }
        for (const auto& [lo, hi] : space_.reserved_within(image.lo, image.hi))
            entries.push_back({lo, hi, image.perms, image.name});
    }
    // The guest's page tables map all of its RAM above the VMM's pages
    // readable, writable and executable: what mprotect asks is not recorded.
    const auto [heap_lo, heap_hi] = space_.heap();
    entries.push_back({heap_lo, heap_hi, "rwxp", "[heap]"});
    for (const auto& [lo, hi] : space_.mappings()) entries.push_back({lo, hi, "rwxp", ""});
    entries.push_back({layout_.stack_lo, layout_.stack_top, "rwxp", "[stack]"});
    if (window_) // the file window's pieces as the guest mapped them: path, offset, protection
        for (MapsEntry& e : window_->maps()) entries.push_back(std::move(e));
    return entries;
}

std::string SyscallServer::place_of(uint64_t addr) const {
    for (const MapsEntry& e : maps_entries()) {
        if (addr < e.lo || addr >= e.hi) continue;
        if (e.name.empty()) return "an anonymous mapping";
        if (e.name[0] == '[') return e.name;
        char where[32];
        std::snprintf(where, sizeof where, "+0x%llx", static_cast<unsigned long long>(e.offset + (addr - e.lo)));
        return e.name + where;
    }
    return "unmapped";
}

} // namespace kvmgpu::linux_abi
