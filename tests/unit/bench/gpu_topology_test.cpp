// The labels of where a VM's devices live (gpu_topology.h): a topology in,
// text out, no GPU. Two H100s over NV18 as on the two-GPU machine, a PCIe
// pair, a pair without peer access, the host backend, and an unprobed pair.
#include <gtest/gtest.h>

#include "kvmtool-gpu/bench/gpu_topology.h"

namespace kvmgpu::bench {
namespace {

GpuTopology nvlink_pair() {
    GpuTopology t;
    t.link_source = "NVML";
    t.pairs.push_back({.a = 0, .b = 1, .peer_access = true, .native_atomics = true, .perf_rank = 0,
                       .link = LinkKind::NvLink, .nvlinks = 18});
    return t;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(GpuTopology, PairsOfDevicesSayWhereTheyLive) {
    const GpuTopology t = nvlink_pair();
    EXPECT_EQ(device_pair_text(t, {0, 1}, 0, 1),
              "devices 0 and 1: GPUs 0 and 1, NVLink NV18 (peer access, native atomics, performance rank 0)");
    EXPECT_EQ(device_pair_text(t, {0, 0}, 0, 1), "devices 0 and 1: same GPU (GPU 0), copies stay inside its memory");
    const auto lines = device_pair_lines(t, {0, 1, 1, 1});
    ASSERT_EQ(lines.size(), 6u);
    EXPECT_TRUE(has(lines[0], "devices 0 and 1: GPUs 0 and 1, NVLink NV18"));
    EXPECT_TRUE(has(lines[3], "devices 1 and 2: same GPU (GPU 1)"));
    EXPECT_TRUE(device_pair_lines(t, {0}).empty());
}

TEST(GpuTopology, LinkKindsWithoutNvlink) {
    GpuTopology t;
    t.link_source = "NVML: libnvidia-ml.so.1 not loadable";
    t.pairs.push_back({.a = 0, .b = 1, .peer_access = true});
    t.pairs.push_back({.a = 0, .b = 2, .peer_access = true, .link = LinkKind::Pcie});
    t.pairs.push_back({.a = 1, .b = 2, .peer_access = false, .link = LinkKind::Pcie});
    EXPECT_TRUE(has(device_pair_text(t, {0, 1}, 0, 1),
                    "peer access (link type unknown) (peer access; NVML: libnvidia-ml.so.1 not loadable)"));
    EXPECT_TRUE(has(device_pair_text(t, {0, 2}, 0, 1), "GPUs 0 and 2, PCIe (peer access)"));
    EXPECT_TRUE(has(device_pair_text(t, {1, 2}, 0, 1), "no peer access (peer copies staged through host memory"));
    GpuPair via_switch{.a = 0, .b = 1, .peer_access = true, .link = LinkKind::NvLink, .nvlinks = 0};
    EXPECT_EQ(link_text(via_switch), "NVLink (through a switch)");
    via_switch.switch_nvlinks = 18; // an HGX board: every link of GPU 0 ends at an NVSwitch
    EXPECT_EQ(link_text(via_switch), "NVLink NV18 through NVSwitch");
    // A pair the probe did not report (it failed): said, not guessed.
    GpuTopology failed;
    failed.why = "no CUDA driver: libcuda.so.1 not found";
    EXPECT_TRUE(has(device_pair_text(failed, {0, 3}, 0, 1), "link unknown (no CUDA driver"));
    EXPECT_FALSE(crosses_gpu_link(failed, {0, 3}, 0, 1).has_value());
}

TEST(GpuTopology, TheSeedsCaseIsEveryRemoteProductOverALink) {
    const GpuTopology t = nvlink_pair();
    // 0,1,1,1: roles 1..3 on GPU 1, all three cross NV18 (the run, labelled falsely before).
    const GatherLabel a = multigpu_gather_label(t, {0, 1, 1, 1});
    EXPECT_TRUE(a.seeds_case);
    EXPECT_EQ(a.crossing, 3);
    EXPECT_TRUE(has(a.summary, "the seed's case: all 3 remote partial products cross a GPU-to-GPU link")) << a.summary;
    EXPECT_TRUE(has(a.summary, "one link between GPUs 0 and 1")) << a.summary;
    ASSERT_EQ(a.roles.size(), 3u);
    EXPECT_EQ(a.roles[0], "role 1 (device 1, GPU 1): crosses NVLink NV18 to GPU 0");
    // 0,1,0,1: role 2 sits on GPU 0 beside role 0.
    const GatherLabel b = multigpu_gather_label(t, {0, 1, 0, 1});
    EXPECT_FALSE(b.seeds_case);
    EXPECT_EQ(b.crossing, 2);
    EXPECT_EQ(b.summary, "NOT the seed's case: 2 of 3 remote partial products cross a GPU-to-GPU link (roles 1, 3)");
    EXPECT_EQ(b.roles[1], "role 2 (device 2, GPU 0): stays inside GPU 0");
    // 0,0,1,1: role 1 stays, roles 2 and 3 cross.
    const GatherLabel c = multigpu_gather_label(t, {0, 0, 1, 1});
    EXPECT_EQ(c.crossing, 2);
    EXPECT_TRUE(has(c.summary, "(roles 2, 3)")) << c.summary;
    // One GPU: nothing crosses.
    const GatherLabel d = multigpu_gather_label(t, {0, 0, 0, 0});
    EXPECT_EQ(d.crossing, 0);
    EXPECT_EQ(d.summary, "NOT the seed's case: 0 of 3 remote partial products cross a GPU-to-GPU link");
    // Two devices: roles share them round-robin (role 2 on device 0).
    const GatherLabel e = multigpu_gather_label(t, {0, 1});
    EXPECT_EQ(e.crossing, 2);
    EXPECT_EQ(e.roles[1], "role 2 (device 0, GPU 0): stays inside GPU 0");
}

TEST(GpuTopology, NoPeerAccessHostBackendAndUnknown) {
    GpuTopology staged;
    staged.pairs.push_back({.a = 0, .b = 1, .peer_access = false, .link = LinkKind::Pcie});
    const GatherLabel s = multigpu_gather_label(staged, {0, 1, 1, 1});
    EXPECT_EQ(s.crossing, 0);
    EXPECT_EQ(s.roles[0], "role 1 (device 1, GPU 1): through host memory (no peer access to GPU 0)");
    GpuTopology host;
    host.host_backend = true;
    host.why = "--vgpu host";
    const GatherLabel h = multigpu_gather_label(host, {0, 0, 0, 0});
    EXPECT_FALSE(h.seeds_case);
    EXPECT_TRUE(has(h.roles[0], "staged through VMM memory (host backend)"));
    EXPECT_TRUE(has(device_pair_text(host, {0, 0}, 0, 1), "host backend (no GPU: --vgpu host)"));
    GpuTopology unknown;
    unknown.why = "probe died";
    const GatherLabel u = multigpu_gather_label(unknown, {0, 1, 2, 3});
    EXPECT_FALSE(u.known);
    EXPECT_FALSE(u.seeds_case);
    EXPECT_TRUE(has(u.summary, "unknown whether this is the seed's case")) << u.summary;
}

} // namespace
} // namespace kvmgpu::bench
