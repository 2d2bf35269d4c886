#include "kvmtool-gpu/vmm/linux/guest_cwd.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace kvmgpu::linux_abi {

namespace {
bool same_inode(const struct stat& a, dev_t dev, ino_t ino) { return a.st_dev == dev && a.st_ino == ino; }
} // namespace

std::string GuestCwd::join(const std::string& cwd, const std::string& relative) {
    std::string base = cwd;
    size_t i = 0;
    while (i < relative.size()) {
        const size_t slash = std::min(relative.find('/', i), relative.size());
        const std::string_view part = std::string_view(relative).substr(i, slash - i);
        if (part == "..") {
            base.resize(std::max<size_t>(base.rfind('/'), 1)); // "/a/b" -> "/a", "/a" -> "/", "/" stays
        } else if (!part.empty() && part != ".") {
            break;
        }
        i = slash + 1;
    }
    const std::string rest = i < relative.size() ? relative.substr(i) : "";
    if (rest.empty()) return base;
    return base == "/" ? "/" + rest : base + "/" + rest;
}

int GuestCwd::hold(const GuestFs& fs, UniqueFd dir, const std::string& fallback) {
    struct stat st {};
    if (::fstat(dir.get(), &st) != 0) return -errno;
    if (!S_ISDIR(st.st_mode)) return -ENOTDIR;
    std::string path = fs.guest_path_of(dir.get());
    if (path.empty()) { // no host path to map (e.g. /proc unreadable): the guest's own words, if they name it
        struct stat named {};
        if (fs.stat(-1, fallback, true, &named) != 0 || !same_inode(named, st.st_dev, st.st_ino)) return -ENOENT;
        path = fallback;
    }
    path_ = std::move(path);
    dir_ = std::move(dir);
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    return 0;
}

int GuestCwd::change(const GuestFs& fs, const std::string& absolute_path) {
    const std::string normal = GuestFs::normalize(absolute_path);
    const int fd = fs.open(-1, absolute_path, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0) {
        if (normal != "/" || fd != -ENOENT) return fd;
        path_.assign(1, '/'); // nothing mounted at "/": still the guest's cwd (assign: GCC 12's -Wrestrict misfires on = "/")
        dir_ = UniqueFd();
        return 0;
    }
    return hold(fs, UniqueFd(fd), normal);
}

int GuestCwd::change_to(const GuestFs& fs, int host_dir_fd, const std::string& opened_as) {
    // A descriptor of its own (O_PATH), so the guest's close leaves the cwd be.
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    const long fd = ::syscall(SYS_openat2, host_dir_fd, ".", &how, sizeof how);
    if (fd < 0) return -errno;
    return hold(fs, UniqueFd(static_cast<int>(fd)), GuestFs::normalize(opened_as));
}

int GuestCwd::current(const GuestFs* fs, std::string& out) {
    if (!dir_ || !fs) {
        out = path_;
        return 0;
    }
    struct stat st {};
    if (fs->stat(-1, path_, true, &st) != 0 || !same_inode(st, dev_, ino_)) {
        std::string moved = fs->guest_path_of(dir_.get());
        if (moved.empty()) return -ENOENT; // removed, or out of the guest's sight
        path_ = std::move(moved);
    }
    out = path_;
    return 0;
}

std::string visible_at_same_path(const GuestFs& fs, const std::string& host_dir) {
    if (!host_dir.starts_with('/')) return "";
    struct stat host {}, guest {};
    if (::stat(host_dir.c_str(), &host) != 0 || !S_ISDIR(host.st_mode)) return "";
    const std::string path = GuestFs::normalize(host_dir);
    if (fs.stat(-1, path, true, &guest) != 0 || !same_inode(guest, host.st_dev, host.st_ino)) return "";
    return path;
}

} // namespace kvmgpu::linux_abi
