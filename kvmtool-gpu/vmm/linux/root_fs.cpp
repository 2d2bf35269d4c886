#include "kvmtool-gpu/vmm/linux/root_fs.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <stdexcept>

namespace kvmgpu::linux_abi {

namespace {
size_t components(const std::string& normalized) {
    return normalized == "/" ? 0 : static_cast<size_t>(std::count(normalized.begin(), normalized.end(), '/'));
}

// The host path the kernel gives descriptor `fd` ("" when it has none).
std::string host_path_of(int fd) {
    char link[40];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    char buf[4096];
    const ssize_t n = ::readlinkat(AT_FDCWD, link, buf, sizeof buf); // readlinkat: the vCPU filter's call
    if (n <= 0 || static_cast<size_t>(n) >= sizeof buf || buf[0] != '/') return "";
    return std::string(buf, static_cast<size_t>(n));
}
} // namespace

std::string GuestFs::normalize(const std::string& path) {
    std::vector<std::string> parts;
    size_t i = 0;
    while (i <= path.size()) {
        const size_t slash = std::min(path.find('/', i), path.size());
        const std::string part = path.substr(i, slash - i);
        if (part == "..") {
            if (!parts.empty()) parts.pop_back();
        } else if (!part.empty() && part != ".") {
            parts.push_back(part);
        }
        i = slash + 1;
    }
    std::string out;
    for (const auto& p : parts) out += "/" + p;
    return out.empty() ? "/" : out;
}

GuestFs::GuestFs(const std::vector<MountSpec>& mounts, std::shared_ptr<const LibraryOverlay> overlay)
    : overlay_(std::move(overlay)) {
    for (const auto& m : mounts) {
        const std::string flag = m.flag + " ";
        if (!m.guest_path.starts_with('/'))
            throw std::runtime_error(flag + m.host_dir + ": guest path '" + m.guest_path + "' is not absolute");
        const std::string at = normalize(m.guest_path);
        for (const auto& [have, _] : mounts_)
            if (have == at) throw std::runtime_error(flag + m.host_dir + ": " + at + " is mounted twice");
        try {
            mounts_.emplace_back(at, std::make_unique<ShareRoot>(m.host_dir, m.read_only));
        } catch (const std::runtime_error& e) { // "--share DIR: why": name the flag given
            const std::string why = e.what();
            throw std::runtime_error(flag + why.substr(why.find(' ') + 1));
        }
    }
    std::stable_sort(mounts_.begin(), mounts_.end(),
                     [](const auto& a, const auto& b) { return components(a.first) > components(b.first); });
}

GuestFs::Located GuestFs::locate(const std::string& absolute_path) const {
    const std::string n = normalize(absolute_path);
    for (const auto& [at, share] : mounts_) {
        if (at == "/") return {share.get(), n == "/" ? "." : n.substr(1)};
        if (n == at) return {share.get(), "."};
        if (n.starts_with(at) && n[at.size()] == '/') return {share.get(), n.substr(at.size() + 1)};
    }
    return {};
}

GuestFs::Target GuestFs::target(int dirfd, const std::string& path) const {
    Target t;
    if (path.empty()) {
        t.err = -ENOENT;
        return t;
    }
    if (dirfd >= 0 && !path.starts_with('/')) {
        std::lock_guard lock(dirs_mu_);
        const auto it = dirs_.find(dirfd);
        struct stat st {};
        if (it == dirs_.end() || ::fstat(dirfd, &st) != 0 || st.st_dev != it->second.dev || st.st_ino != it->second.ino) {
            t.err = -EBADF;
            return t;
        }
        t.mount = it->second.mount;
        t.dirfd = dirfd;
        t.path = path;
        return t;
    }
    const std::string absolute = path.starts_with('/') ? path : "/" + path; // from "/" (root_fs.h)
    const Located where = locate(absolute);
    if (!where.mount) {
        t.err = -ENOENT;
        return t;
    }
    t.mount = where.mount;
    // In the root mount the path goes to openat2 as the guest wrote it
    // (symlinks then ".." as the kernel takes them); elsewhere, its part
    // under the mount point. A trailing slash still asks for a directory.
    const bool root = mounts_.back().first == "/" && where.mount == mounts_.back().second.get();
    const bool as_written = root && !passes_other_mount(absolute);
    t.path = as_written ? absolute : where.rest + (absolute.ends_with('/') && where.rest != "." ? "/" : "");
    return t;
}

bool GuestFs::passes_other_mount(const std::string& absolute_path) const {
    if (mounts_.size() < 2 || absolute_path.find("..") == std::string::npos) return false;
    const ShareRoot* root = mounts_.back().second.get();
    std::string at; // the components so far, taken lexically
    size_t i = 0;
    while (i <= absolute_path.size()) {
        const size_t slash = std::min(absolute_path.find('/', i), absolute_path.size());
        const std::string part = absolute_path.substr(i, slash - i);
        i = slash + 1;
        if (part == "..") {
            at.resize(at.empty() ? 0 : at.rfind('/'));
        } else if (!part.empty() && part != ".") {
            at += "/" + part;
            if (locate(at).mount != root) return true;
        }
    }
    return false;
}

bool GuestFs::overlaid(int dirfd, const std::string& path, const Target& t) const {
    if (!overlay_) return false;
    const auto slash = path.find_last_of('/');
    if (!LibraryOverlay::names_library(slash == std::string::npos ? path : std::string_view(path).substr(slash + 1)))
        return false;
    struct stat st {};
    if (!t.err && t.mount->stat(t.dirfd, t.path, false, &st) == 0) return true; // a mount holds the name
    if (dirfd >= 0 && !path.starts_with('/')) return false; // under a directory descriptor: its guest path is not kept
    return LibraryOverlay::in_default_search_dir(normalize(path.starts_with('/') ? path : "/" + path));
}

void GuestFs::remember_directory(int host_fd, const ShareRoot* mount) const {
    struct stat st {};
    if (::fstat(host_fd, &st) != 0 || !S_ISDIR(st.st_mode)) return;
    std::lock_guard lock(dirs_mu_);
    dirs_[host_fd] = {mount, st.st_dev, st.st_ino};
}

int GuestFs::open(int dirfd, const std::string& path, uint64_t flags, uint64_t mode) const {
    const Target t = target(dirfd, path);
    if (overlaid(dirfd, path, t)) {
        if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC))) return -EROFS;
        return (flags & O_DIRECTORY) ? -ENOTDIR : overlay_->open();
    }
    if (t.err) return t.err;
    const int fd = t.mount->open(t.dirfd, t.path, flags, mode);
    if (fd >= 0) remember_directory(fd, t.mount);
    return fd;
}

int GuestFs::stat(int dirfd, const std::string& path, bool follow, struct stat* out) const {
    const Target t = target(dirfd, path);
    if (overlaid(dirfd, path, t)) return overlay_->stat(out);
    return t.err ? t.err : t.mount->stat(t.dirfd, t.path, follow, out);
}

long GuestFs::readlink(int dirfd, const std::string& path, char* buf, uint64_t len) const {
    const Target t = target(dirfd, path);
    if (overlaid(dirfd, path, t)) return -EINVAL; // a regular file, not a link
    return t.err ? t.err : t.mount->readlink(t.dirfd, t.path, buf, len);
}

int GuestFs::mkdir(int dirfd, const std::string& path, uint64_t mode) const {
    const Target t = target(dirfd, path);
    if (overlaid(dirfd, path, t)) return -EEXIST;
    return t.err ? t.err : t.mount->mkdir(t.dirfd, t.path, mode);
}

int GuestFs::unlink(int dirfd, const std::string& path, bool directory) const {
    const Target t = target(dirfd, path);
    if (overlaid(dirfd, path, t)) return -EROFS;
    return t.err ? t.err : t.mount->unlink(t.dirfd, t.path, directory);
}

int GuestFs::rename(int from_dirfd, const std::string& from, int to_dirfd, const std::string& to, uint64_t flags) const {
    const Target a = target(from_dirfd, from), b = target(to_dirfd, to);
    if (overlaid(from_dirfd, from, a) || overlaid(to_dirfd, to, b)) return -EROFS;
    if (a.err) return a.err;
    if (b.err) return b.err;
    if (a.mount != b.mount) return -EXDEV;
    return a.mount->rename(a.dirfd, a.path, b.dirfd, b.path, flags);
}

int GuestFs::link(int from_dirfd, const std::string& from, int to_dirfd, const std::string& to, bool follow) const {
    const Target a = target(from_dirfd, from), b = target(to_dirfd, to);
    if (overlaid(from_dirfd, from, a) || overlaid(to_dirfd, to, b)) return -EROFS;
    if (a.err) return a.err;
    if (b.err) return b.err;
    if (a.mount != b.mount) return -EXDEV;
    return a.mount->link(a.dirfd, a.path, b.dirfd, b.path, follow);
}

int GuestFs::symlink(const std::string& target_text, int dirfd, const std::string& path) const {
    const Target t = target(dirfd, path);
    if (overlaid(dirfd, path, t)) return -EEXIST;
    return t.err ? t.err : t.mount->symlink(target_text, t.dirfd, t.path);
}

bool GuestFs::read_only_at(int dirfd, const std::string& path) const {
    const Target t = target(dirfd, path);
    return t.err || overlaid(dirfd, path, t) || t.mount->read_only();
}

int GuestFs::fd() const {
    for (const auto& [at, share] : mounts_)
        if (at == "/") return share->fd();
    return -1;
}

std::string GuestFs::guest_path_of(int host_fd) const {
    struct stat want {};
    if (::fstat(host_fd, &want) != 0) return "";
    const std::string host = host_path_of(host_fd); // a removed directory's ends in " (deleted)": no match below
    if (host.empty()) return "";
    for (const auto& [at, share] : mounts_) {
        const std::string top = host_path_of(share->fd());
        std::string rest;
        if (top == "/" || host == top) rest = top == "/" ? host : "/";
        else if (!top.empty() && host.starts_with(top) && host[top.size()] == '/') rest = host.substr(top.size());
        else continue;
        // The same path may name another mount's directory (a deeper mount
        // over it): only the same inode counts.
        const std::string guest = normalize(at + rest);
        struct stat st {};
        if (stat(-1, guest, true, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino) return guest;
    }
    return "";
}

} // namespace kvmgpu::linux_abi
