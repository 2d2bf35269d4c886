// RESET while the worker hangs in a call: the vCPU that writes RESET used to
// wait for the call's whole bound (20 s by default). Here the bound is an
// hour, so without the cancel this test would hang until ctest's time-out;
// no wall-clock assertion is needed.
#include "../vgpu/vgpu_rig.h"
#include "worker_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

using namespace std::chrono_literals;

TEST(RemoteReset, ResetDoesNotWaitOutAHungWorkerCall) {
    std::string why;
    auto owned = RemoteBackend::create(host_factory(), {.call_timeout = 3600s}, &why);
    ASSERT_TRUE(owned) << why;
    RemoteBackend* be = owned.get();
    VgpuRig rig(VgpuOptions{}, std::move(owned));
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const pid_t before = be->worker_pid();
    // Not through the ring: inject_fault is a backend call the executor
    // would make; the next executor call then hangs in the worker.
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_NOP}).status, VGPU_SUCCESS);
    ASSERT_EQ(be->inject_fault(WorkerFault::HangNextCall), VGPU_SUCCESS);
    rig.post({.opcode = VGPU_OP_CTX_SYNCHRONIZE}); // hangs in the worker
    rig.doorbell();
    rig.reset(); // returns: the hung call is cancelled, the worker replaced
    EXPECT_NE(be->worker_pid(), before);
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_ALLOC, .args = {4096}}).status, VGPU_SUCCESS);
}

} // namespace
} // namespace kvmgpu::vgpu::test
