#include "kvmtool-gpu/vmm/linux/library_overlay.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <stdexcept>

namespace kvmgpu::linux_abi {

LibraryOverlay::LibraryOverlay(const std::string& host_file) {
    fd_ = UniqueFd(::open(host_file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    struct stat st {};
    if (!fd_ || ::fstat(fd_.get(), &st) != 0)
        throw std::runtime_error("guest libcuda " + host_file + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw std::runtime_error("guest libcuda " + host_file + ": not a regular file");
}

bool LibraryOverlay::names_library(std::string_view last) {
    constexpr std::string_view kName = "libcuda.so";
    return last == kName || (last.starts_with(kName) && last.size() > kName.size() + 1 && last[kName.size()] == '.');
}

bool LibraryOverlay::in_default_search_dir(const std::string& normalized_path) {
    const auto slash = normalized_path.find_last_of('/');
    if (slash == std::string::npos) return false;
    const std::string dir = normalized_path.substr(0, slash);
    static const char* const kDirs[] = {"/lib",     "/usr/lib",     "/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu",
                                        "/usr/lib/x86_64-linux-gnu"};
    return std::any_of(std::begin(kDirs), std::end(kDirs), [&](const char* d) { return dir == d; });
}

int LibraryOverlay::open() const {
    // The VMM's own descriptor reopened: a new open file description (its
    // own offset), read-only whatever the guest asked.
    char self[40];
    std::snprintf(self, sizeof self, "/proc/self/fd/%d", fd_.get());
    open_how how{}; // openat2: the call the vCPU thread's seccomp filter allows
    how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
    const long fd = ::syscall(SYS_openat2, AT_FDCWD, self, &how, sizeof how);
    return fd < 0 ? -errno : static_cast<int>(fd);
}

int LibraryOverlay::stat(struct stat* out) const { return ::fstat(fd_.get(), out) == 0 ? 0 : -errno; }

} // namespace kvmgpu::linux_abi
