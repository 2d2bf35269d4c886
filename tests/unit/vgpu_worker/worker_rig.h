// Shared by the worker tests: a vGPU whose engine runs the host backend in
// a GPU worker process.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_engine.h"
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {

inline BackendFactory host_factory() {
    return [](std::string*) -> std::unique_ptr<GpuBackend> {
        return std::make_unique<HostBackend>(HostBackendOptions{.bounce_bytes = 8192});
    };
}

// A VgpuRig on a WorkerEngine hosting the host backend; `worker` is that engine.
struct WorkerVgpu {
    WorkerEngine* worker = nullptr;
    VgpuRig rig;

    explicit WorkerVgpu(WorkerOptions wopts = {}, VgpuOptions opts = {})
        : rig(opts, [&](const memmap::GuestMemory& mem, const VgpuOptions& o) -> std::unique_ptr<CommandEngine> {
              std::string why;
              auto e = WorkerEngine::create(mem, host_factory(), o, wopts, &why);
              EXPECT_TRUE(e) << why;
              worker = e.get();
              return e;
          }) {}
};

} // namespace kvmgpu::vgpu::test
