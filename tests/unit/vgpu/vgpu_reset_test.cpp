// RESET frees everything it forgets, whatever the synchronize before it
// reports. Before the fix a non-sticky error there (the CUDA backend returns
// one once after a refused asynchronous device walk) skipped every free but
// still dropped the handles and gave the quota back: on the H100 a VM with a
// 4 GiB quota held 24 GiB after six rounds.
#include <atomic>

#include "tests/support/forwarding_backend.h"
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

// Reports INVALID_VALUE from the next ctx_synchronize, once, as the CUDA
// backend does for a refused asynchronous walk.
class RefusalOnNextSync : public ForwardingBackend {
public:
    std::atomic<bool> armed{false};
    Status ctx_synchronize() override {
        if (armed.exchange(false)) return VGPU_ERROR_INVALID_VALUE;
        return ForwardingBackend::ctx_synchronize();
    }
};

constexpr uint64_t kQuota = 64ull << 20;

TEST(VgpuReset, FreesEverythingAfterANonStickySynchronizeError) {
    auto owned = std::make_unique<RefusalOnNextSync>();
    RefusalOnNextSync* be = owned.get();
    VgpuRig rig(VgpuOptions{.device_mem_quota = kQuota}, std::move(owned));
    uint64_t free0 = 0, total = 0;
    ASSERT_EQ(be->inner().mem_get_info(&free0, &total), VGPU_SUCCESS);
    for (int round = 0; round < 6; ++round) {
        ASSERT_EQ(rig.enable(), VGPU_SUCCESS) << round;
        rig.alloc(kQuota); // the whole quota
        const Done s = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
        ASSERT_EQ(s.status, VGPU_SUCCESS);
        be->armed = true;
        rig.reset(); // the executor is idle again when this returns
        uint64_t free_now = 0;
        ASSERT_EQ(be->inner().mem_get_info(&free_now, &total), VGPU_SUCCESS);
        EXPECT_EQ(free_now, free0) << "round " << round << ": RESET left device memory allocated";
    }
    // The quota still holds: a second allocation beyond it is refused.
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    rig.alloc(kQuota);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_ALLOC, .args = {4096}}).status, VGPU_ERROR_OUT_OF_MEMORY);
}

} // namespace
} // namespace kvmgpu::vgpu::test
