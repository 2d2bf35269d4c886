#include "kvmtool-gpu/devices/vgpu_worker/worker_private_dev.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace kvmgpu::vgpu {

namespace {

struct Kept {
    std::string name;
    int tree; // a detached copy of its mount (open_tree)
    bool dir;
};

std::string failed(const char* what, const std::string& path) { return std::string(what) + " " + path + ": " + std::strerror(errno); }

// The entries of the host's /dev the worker keeps: the driver's, and the few every program expects.
std::vector<std::string> kept_names(bool host_shm) {
    std::vector<std::string> names = {"null", "zero", "full", "random", "urandom"};
    if (host_shm) names.push_back("shm");
    if (DIR* d = opendir("/dev")) {
        while (const dirent* e = readdir(d))
            if (std::strncmp(e->d_name, "nvidia", 6) == 0) names.emplace_back(e->d_name);
        closedir(d);
    }
    return names;
}

void close_all(std::vector<Kept>& kept) {
    for (const Kept& k : kept) close(k.tree);
}

} // namespace

bool make_private_dev(bool host_shm, std::string* why) {
    std::vector<Kept> kept;
    for (const std::string& name : kept_names(host_shm)) {
        const std::string path = "/dev/" + name;
        struct stat st;
        if (lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue; // absent here
        const unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (S_ISDIR(st.st_mode) ? AT_RECURSIVE : 0);
        const int tree = static_cast<int>(syscall(SYS_open_tree, AT_FDCWD, path.c_str(), flags));
        if (tree < 0) {
            *why = failed("open_tree", path);
            close_all(kept);
            return false;
        }
        kept.push_back({name, tree, S_ISDIR(st.st_mode)});
    }
    if (mount("kvmgpu-worker-dev", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=256k") != 0) {
        *why = failed("mount tmpfs on", "/dev");
        close_all(kept);
        return false;
    }
    auto undo = [&](std::string reason) {
        *why = std::move(reason);
        close_all(kept);
        umount2("/dev", MNT_DETACH); // the host's /dev again
        return false;
    };
    for (const Kept& k : kept) {
        const std::string path = "/dev/" + k.name;
        const int made = k.dir ? mkdir(path.c_str(), 0755) : open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        if (made < 0) return undo(failed("a mount point for", path));
        if (!k.dir) close(made);
        if (syscall(SYS_move_mount, k.tree, "", AT_FDCWD, path.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
            return undo(failed("move_mount onto", path));
    }
    if (!host_shm && (mkdir("/dev/shm", 01777) != 0 ||
                      mount("kvmgpu-worker-shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777,size=64m") != 0))
        return undo(failed("a private", "/dev/shm"));
    const char* links[][2] = {{"/proc/self/fd", "/dev/fd"}, {"/proc/self/fd/0", "/dev/stdin"},
                              {"/proc/self/fd/1", "/dev/stdout"}, {"/proc/self/fd/2", "/dev/stderr"}};
    for (const auto& l : links)
        if (symlink(l[0], l[1]) != 0) return undo(failed("symlink", l[1]));
    close_all(kept);
    return true;
}

} // namespace kvmgpu::vgpu
