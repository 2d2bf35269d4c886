#include "kvmtool-gpu/remote/ucx_api.h"

#include <dlfcn.h>

#include <mutex>

namespace kvmgpu::remote {

namespace {

struct Loaded {
    UcxApi api;
    std::string why; // empty when every entry point resolved
};

Loaded load() {
    Loaded out;
    // RTLD_GLOBAL: UCX loads its transports (libuct_*.so) as modules that
    // expect libucs/libuct's symbols to be visible.
    void* ucp = dlopen("libucp.so.0", RTLD_NOW | RTLD_GLOBAL);
    if (!ucp) {
        const char* e = dlerror();
        out.why = std::string("UCX is not installed (libucp.so.0: ") + (e ? e : "not found") +
                  "); on Debian: apt-get install libucx0";
        return out;
    }
#define KVMGPU_UCX_RESOLVE(name)                                                                  \
    out.api.name = reinterpret_cast<decltype(&::name)>(dlsym(ucp, #name));                       \
    if (!out.api.name && out.why.empty()) out.why = "UCX library has no " #name " (UCX >= 1.13 needed)";
    KVMGPU_UCX_FUNCTIONS(KVMGPU_UCX_RESOLVE)
#undef KVMGPU_UCX_RESOLVE
    return out;
}

} // namespace

const UcxApi* ucx_api(std::string* why) {
    static std::once_flag once;
    static Loaded loaded;
    std::call_once(once, [] { loaded = load(); });
    if (!loaded.why.empty()) {
        if (why) *why = loaded.why;
        return nullptr;
    }
    return &loaded.api;
}

} // namespace kvmgpu::remote
