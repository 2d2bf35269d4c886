// The files a guest expects that the VMM makes up rather than takes from
// the host (whose /proc and /sys are the VMM's and never reach a guest:
// pseudo_fs.h): /proc/self/exe (the guest's executable), /dev/stdin,
// /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N (the guest's own
// descriptor N, shared as dup shares it), /dev/null, /dev/zero,
// /dev/urandom and /dev/random (the host's character devices, none of
// which blocks), /sys/devices/system/cpu/{online,possible,present}
// ("0": one CPU, as sched_getaffinity says), /proc/self/maps (the guest's
// address space as the server records it), /proc/cpuinfo and /proc/meminfo
// (guest_proc_text.h). Made-up text is a memfd written when the guest opens
// it, so read, pread, lseek, fstat and mmap treat it as any file.
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

enum class Special { None, Exe, OwnFd, HostDevice, Text, Maps, CpuInfo, MemInfo };

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
        if (rest == "maps") r.kind = Special::Maps;
        if (rest.starts_with("fd/") && (r.fd = fd_number(rest.substr(3))) >= 0) r.kind = Special::OwnFd;
        return r;
    }
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
        const std::string text = r.kind == Special::Maps      ? maps()
                                 : r.kind == Special::CpuInfo ? cpuinfo_text()
                                 : r.kind == Special::MemInfo ? meminfo_text(user_.memory().total_bytes(), space_.free_bytes())
                                                              : std::string(r.text);
        host = text_file(text);
    }
    if (host < 0) return host;
    auto file = std::make_shared<OpenFile>();
    file->host = UniqueFd(host);
    file->flags = flags & (O_ACCMODE | O_APPEND | O_NONBLOCK);
    return fds_.install(std::move(file));
}

std::optional<int64_t> SyscallServer::stat_special(int64_t dirfd, const std::string& path, uint64_t buf) {
    const Resolved r = resolve(dirfd, path);
    if (r.kind == Special::None) return std::nullopt;
    if (r.kind == Special::OwnFd) return fds_.get(r.fd) ? sys_fstat(static_cast<uint64_t>(r.fd), buf) : -ENOENT;
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
    if (r.kind == Special::Exe) target = opts_.exe_guest_path;
    else if (r.kind == Special::OwnFd && path.starts_with("/dev/std")) target = "/proc/self/fd/" + std::to_string(r.fd);
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

std::string SyscallServer::maps() const {
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
    return maps_text(std::move(entries));
}

} // namespace kvmgpu::linux_abi
