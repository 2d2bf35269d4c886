// The guest's file system: host directories mounted at guest paths, the
// only way guest paths reach the host's files. `--root DIR` is mounted at
// "/" read-only (the system: ld.so, libraries, /etc); each `--share
// DIR[:GUEST_PATH][:ro]` at its guest path (without --root, at "/", as
// before). A path picks the mount whose guest path is its longest prefix,
// after "." and ".." are taken lexically (so ".." never crosses out of a
// mount except by naming another mount's path), and the rest resolves in
// that mount's ShareRoot: openat2 with RESOLVE_IN_ROOT |
// RESOLVE_NO_MAGICLINKS, so ".." and absolute symlinks stay inside it. A
// path relative to a directory descriptor resolves inside that directory
// (as ShareRoot does), with the writability of the mount it came from.
// Files on the kernel's pseudo file systems are refused in every mount
// (ShareRoot, pseudo_fs.h). With a LibraryOverlay, the names it answers
// (library_overlay.h) open, stat and read as its file, read-only, before any
// mount is asked: every such name a mount holds, and such a name directly in
// a default library directory whether or not a mount holds it.
// Results are Linux errno values (negative), never exceptions.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kvmtool-gpu/vmm/linux/library_overlay.h"
#include "kvmtool-gpu/vmm/linux/share_fs.h"

namespace kvmgpu::linux_abi {

struct MountSpec {
    std::string guest_path; // absolute, e.g. "/" or "/work"
    std::string host_dir;
    bool read_only = false;
    std::string flag = "--share"; // names it in errors
};

class GuestFs {
public:
    // Throws std::runtime_error naming the flag and path when a directory
    // cannot be opened, a guest path is not absolute, or two mounts share one.
    // `overlay` null: the mounts' own files only.
    explicit GuestFs(const std::vector<MountSpec>& mounts, std::shared_ptr<const LibraryOverlay> overlay = nullptr);

    // The same contract as ShareRoot's (share_fs.h), for a guest path:
    // `dirfd` -1 for the guest's root (a relative path then starts at "/":
    // the server joins one relative to the guest's cwd first, guest_cwd.h),
    // else a directory descriptor this GuestFs opened.
    int open(int dirfd, const std::string& path, uint64_t flags, uint64_t mode) const;
    int stat(int dirfd, const std::string& path, bool follow, struct stat* out) const;
    long readlink(int dirfd, const std::string& path, char* buf, uint64_t len) const;
    // ShareRoot's mkdir, unlink and rename in the mount the path falls in;
    // the overlay's names: -EROFS; a rename across two mounts: -EXDEV.
    int mkdir(int dirfd, const std::string& path, uint64_t mode) const;
    int unlink(int dirfd, const std::string& path, bool directory) const;
    int rename(int from_dirfd, const std::string& from, int to_dirfd, const std::string& to, uint64_t flags) const;
    // ShareRoot's link and symlink; a link across two mounts: -EXDEV (as
    // rename), an overlay's name: -EROFS.
    int link(int from_dirfd, const std::string& from, int to_dirfd, const std::string& to, bool follow) const;
    int symlink(const std::string& target, int dirfd, const std::string& path) const;
    // Whether a write to the path would be refused (EROFS).
    bool read_only_at(int dirfd, const std::string& path) const;
    // The root mount's directory descriptor (-1 when nothing is at "/").
    int fd() const;
    // The guest path at which the directory `host_fd` is seen: its host path
    // (the kernel's, through /proc/self/fd) under a mount's, mapped to that
    // mount's guest path, where that names the same inode; "" when none does.
    std::string guest_path_of(int host_fd) const;

    // "." and ".." taken lexically, duplicate slashes dropped: "/a/b".
    static std::string normalize(const std::string& absolute_path);
    // The mount `path` (absolute) falls in, and the rest of the path under it
    // ("." for the mount itself); nullptr when no mount covers it.
    struct Located {
        const ShareRoot* mount = nullptr;
        std::string rest;
    };
    Located locate(const std::string& absolute_path) const;

private:
    // Where an operation on (dirfd, path) resolves: the mount and the
    // descriptor and path to hand it. -ENOENT / -EBADF in `err`.
    struct Target {
        const ShareRoot* mount = nullptr;
        int dirfd = -1;
        std::string path;
        int err = 0;
    };
    Target target(int dirfd, const std::string& path) const;
    // Whether a path that ends in the root mount passes through another
    // mount on the way ("/data/../etc" with a share at /data): then ".."
    // is taken lexically, as for every path leaving a share, and the root
    // gets the normalized path, not the one written.
    bool passes_other_mount(const std::string& absolute_path) const;
    // Whether (dirfd, path), resolving to `t`, is one of the overlay's names.
    bool overlaid(int dirfd, const std::string& path, const Target& t) const;
    void remember_directory(int host_fd, const ShareRoot* mount) const;

    std::vector<std::pair<std::string, std::unique_ptr<ShareRoot>>> mounts_; // longest guest path first
    std::shared_ptr<const LibraryOverlay> overlay_;
    // Directory descriptors handed out, by host fd: their mount, and the
    // inode they were (a reused number must name the same directory).
    struct DirOrigin {
        const ShareRoot* mount;
        dev_t dev;
        ino_t ino;
    };
    mutable std::mutex dirs_mu_;
    mutable std::map<int, DirOrigin> dirs_;
};

} // namespace kvmgpu::linux_abi
