#include "kvmtool-gpu/devices/vgpu_worker/engine_factory.h"

#include <dlfcn.h>
#include <strings.h>
#include <unistd.h>

#include <sstream>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/inline_engine.h"
#include "kvmtool-gpu/devices/vgpu_worker/mps_server_group.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_engine.h"

namespace kvmgpu::vgpu {

namespace {
constexpr const char* kNvidiaControlNode = "/dev/nvidiactl";

// The worker's factory: make_backend's rules for the choice and the GPU
// list written in its argument ("<choice> <gpu> <gpu>...").
DeviceBackends make_chosen_backend(const std::string& arg, std::string* why) {
    std::istringstream in(arg);
    int choice = 0;
    in >> choice;
    std::vector<int> gpus;
    for (int g; in >> g;) gpus.push_back(g);
    return make_backend(static_cast<BackendChoice>(choice), why, gpus);
}

BackendFactory chosen_backend_factory(BackendChoice choice, std::span<const int> gpus) {
    std::string arg = std::to_string(static_cast<int>(choice));
    for (const int g : gpus) arg += " " + std::to_string(g);
    return {&make_chosen_backend, arg};
}
} // namespace

bool parse_gpu_worker(std::string_view s, GpuWorker* out) {
    const std::string v(s);
    if (strcasecmp(v.c_str(), "process") == 0) return *out = GpuWorker::Process, true;
    if (strcasecmp(v.c_str(), "inline") == 0) return *out = GpuWorker::Inline, true;
    if (strcasecmp(v.c_str(), "always") == 0) return *out = GpuWorker::Always, true;
    return false;
}

const char* to_string(GpuWorker w) {
    switch (w) {
    case GpuWorker::Process: return "process";
    case GpuWorker::Inline: return "inline";
    case GpuWorker::Always: return "always";
    }
    return "?";
}

bool libcuda_loaded_here() {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (h) dlclose(h);
    return h != nullptr;
}

std::unique_ptr<CommandEngine> make_engine(const memmap::GuestMemory& mem, const VgpuOptions& opts,
                                           BackendChoice choice, GpuWorker worker, std::string* why,
                                           std::span<const int> gpus, std::shared_ptr<MpsServerGroup> mps) {
    const WorkerOptions wopts{.mps = std::move(mps)};
    std::string note;
    if (worker == GpuWorker::Always) {
        // The backend is picked in the worker, by make_backend's rules.
        std::string reason;
        auto e = WorkerEngine::create(mem, chosen_backend_factory(choice, gpus), opts, wopts, &reason);
        if (why) *why = e ? "starting in GPU worker process " + std::to_string(e->worker_pid()) + " while the guest runs"
                          : reason;
        return e;
    }
    if (choice != BackendChoice::Host && worker == GpuWorker::Process) {
        if (!libcuda_loaded_here()) {
            // Without the driver's device node no worker is forked; with it,
            // the worker starts CUDA while the guest runs (auto: it falls
            // back to the host backend in the worker if CUDA will not start).
            if (::access(kNvidiaControlNode, F_OK) != 0) {
                const std::string reason = std::string("no NVIDIA driver device (") + kNvidiaControlNode + " is missing)";
                if (choice == BackendChoice::Cuda) {
                    if (why) *why = "CUDA backend unavailable: " + reason;
                    return nullptr;
                }
                return std::make_unique<InlineEngine>(mem, host_instead_of_cuda(reason, why, gpus), opts);
            }
            std::string reason;
            auto e = WorkerEngine::create(mem, chosen_backend_factory(choice, gpus), opts, wopts, &reason);
            if (why) *why = e ? "CUDA, starting in GPU worker process " + std::to_string(e->worker_pid()) +
                                    " while the guest runs"
                              : "CUDA backend unavailable: " + reason;
            return e;
        }
        note = " (in this process: libcuda was already loaded here, so a forked GPU worker could not use it)";
    }
    std::string picked;
    auto b = make_backend(choice, &picked, gpus);
    if (why) *why = picked + (b ? note : "");
    if (!b) return nullptr;
    return std::make_unique<InlineEngine>(mem, std::move(b), opts);
}

} // namespace kvmgpu::vgpu
