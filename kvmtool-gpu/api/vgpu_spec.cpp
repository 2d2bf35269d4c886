#include "kvmtool-gpu/api/vgpu_spec.h"

#include <stdexcept>

#include "kvmtool-gpu/api/process_setup.h"

#ifdef KVMGPU_HAVE_CUDA_BACKEND
#include "kvmtool-gpu/devices/vgpu/blas/cuda_blas.h"
#endif

namespace kvmgpu {

GpuSharing::GpuSharing(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuSharing::~GpuSharing() = default;

std::string GpuSharing::describe() const { return impl_->share->describe(); }

std::shared_ptr<GpuSharing> GpuSharing::open_mps(const MpsOptions& options, const std::vector<int>& gpus) {
    GpuShareOptions o;
    o.mode = GpuShareMode::Mps;
    o.mps_pipe = options.pipe_dir;
    o.thread_percentage = options.thread_percentage;
    o.pinned_mem_limit = options.pinned_mem_limit;
    o.fallback = options.fall_back_to_contexts ? MpsFallback::Contexts : MpsFallback::Stop;
    try {
        validate(o);
        auto impl = std::make_unique<Impl>();
        impl->share = GpuShare::open(o, gpus);
        return std::make_shared<GpuSharing>(std::move(impl));
    } catch (const std::exception& e) {
        throw Error(e.what());
    }
}

namespace api {

namespace {

vgpu::BackendChoice backend_of(VgpuBackend b) {
    switch (b) {
    case VgpuBackend::Cuda: return vgpu::BackendChoice::Cuda;
    case VgpuBackend::Host: return vgpu::BackendChoice::Host;
    case VgpuBackend::Auto: break;
    }
    return vgpu::BackendChoice::Auto;
}

vgpu::GpuWorker worker_of(GpuWorker w) {
    switch (w) {
    case GpuWorker::Inline: return vgpu::GpuWorker::Inline;
    case GpuWorker::Always: return vgpu::GpuWorker::Always;
    case GpuWorker::Process: break;
    }
    return vgpu::GpuWorker::Process;
}

vgpu::DoorbellMode doorbell_of(Doorbell d) {
    switch (d) {
    case Doorbell::Trap: return vgpu::DoorbellMode::Trap;
    case Doorbell::Ioeventfd: return vgpu::DoorbellMode::Ioeventfd;
    case Doorbell::Poll: return vgpu::DoorbellMode::Poll;
    case Doorbell::Adaptive: break;
    }
    return vgpu::DoorbellMode::Adaptive;
}

// The guest's devices: 1..16 of them, on ordinals below 64.
void check_gpus(const std::vector<int>& gpus) {
    constexpr size_t kMostDevices = 16;
    constexpr int kOrdinals = 64;
    if (gpus.empty() || gpus.size() > kMostDevices)
        throw Error("vgpu.gpus: 1.." + std::to_string(kMostDevices) + " devices, got " + std::to_string(gpus.size()));
    for (int g : gpus)
        if (g < 0 || g >= kOrdinals)
            throw Error("vgpu.gpus: ordinal " + std::to_string(g) + " is outside 0.." + std::to_string(kOrdinals - 1));
}

} // namespace

} // namespace api

const char* to_string(Doorbell d) { return vgpu::to_string(api::doorbell_of(d)); }

namespace api {

VgpuConfig to_vgpu_config(const VgpuSpec& spec) {
    check_gpus(spec.gpus);
    VgpuConfig c;
    c.backend = backend_of(spec.backend);
    c.worker = worker_of(spec.worker);
    c.gpus = spec.gpus;
    vgpu::VgpuOptions& o = c.options;
    o.worker_sandbox = spec.worker_sandbox;
    o.doorbell = doorbell_of(spec.doorbell);
    o.lazy_ram_registration = spec.lazy_ram_registration;
    if (spec.device_mem_quota) o.device_mem_quota = *spec.device_mem_quota;
    else if (vms_in_process() == 1) o.device_mem_quota = vgpu::kWholeDeviceQuota;
    o.max_handles = spec.max_handles;
    o.max_graph_nodes = spec.max_graph_nodes;
    o.max_module_bytes = spec.max_module_bytes;
    o.max_registrations = spec.max_registrations;
    o.max_registered_bytes = spec.max_registered_bytes;
    o.max_alias_mappings = spec.max_alias_mappings;
    o.max_ring = spec.max_ring;
    o.poll_spin_us = spec.poll_spin_us;
    o.poll_max_us = spec.poll_max_us;
    try {
        vgpu::validate(o);
    } catch (const std::invalid_argument& e) {
        throw Error(e.what());
    }
    // No sharing object: a context per worker (GpuShare's contexts mode, which starts nothing).
    c.share = spec.sharing ? spec.sharing->impl().share : GpuShare::open(GpuShareOptions{}, c.gpus);
    if (c.share->mode() == GpuShareMode::Mps && c.worker == vgpu::GpuWorker::Inline)
        throw Error("vgpu.sharing MPS needs GPU worker processes (not GpuWorker::Inline): each is an MPS client");
    if (c.share->mode() == GpuShareMode::Mps && c.backend == vgpu::BackendChoice::Host &&
        c.worker != vgpu::GpuWorker::Always)
        throw Error("vgpu.sharing MPS: the host backend runs no CUDA (GpuWorker::Always tests the plumbing)");
    if (!spec.remote.empty()) {
        remote::RemoteTarget t{spec.remote, {}};
        std::string why;
        if (spec.remote_key_file.empty()) throw Error("vgpu.remote needs vgpu.remote_key_file (the server's shared key)");
        if (!remote::load_shared_key(spec.remote_key_file, &t.key, &why)) throw Error("vgpu.remote_key_file: " + why);
        c.remote = std::move(t);
    } else if (!spec.remote_key_file.empty()) {
        throw Error("vgpu.remote_key_file without vgpu.remote");
    }
    if (!spec.cublas_path.empty()) {
#ifdef KVMGPU_HAVE_CUDA_BACKEND
        vgpu::set_cublas_path(spec.cublas_path); // before any GPU worker is forked: each inherits it
#else
        throw Error("vgpu.cublas_path: this build has no CUDA backend (no cuda.h at build time)");
#endif
    }
    return c;
}

} // namespace api
} // namespace kvmgpu
