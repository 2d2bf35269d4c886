#include "kvmtool-gpu/bench/nvml_links.h"

#include <dlfcn.h>

#include <cstring>
#include <strings.h>

namespace kvmgpu::bench {

namespace {

// nvml.h is not installed beside cuda.h here, so the few pieces used are
// declared from NVML's documented ABI (stable since the _v2 entry points).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kNvmlFeatureEnabled = 1;       // nvmlEnableState_t NVML_FEATURE_ENABLED
constexpr int kNvmlP2pCapsIndexNvlink = 2;   // nvmlGpuP2PCapsIndex_t NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kNvmlP2pStatusOk = 0;          // nvmlGpuP2PStatus_t NVML_P2P_STATUS_OK
constexpr unsigned kNvmlNvlinkMaxLinks = 18; // NVML_NVLINK_MAX_LINKS
struct NvmlPciInfo {                          // nvmlPciInfo_t
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
};

using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using ByBusIdFn = nvmlReturn_t (*)(const char*, nvmlDevice_t*);
using P2pStatusFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDevice_t, int, int*);
using LinkStateFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned, int*);
using RemotePciFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned, NvmlPciInfo*);
using PciInfoFn = nvmlReturn_t (*)(nvmlDevice_t, NvmlPciInfo*);
using RemoteTypeFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned, int*);
constexpr int kNvmlNvlinkDeviceTypeSwitch = 2; // nvmlIntNvLinkDeviceType_t NVML_NVLINK_DEVICE_TYPE_SWITCH

// Bus ids compare without case and without the domain's extra digits
// (CUDA says "0000:18:00.0", NVML "00000000:18:00.0").
bool same_bus(const char* x, const char* y) {
    auto tail = [](const char* s) {
        const char* colon = std::strchr(s, ':');
        return colon ? colon : s;
    };
    return strcasecmp(tail(x), tail(y)) == 0;
}

} // namespace

struct NvmlLinks::Impl {
    void* lib = nullptr;
    ShutdownFn shutdown = nullptr;
    ByBusIdFn by_bus = nullptr;
    P2pStatusFn p2p_status = nullptr;
    LinkStateFn link_state = nullptr;
    RemotePciFn remote_pci = nullptr;
    PciInfoFn pci_info = nullptr;
    RemoteTypeFn remote_type = nullptr; // optional (older drivers lack it)
    ~Impl() {
        if (shutdown) shutdown();
        if (lib) dlclose(lib);
    }
};

NvmlLinks::NvmlLinks(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NvmlLinks::~NvmlLinks() = default;

std::unique_ptr<NvmlLinks> NvmlLinks::open(std::string* why) {
    auto impl = std::make_unique<Impl>();
    impl->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!impl->lib) {
        *why = "NVML: libnvidia-ml.so.1 not loadable";
        return nullptr;
    }
    auto sym = [&](const char* name) { return dlsym(impl->lib, name); };
    const auto init = reinterpret_cast<InitFn>(sym("nvmlInit_v2"));
    impl->by_bus = reinterpret_cast<ByBusIdFn>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
    impl->p2p_status = reinterpret_cast<P2pStatusFn>(sym("nvmlDeviceGetP2PStatus"));
    impl->link_state = reinterpret_cast<LinkStateFn>(sym("nvmlDeviceGetNvLinkState"));
    impl->remote_pci = reinterpret_cast<RemotePciFn>(sym("nvmlDeviceGetNvLinkRemotePciInfo_v2"));
    impl->pci_info = reinterpret_cast<PciInfoFn>(sym("nvmlDeviceGetPciInfo_v3"));
    impl->remote_type = reinterpret_cast<RemoteTypeFn>(sym("nvmlDeviceGetNvLinkRemoteDeviceType"));
    if (!init || !impl->by_bus || !impl->p2p_status || !impl->link_state || !impl->remote_pci || !impl->pci_info) {
        *why = "NVML: an entry point is missing";
        return nullptr;
    }
    if (const nvmlReturn_t r = init(); r != kNvmlSuccess) {
        *why = "NVML: nvmlInit_v2 returned " + std::to_string(r);
        return nullptr;
    }
    impl->shutdown = reinterpret_cast<ShutdownFn>(sym("nvmlShutdown"));
    return std::unique_ptr<NvmlLinks>(new NvmlLinks(std::move(impl)));
}

bool NvmlLinks::between(const std::string& bus_a, const std::string& bus_b, NvlinkReport* out,
                        std::string* why) const {
    nvmlDevice_t a = nullptr, b = nullptr;
    if (impl_->by_bus(bus_a.c_str(), &a) != kNvmlSuccess || impl_->by_bus(bus_b.c_str(), &b) != kNvmlSuccess) {
        *why = "NVML: no device at " + bus_a + " or " + bus_b;
        return false;
    }
    NvmlPciInfo pci_b{};
    if (impl_->pci_info(b, &pci_b) != kNvmlSuccess) {
        *why = "NVML: nvmlDeviceGetPciInfo_v3 failed";
        return false;
    }
    *out = {};
    int status = -1;
    out->nvlink = impl_->p2p_status(a, b, kNvmlP2pCapsIndexNvlink, &status) == kNvmlSuccess &&
                  status == kNvmlP2pStatusOk;
    for (unsigned link = 0; link < kNvmlNvlinkMaxLinks; ++link) {
        int active = 0;
        NvmlPciInfo remote{};
        if (impl_->link_state(a, link, &active) != kNvmlSuccess || active != kNvmlFeatureEnabled) continue;
        int type = -1;
        if (impl_->remote_pci(a, link, &remote) == kNvmlSuccess && same_bus(remote.busId, pci_b.busId)) ++out->links;
        else if (impl_->remote_type && impl_->remote_type(a, link, &type) == kNvmlSuccess &&
                 type == kNvmlNvlinkDeviceTypeSwitch)
            ++out->switch_links;
    }
    if (out->links > 0) out->nvlink = true;
    return true;
}

} // namespace kvmgpu::bench
