// CUDA graphs on a remote GPU: the shared graph cases (tests/support/
// graph_cases.h) run over UCX's loopback on a GPU server's host backend.
// Copy nodes and captured copies name guest RAM, which the server fetches
// before each launch and sends back after it.
#include <gtest/gtest.h>

#include <memory>

#include "tests/support/graph_cases.h"
#include "tests/unit/remote/loopback_server.h"

namespace kvmgpu::remote::test {
namespace {

using vgpu::test::GraphVm;
using vgpu::test::VgpuRig;

struct RemoteGraph : ::testing::Test {
    std::unique_ptr<LoopbackServer> server;
    std::unique_ptr<VgpuRig> rig;
    std::unique_ptr<GraphVm> vm;
    std::string why;
    void SetUp() override {
        KVMGPU_SKIP_WITHOUT_UCX();
        server = std::make_unique<LoopbackServer>();
        rig = std::make_unique<VgpuRig>(vgpu::VgpuOptions{}, remote_engine_on(*server, &why));
        ASSERT_TRUE(rig->dev) << why;
        ASSERT_EQ(rig->enable(), VGPU_SUCCESS);
        vm = std::make_unique<GraphVm>(*rig);
    }
    void TearDown() override {
        vm.reset();
        rig.reset(); // before the server it talks to
    }
};

TEST_F(RemoteGraph, RunsInDependencyOrder) { vgpu::test::graph_runs_in_dependency_order(*vm); }
TEST_F(RemoteGraph, CaptureRecordsAndReplays) { vgpu::test::capture_records_and_replays(*vm); }
TEST_F(RemoteGraph, ShapeAndClone) { vgpu::test::graph_shape_and_clone(*vm); }
TEST_F(RemoteGraph, MemoryNodes) { vgpu::test::graph_memory_nodes(*vm); }

} // namespace
} // namespace kvmgpu::remote::test
