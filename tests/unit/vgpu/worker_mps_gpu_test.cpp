// --gpu-share mps on a real GPU (label gpu): the test starts an MPS control
// daemon of its own (as root on the GPU machine), three VMs' workers are
// clients of its server, and one VM's kernel faults. Every client is
// replaced, new ones start once the server takes clients again, and the
// two VMs that did not fault run a kernel and check it afterwards; the time
// that took is printed. Skips with one line where there is no MPS or CUDA.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "kvmtool-gpu/devices/vgpu_worker/engine_factory.h"
#include "kvmtool-gpu/devices/vgpu_worker/mps_control_daemon.h"
#include "kvmtool-gpu/devices/vgpu_worker/mps_server_group.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_engine.h"
#include "tests/support/gpu_test_kernels.h"
#include "tests/support/ring_vector_add.h"
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

using Clock = std::chrono::steady_clock;

std::unique_ptr<VgpuRig> client_rig(const std::shared_ptr<MpsServerGroup>& g, std::string* why) {
    auto rig = std::make_unique<VgpuRig>(VgpuOptions{}, [&](const memmap::GuestMemory& mem, const VgpuOptions& o) {
        return make_engine(mem, o, BackendChoice::Cuda, GpuWorker::Process, why, kDefaultGpus, g);
    });
    return rig->dev ? std::move(rig) : nullptr;
}

WorkerEngine& worker_of(VgpuRig& r) { return dynamic_cast<WorkerEngine&>(r.dev->engine()); }

TEST(WorkerCudaMps, AFaultReplacesEveryClientAndTheOthersWorkAfter) {
    std::unique_ptr<MpsControlDaemon> daemon;
    try {
        daemon = MpsControlDaemon::start();
    } catch (const MpsError& e) {
        GTEST_SKIP() << "no MPS: " << e.what();
    }
    auto group = std::make_shared<MpsServerGroup>(daemon->client_env());
    std::string why;
    std::vector<std::unique_ptr<VgpuRig>> vms;
    for (int i = 0; i < 3; ++i) {
        vms.push_back(client_rig(group, &why));
        if (!vms.back()) GTEST_SKIP() << "no CUDA backend: " << why;
        ASSERT_EQ(vms.back()->enable(), VGPU_SUCCESS);
        ASSERT_EQ(vms.back()->dev->registration_status(), VGPU_SUCCESS) << vms.back()->dev->backend_description();
    }
    std::printf("MPS clients: %s\n", vms[0]->dev->backend_description().c_str());
    VgpuRig& faulty = *vms[2];
    std::vector<uint64_t> fns(3);
    for (int i = 0; i < 3; ++i) vms[i]->module_with("vector_add", &fns[i], test_fatbin());
    for (int i = 0; i < 2; ++i) expect_vector_add_through_ring(*vms[i], fns[i], 4096, 1.0f);
    const pid_t before[2] = {worker_of(*vms[0]).worker_pid(), worker_of(*vms[1]).worker_pid()};

    const uint64_t fa = faulty.alloc(4096);
    const std::vector<std::vector<uint8_t>> bad{bytes(fa), bytes(fa), bytes(uint64_t{0x10}), bytes(uint32_t{1024})};
    const auto t0 = Clock::now();
    const uint32_t st = faulty.launch(fns[2], bad, 4, 1, 256, 1).status;
    std::printf("the faulting launch: status %u\n", st);
    EXPECT_NE(st, VGPU_SUCCESS);

    // The others: replaced, then a new module and a checked kernel.
    for (int i = 0; i < 2; ++i) {
        while (worker_of(*vms[i]).worker_pid() == before[i] || worker_of(*vms[i]).worker_pid() <= 0) {
            ASSERT_LT(Clock::now() - t0, std::chrono::seconds(90)) << "VM " << i << "'s client was not replaced";
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        uint64_t fn = 0;
        vms[i]->module_with("vector_add", &fn, test_fatbin());
        expect_vector_add_through_ring(*vms[i], fn, 4096, 2.0f);
        EXPECT_EQ(vms[i]->dev->counters().recoveries, 1u);
    }
    const double lost_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    EXPECT_EQ(group->faults(), 1u);
    uint64_t fn = 0;
    faulty.module_with("vector_add", &fn, test_fatbin());
    expect_vector_add_through_ring(faulty, fn, 4096, 3.0f);
    std::printf("MPS fault: the two other VMs were replaced and passed a checked kernel %.0f ms after the fault\n",
                lost_ms);
    RecordProperty("mps_fault_recovery_ms", std::to_string(lost_ms));
    vms.clear(); // every client gone before the daemon is told to quit
}

} // namespace
} // namespace kvmgpu::vgpu::test
