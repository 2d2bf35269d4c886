// Thread-block clusters through the ring on the host backend: a launch
// with VGPU_CMD_FLAG_CLUSTER (its header before the parameter buffer), the
// cluster occupancy questions, and every hostile header the device model
// refuses before a backend sees it.
#include <cstring>

#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

struct VgpuClusters : ::testing::Test {
    VgpuRig rig{VgpuOptions{.max_handles = 8}};
    uint64_t fn = 0;
    uint64_t da = 0, db = 0, dc = 0;
    static constexpr uint32_t kN = 1024;
    void SetUp() override {
        ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
        rig.module_with("vector_add", &fn);
        std::vector<float> a(kN), b(kN);
        for (uint32_t i = 0; i < kN; ++i) a[i] = static_cast<float>(i), b[i] = 2.0f;
        da = upload(a), db = upload(b), dc = upload(std::vector<float>(kN, -1.0f));
    }
    uint64_t upload(const std::vector<float>& v) {
        const uint64_t d = rig.alloc(v.size() * 4);
        rig.put(kDataGpa, v.data(), v.size() * 4);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kDataGpa, v.size() * 4, 0}}).status, VGPU_SUCCESS);
        return d;
    }
    std::vector<float> result() {
        std::vector<float> v(kN);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, dc, kN * 4, 0}}).status, VGPU_SUCCESS);
        rig.get(kDataGpa, v.data(), kN * 4);
        return v;
    }
    // vector_add over kN in blocks of 128, the header before the buffer.
    Cmd clustered(vgpu_launch_cluster h, uint32_t grid = kN / 128) {
        const std::vector<std::vector<uint8_t>> p = {bytes(da), bytes(db), bytes(dc), bytes(kN)};
        Cmd c = rig.launch_cmd(fn, p, {grid, 1, 1}, {128, 1, 1});
        c.flags = VGPU_CMD_FLAG_CLUSTER;
        std::vector<uint8_t> header(sizeof h);
        std::memcpy(header.data(), &h, sizeof h);
        c.payload.insert(c.payload.begin(), header.begin(), header.end());
        return c;
    }
    Done ask(uint16_t op, std::array<uint32_t, 3> cluster, uint32_t grid = 8, uint32_t block = 128) {
        vgpu_args_cluster_occupancy a{.function = fn, .grid = {grid, 1, 1}, .block = {block, 1, 1},
                                      .shared_bytes = 0, .cluster = {cluster[0], cluster[1], cluster[2]}};
        Cmd c{.opcode = op, .args = std::vector<uint64_t>(6)};
        std::memcpy(c.args.data(), &a, sizeof a);
        return rig.call(c);
    }
};

TEST_F(VgpuClusters, AClusteredLaunchRunsTheKernel) {
    ASSERT_EQ(rig.call(clustered({{2, 1, 1}, 0})).status, VGPU_SUCCESS);
    const auto c = result();
    for (uint32_t i = 0; i < kN; ++i) ASSERT_EQ(c[i], static_cast<float>(i) + 2.0f) << i;
    EXPECT_EQ(rig.call(clustered({{8, 1, 1}, 1})).status, VGPU_SUCCESS); // SPREAD
}

TEST_F(VgpuClusters, HostileHeadersAreRefusedBeforeTheBackend) {
    EXPECT_EQ(rig.call(clustered({{0, 1, 1}, 0})).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call(clustered({{1, 0, 1}, 0})).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call(clustered({{65, 1, 1}, 0}, 65)).status, VGPU_ERROR_INVALID_VALUE); // past VGPU_MAX_CLUSTER_BLOCKS
    EXPECT_EQ(rig.call(clustered({{0x10000, 0x10000, 1}, 0})).status, VGPU_ERROR_INVALID_VALUE); // wraps 32 bits
    EXPECT_EQ(rig.call(clustered({{2, 1, 1}, 3})).status, VGPU_ERROR_INVALID_VALUE); // no such policy
    Cmd short_header = clustered({{2, 1, 1}, 0});
    short_header.payload.resize(8);
    EXPECT_EQ(rig.call(short_header).status, VGPU_ERROR_INVALID_VALUE);
    // The buffer must follow the header whole: one byte short is refused.
    Cmd cut = clustered({{2, 1, 1}, 0});
    cut.payload.pop_back();
    EXPECT_EQ(rig.call(cut).status, VGPU_ERROR_INVALID_VALUE);
    // The flag belongs to launches only.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {0}, .flags = VGPU_CMD_FLAG_CLUSTER}).status,
              VGPU_ERROR_INVALID_VALUE);
    // None of them ran the kernel.
    EXPECT_EQ(result()[0], -1.0f);
}

TEST_F(VgpuClusters, AClusterMustTileTheGridAsAGpuRequires) {
    EXPECT_EQ(rig.call(clustered({{3, 1, 1}, 0})).status, VGPU_ERROR_INVALID_CLUSTER_SIZE); // 8 blocks
    EXPECT_EQ(rig.call(clustered({{16, 1, 1}, 0}, 16)).status, VGPU_ERROR_INVALID_CLUSTER_SIZE); // past 8
}

TEST_F(VgpuClusters, OccupancyQuestionsAnswerForTheShape) {
    // 128 threads: 16 blocks a multiprocessor (2048 / 128) times the
    // multiprocessors, in whole clusters.
    const Done one = ask(VGPU_OP_FUNC_MAX_ACTIVE_CLUSTERS, {1, 1, 1});
    ASSERT_EQ(one.status, VGPU_SUCCESS);
    ASSERT_GT(one.r0, 0u);
    EXPECT_EQ(ask(VGPU_OP_FUNC_MAX_ACTIVE_CLUSTERS, {4, 1, 1}).r0, one.r0 / 4);
    EXPECT_EQ(ask(VGPU_OP_FUNC_MAX_ACTIVE_CLUSTERS, {0, 0, 0}).r0, one.r0); // none given: one block each
    EXPECT_EQ(ask(VGPU_OP_FUNC_MAX_ACTIVE_CLUSTERS, {3, 1, 1}).status, VGPU_ERROR_INVALID_CLUSTER_SIZE);
    EXPECT_EQ(ask(VGPU_OP_FUNC_MAX_ACTIVE_CLUSTERS, {0, 1, 1}).status, VGPU_ERROR_INVALID_CLUSTER_SIZE);
    EXPECT_EQ(ask(VGPU_OP_FUNC_MAX_ACTIVE_CLUSTERS, {128, 1, 1}, 128).status, VGPU_ERROR_INVALID_CLUSTER_SIZE);
    EXPECT_EQ(ask(VGPU_OP_FUNC_MAX_CLUSTER_SIZE, {0, 0, 0}).r0, 8u);
    EXPECT_EQ(ask(VGPU_OP_FUNC_MAX_CLUSTER_SIZE, {0, 0, 0}, 8, 2048).status, VGPU_ERROR_INVALID_VALUE); // block
    EXPECT_EQ(ask(VGPU_OP_FUNC_MAX_CLUSTER_SIZE, {0, 0, 0}, 0).status, VGPU_ERROR_INVALID_VALUE);      // grid
    vgpu_args_cluster_occupancy bad{.function = fn + 1, .grid = {8, 1, 1}, .block = {128, 1, 1}};
    Cmd c{.opcode = VGPU_OP_FUNC_MAX_ACTIVE_CLUSTERS, .args = std::vector<uint64_t>(6)};
    std::memcpy(c.args.data(), &bad, sizeof bad);
    EXPECT_EQ(rig.call(c).status, VGPU_ERROR_INVALID_HANDLE);
}

} // namespace
} // namespace kvmgpu::vgpu::test
