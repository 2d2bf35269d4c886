// Occupancy, context limits and P2P attributes through the ring, on the
// host backend (its nominal figures: 2048 threads, 32 blocks and 228 KiB
// of shared memory per multiprocessor), and their error paths.
#include "kvmtool-gpu/devices/vgpu/backend_factory.h"
#include "kvmtool-gpu/devices/vgpu/backends/device_backends.h"
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

struct VgpuLimits : ::testing::Test {
    VgpuRig rig{VgpuOptions{.device_mem_quota = 64ull << 20, .max_handles = 8}};
    uint64_t fn = 0;
    void SetUp() override {
        ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
        rig.module_with("vector_add", &fn);
    }
    Done occupancy(uint64_t block, uint64_t shared = 0, uint64_t flags = 0) {
        return rig.call({.opcode = VGPU_OP_FUNC_OCCUPANCY, .args = {fn, block, shared, flags}});
    }
    Done limit(uint64_t which, uint64_t value = 0, uint64_t set = 0) {
        return rig.call({.opcode = VGPU_OP_CTX_LIMIT, .args = {which, value, set}});
    }
    uint64_t used() {
        const Done d = rig.call({.opcode = VGPU_OP_MEM_GET_INFO});
        return d.r1 - d.r0;
    }
};

TEST_F(VgpuLimits, OccupancyFollowsThreadsBlocksAndSharedMemory) {
    EXPECT_EQ(occupancy(256).r0, 8u);   // 2048 threads / 256
    EXPECT_EQ(occupancy(1024).r0, 2u);
    EXPECT_EQ(occupancy(32).r0, 32u);   // the block slots
    EXPECT_EQ(occupancy(33).r0, 32u);   // two warps each: 2048 / 64 = 32
    EXPECT_EQ(occupancy(100).r0, 16u);  // four warps each
    EXPECT_EQ(occupancy(256, 40 << 10).r0, 5u); // 228 KiB / 40 KiB
    EXPECT_EQ(occupancy(256, 0, 1).r0, 8u);     // CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE
    // Blocks no GPU runs fit 0 times; more shared memory than the kernel may have, too.
    EXPECT_EQ(occupancy(1025).status, VGPU_SUCCESS);
    EXPECT_EQ(occupancy(1025).r0, 0u);
    EXPECT_EQ(occupancy(256, 1ull << 40).r0, 0u);
    EXPECT_EQ(occupancy(256, 49 << 10).r0, 0u); // over 48 KiB without opting in
}

TEST_F(VgpuLimits, OccupancyRefusesHostileFields) {
    EXPECT_EQ(occupancy(0).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(occupancy(1ull << 32).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(occupancy(256, 0, 2).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_FUNC_OCCUPANCY, .args = {fn + 1, 256, 0, 0}}).status,
              VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_FUNC_OCCUPANCY, .args = {0, 256, 0, 0}}).status, VGPU_ERROR_INVALID_HANDLE);
}

// cuOccupancyAvailableDynamicSMemPerBlock: the host backend does not offer
// it; the handle and the counts' width are checked before any backend.
TEST_F(VgpuLimits, AvailableSharedIsCheckedAndNotOfferedByTheHostBackend) {
    const auto available = [&](uint64_t f, uint64_t blocks, uint64_t block) {
        return rig.call({.opcode = VGPU_OP_FUNC_AVAILABLE_SHARED, .args = {f, blocks, block}}).status;
    };
    EXPECT_EQ(available(fn, 1, 256), VGPU_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(available(fn + 1, 1, 256), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(available(0, 1, 256), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(available(fn, 1ull << 32, 256), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(available(fn, 1, UINT64_MAX), VGPU_ERROR_INVALID_VALUE);
}

TEST_F(VgpuLimits, MemoryLimitsCountAgainstTheQuotaAndResetRestoresThem) {
    EXPECT_EQ(limit(VGPU_LIMIT_MALLOC_HEAP_SIZE).r0, 8u << 20);
    const uint64_t before = used();
    ASSERT_EQ(limit(VGPU_LIMIT_MALLOC_HEAP_SIZE, 40 << 20, 1).status, VGPU_SUCCESS);
    EXPECT_EQ(limit(VGPU_LIMIT_MALLOC_HEAP_SIZE).r0, 40u << 20);
    EXPECT_EQ(used() - before, 32u << 20); // over the start value
    // Past the quota: refused, nothing changed.
    EXPECT_EQ(limit(VGPU_LIMIT_PRINTF_FIFO_SIZE, 1ull << 40, 1).status, VGPU_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(limit(VGPU_LIMIT_PRINTF_FIFO_SIZE).r0, 1u << 20);
    EXPECT_EQ(limit(VGPU_LIMIT_STACK_SIZE, UINT64_MAX, 1).status, VGPU_ERROR_OUT_OF_MEMORY); // no wrap
    // Lowering gives the memory back.
    ASSERT_EQ(limit(VGPU_LIMIT_MALLOC_HEAP_SIZE, 1 << 20, 1).status, VGPU_SUCCESS);
    EXPECT_EQ(used(), before);
    // The stack costs its size for every thread the device holds.
    int sms = 0;
    ASSERT_EQ(rig.host->device_attribute(16, &sms), VGPU_SUCCESS);
    const uint64_t extra = (2048 - 1024) * 2048ull * static_cast<uint64_t>(sms);
    ASSERT_EQ(limit(VGPU_LIMIT_STACK_SIZE, 2048, 1).status, extra <= (64ull << 20) - before ? VGPU_SUCCESS
                                                                                             : VGPU_ERROR_OUT_OF_MEMORY);
    rig.reset();
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(limit(VGPU_LIMIT_MALLOC_HEAP_SIZE).r0, 8u << 20);
    EXPECT_EQ(limit(VGPU_LIMIT_STACK_SIZE).r0, 1024u);
    EXPECT_EQ(used(), 0u);
}

TEST_F(VgpuLimits, HintsAndRefusedLimits) {
    // Persisting L2: a hint kept up to the device's maximum (0 on the host backend).
    EXPECT_EQ(limit(VGPU_LIMIT_PERSISTING_L2_CACHE_SIZE, 1 << 20, 1).status, VGPU_SUCCESS);
    EXPECT_EQ(limit(VGPU_LIMIT_PERSISTING_L2_CACHE_SIZE).r0, 0u);
    EXPECT_EQ(limit(VGPU_LIMIT_MAX_L2_FETCH_GRANULARITY, 128, 1).status, VGPU_SUCCESS);
    EXPECT_EQ(limit(VGPU_LIMIT_MAX_L2_FETCH_GRANULARITY, 129, 1).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(limit(VGPU_LIMIT_DEV_RUNTIME_SYNC_DEPTH).status, VGPU_SUCCESS);
    EXPECT_EQ(limit(VGPU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, 4, 1).status, VGPU_ERROR_UNSUPPORTED_LIMIT);
    // Pending device-runtime launches: charged 8 KiB each past the start, bounded by the quota.
    EXPECT_EQ(limit(VGPU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 1ull << 40, 1).status, VGPU_ERROR_OUT_OF_MEMORY);
    const uint64_t start = limit(VGPU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT).r0, before = used();
    EXPECT_EQ(limit(VGPU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, start + 4096, 1).status, VGPU_SUCCESS);
    EXPECT_EQ(used(), before + 4096 * 8192);
    EXPECT_EQ(limit(VGPU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, start, 1).status, VGPU_SUCCESS);
    EXPECT_EQ(used(), before);
    // Not a CUDA-in-graphics context: its limits read 0 (cuBLASLt asks), none is set.
    for (uint64_t cig : {VGPU_LIMIT_SHMEM_SIZE, VGPU_LIMIT_CIG_ENABLED, VGPU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED}) {
        EXPECT_EQ(limit(cig).status, VGPU_SUCCESS) << cig;
        EXPECT_EQ(limit(cig).r0, 0u) << cig;
        EXPECT_EQ(limit(cig, 1, 1).status, VGPU_ERROR_UNSUPPORTED_LIMIT) << cig;
    }
    EXPECT_EQ(limit(VGPU_LIMIT_COUNT_).status, VGPU_ERROR_UNSUPPORTED_LIMIT);
    EXPECT_EQ(limit(UINT64_MAX, 0, 1).status, VGPU_ERROR_UNSUPPORTED_LIMIT);
    EXPECT_EQ(limit(VGPU_LIMIT_STACK_SIZE, 0, 2).status, VGPU_ERROR_INVALID_VALUE);
    // Without a current context there is no limit to ask about.
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_CTX_SET_CURRENT, .args = {0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(limit(VGPU_LIMIT_STACK_SIZE).status, VGPU_ERROR_INVALID_CONTEXT);
}

TEST_F(VgpuLimits, P2PAttributeOfOneDeviceIsRefused) {
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_P2P_ATTRIBUTE, .args = {2, 0, 0}}).status, VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_P2P_ATTRIBUTE, .args = {2, 0, 1}}).status, VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_P2P_ATTRIBUTE, .args = {0, 0, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_P2P_ATTRIBUTE, .args = {6, 0, 0}}).status, VGPU_ERROR_INVALID_VALUE);
}

TEST(VgpuLimitsDevices, P2PAttributesBetweenHostDevices) {
    std::vector<std::unique_ptr<GpuBackend>> devices;
    devices.push_back(make_host_backend());
    devices.push_back(make_host_backend());
    VgpuRig rig{VgpuOptions{.max_handles = 8}, DeviceBackends(std::move(devices))};
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const Done access = rig.call({.opcode = VGPU_OP_DEVICE_P2P_ATTRIBUTE, .args = {2, 0, 1}});
    ASSERT_EQ(access.status, VGPU_SUCCESS);
    EXPECT_EQ(access.r0, 1u); // host devices are each other's peers
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_P2P_ATTRIBUTE, .args = {1, 1, 0}}).r0, 0u);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_P2P_ATTRIBUTE, .args = {2, 1, 1}}).status, VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_P2P_ATTRIBUTE, .args = {2, 0, 2}}).status, VGPU_ERROR_INVALID_DEVICE);
}

} // namespace
} // namespace kvmgpu::vgpu::test
