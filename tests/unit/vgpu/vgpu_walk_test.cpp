// The device walk on the host backend, which does it with the GPU's rules
// on the CPU (the same cases run on the GPU in cuda_backend_test.cpp).
#include "tests/support/device_walk_cases.h"

namespace kvmgpu::vgpu::test {
namespace {

struct DeviceWalk : ::testing::Test {
    VgpuRig rig{VgpuOptions{.device_mem_quota = 16ull << 20, .max_handles = 64}};
    void SetUp() override { ASSERT_EQ(rig.enable(), VGPU_SUCCESS); }
};

TEST_F(DeviceWalk, MovesTheRightBytes) { walk_moves_the_right_bytes(rig); }
TEST_F(DeviceWalk, RefusesBadLists) { walk_refuses_bad_lists(rig); }
TEST_F(DeviceWalk, ManyInFlight) { walk_many_in_flight(rig); }

TEST_F(DeviceWalk, VmmTranslatedStrategiesCheckTheTotalTheyAreGiven) {
    const vgpu_sg_entry two[] = {{kDataGpa + 8192, 4096}, {kDataGpa + 32768, 100}};
    rig.put(kDataGpa, two, sizeof two);
    const uint64_t d = rig.alloc(8192);
    for (uint64_t how = VGPU_SG_AUTO; how < VGPU_SG_DEVICE_WALK; ++how) {
        SCOPED_TRACE(how);
        auto sg = [&](uint64_t total) {
            return rig.call({.opcode = VGPU_OP_MEMCPY_HTOD_SG, .args = {d, kDataGpa, 2, 0, how, total}}).status;
        };
        EXPECT_EQ(sg(4196), VGPU_SUCCESS);
        EXPECT_EQ(sg(0), VGPU_SUCCESS); // not given
        EXPECT_EQ(sg(4195), VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(sg(4197), VGPU_ERROR_INVALID_VALUE);
    }
}

} // namespace
} // namespace kvmgpu::vgpu::test
