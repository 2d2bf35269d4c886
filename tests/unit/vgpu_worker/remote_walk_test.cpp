// The device walk through a GPU worker process (host backend inside): the
// list and the RAM regions cross the channel as addresses, not entries.
#include "../vgpu/device_walk_cases.h"
#include "worker_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

std::unique_ptr<VgpuRig> worker_vm() {
    std::string why;
    auto be = RemoteBackend::create(host_factory(), {}, &why);
    EXPECT_TRUE(be) << why;
    if (!be) return nullptr;
    auto rig = std::make_unique<VgpuRig>(VgpuOptions{.device_mem_quota = 16ull << 20}, std::move(be));
    EXPECT_EQ(rig->enable(), VGPU_SUCCESS);
    return rig;
}

TEST(RemoteDeviceWalk, MovesTheRightBytes) {
    auto rig = worker_vm();
    ASSERT_TRUE(rig);
    walk_moves_the_right_bytes(*rig);
}

TEST(RemoteDeviceWalk, ManyInFlight) {
    auto rig = worker_vm();
    ASSERT_TRUE(rig);
    walk_many_in_flight(*rig);
}

TEST(RemoteDeviceWalk, RefusesBadLists) {
    auto rig = worker_vm();
    ASSERT_TRUE(rig);
    walk_refuses_bad_lists(*rig);
}

} // namespace
} // namespace kvmgpu::vgpu::test
