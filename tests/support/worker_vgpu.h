// A vGPU whose engine runs in a GPU worker process, on the host backend or
// on a test backend built on it, for the tests that need a worker.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_engine.h"
#include "tests/support/forwarding_backend.h"
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {

inline BackendFactory host_factory() {
    return [](std::string*) -> std::unique_ptr<GpuBackend> {
        return std::make_unique<HostBackend>(HostBackendOptions{.bounce_bytes = 8192});
    };
}

// A factory for a test backend that needs no arguments.
template <class Backend>
BackendFactory factory_of() {
    return [](std::string*) -> std::unique_ptr<GpuBackend> { return std::make_unique<Backend>(); };
}

// A VgpuRig on a WorkerEngine whose worker makes its backend with `make`;
// `worker` is that engine.
struct WorkerVgpu {
    WorkerEngine* worker = nullptr;
    VgpuRig rig;

    explicit WorkerVgpu(WorkerOptions wopts = {}, VgpuOptions opts = {}, const BackendFactory& make = host_factory())
        : rig(opts, [&](const memmap::GuestMemory& mem, const VgpuOptions& o) -> std::unique_ptr<CommandEngine> {
              std::string why;
              auto e = WorkerEngine::create(mem, make, o, wopts, &why);
              EXPECT_TRUE(e) << why;
              worker = e.get();
              return e;
          }) {
        rig.dev->ready_after_ns(); // the worker starts its backend in the background: wait for it
    }
};

// Waits (bounded, 10 s) until the engine's worker is not `old`: a worker
// the supervisor replaces at its next look. True once it is.
inline bool new_worker_within_bound(const WorkerEngine& e, pid_t old) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (e.worker_pid() == old || e.worker_pid() <= 0) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

// A backend that, like CUDA on driver 580 after an illegal address, reports
// a sticky error (on any memset) and cannot make a new context in its
// process: the worker must be replaced, and the recovery counted once.
class UnrecoverableBackend final : public ForwardingBackend {
public:
    Status memset(uint64_t, uint32_t, uint32_t, uint64_t, BackendStream, bool) override {
        lost_ = true;
        return VGPU_ERROR_ILLEGAL_ADDRESS;
    }
    Status ctx_synchronize() override { return lost_ ? VGPU_ERROR_ILLEGAL_ADDRESS : inner().ctx_synchronize(); }
    bool recover_from(Status s) override { return s == VGPU_ERROR_ILLEGAL_ADDRESS; }

private:
    bool lost_ = false;
};

} // namespace kvmgpu::vgpu::test
