#include "kvmtool-gpu/devices/vgpu/backends/host_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <vector>

#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::vgpu {

namespace {
std::vector<std::string> candidates(const std::string& soname, const std::string& override_path) {
    if (!override_path.empty()) return {override_path};
    std::vector<std::string> out{soname};
    for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* root = std::getenv(env); root && *root) out.push_back(std::string(root) + "/lib64/" + soname);
    for (const char* root : {"/usr/local/cuda", "/usr/local/cuda-13", "/usr/local/cuda-13.0", "/usr/local/cuda-13.1"})
        out.push_back(std::string(root) + "/lib64/" + soname);
    return out;
}
} // namespace

HostLibrary open_host_library(const char* what, const char* soname, const std::string& override_path,
                              const char* option, const char* guest_gets) {
    HostLibrary lib;
    std::string tried;
    for (const std::string& c : candidates(soname, override_path)) {
        lib.handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (lib.handle) break;
        tried += (tried.empty() ? "" : ", ") + c;
    }
    if (!lib.handle) {
        log_error("%s: no %s (tried %s; %s PATH names one): %s", what, soname, tried.c_str(), option, guest_gets);
        return lib;
    }
    link_map* map = nullptr;
    lib.path = dlinfo(lib.handle, RTLD_DI_LINKMAP, &map) == 0 && map ? map->l_name : soname;
    return lib;
}

} // namespace kvmgpu::vgpu
