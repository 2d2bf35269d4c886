#include "kvmtool-gpu/cli/vm_share.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace kvmgpu::cli {

std::string share_dir_for_vm(const std::string& dir, bool read_only, unsigned vm, unsigned vms) {
    if (dir.empty() || read_only || vms <= 1) return dir;
    const std::string own = dir + "/vm" + std::to_string(vm);
    if (::mkdir(own.c_str(), 0755) != 0 && errno != EEXIST)
        throw std::runtime_error("--share " + own + ": " + std::strerror(errno));
    struct stat st {};
    if (::lstat(own.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw std::runtime_error("--share " + own + ": not a directory (each VM's share is DIR/vm<i>)");
    return own;
}

} // namespace kvmgpu::cli
