#include "kvmtool-gpu/vmm/linux/private_tmp.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace kvmgpu::linux_abi {

std::unique_ptr<PrivateTmp> PrivateTmp::create() {
    const char* base = getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/kvmgpu-guest-tmp-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) // mode 0700
        throw std::runtime_error("the guest's private /tmp: mkdtemp(" + pattern + "): " + std::strerror(errno));
    return std::unique_ptr<PrivateTmp>(new PrivateTmp(buf.data()));
}

PrivateTmp::~PrivateTmp() {
    std::error_code ec; // remove_all does not follow symbolic links: it removes the links
    std::filesystem::remove_all(dir_, ec);
}

} // namespace kvmgpu::linux_abi
