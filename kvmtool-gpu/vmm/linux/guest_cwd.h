// A Linux-ABI guest's working directory: one per process (its threads
// share it, as they share Linux's). It is a guest path without symbolic
// links or "." and ".." (what Linux's getcwd gives), beside an O_PATH
// descriptor of the directory it named when chosen. A path relative to
// AT_FDCWD is joined to it (join) and then resolves as any absolute guest
// path does (GuestFs: inside the mounts, ".." at "/" stays at "/", symbolic
// links never leave a mount). Renamed or removed: each use first checks that
// the path still names the held directory; one moved elsewhere in the
// guest's mounts is followed to its new path (as Linux's cwd follows it);
// one removed, or moved where the guest cannot see it, makes getcwd and
// every path relative to the cwd fail with ENOENT (Linux's getcwd gives
// ENOENT for a removed cwd) until the guest changes directory.
// "/" is always a valid cwd, even where nothing is mounted there.
// Results are Linux errno values (negative), never exceptions.
#pragma once

#include <sys/types.h>

#include <string>

#include "kvmtool-gpu/kvm/unique_fd.h"
#include "kvmtool-gpu/vmm/linux/root_fs.h"

namespace kvmgpu::linux_abi {

class GuestCwd {
public:
    // chdir: `absolute_path` (a guest path; the caller joined a relative one)
    // must name a directory in `fs`. 0 or -errno (ENOENT, ENOTDIR, ...).
    int change(const GuestFs& fs, const std::string& absolute_path);
    // fchdir: `host_dir_fd` is a directory `fs` opened for the guest (the
    // cwd holds its own descriptor of it), known to the guest as `opened_as`.
    int change_to(const GuestFs& fs, int host_dir_fd, const std::string& opened_as);
    // The cwd's path into `out`, following a moved directory: 0 or -ENOENT.
    int current(const GuestFs* fs, std::string& out);

    // `relative` under `cwd`: its leading "." and ".." components taken
    // here (the cwd has no symbolic link to go back through), the rest kept
    // as written, for the kernel's resolution: join("/a/b", "../c/../d") is
    // "/a/c/../d".
    static std::string join(const std::string& cwd, const std::string& relative);

private:
    // Holds `dir` as the cwd, its path the one `fs` shows it at (symbolic
    // links resolved), else `fallback` where that names it. 0 or -errno.
    int hold(const GuestFs& fs, UniqueFd dir, const std::string& fallback);

    std::string path_ = "/";
    UniqueFd dir_; // empty: "/" with nothing mounted there
    dev_t dev_ = 0;
    ino_t ino_ = 0;
};

// The host directory `host_dir` (absolute) as the guest sees it at the same
// path: that path when it names the same directory in `fs`, else "".
std::string visible_at_same_path(const GuestFs& fs, const std::string& host_dir);

} // namespace kvmgpu::linux_abi
