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

struct RemoteGraph : RemoteVm {
    std::unique_ptr<GraphVm> vm;
    void SetUp() override {
        RemoteVm::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        vm = std::make_unique<GraphVm>(*rig);
    }
    void TearDown() override {
        vm.reset();
        RemoteVm::TearDown();
    }
};

TEST_F(RemoteGraph, RunsInDependencyOrder) { vgpu::test::graph_runs_in_dependency_order(*vm); }
TEST_F(RemoteGraph, CaptureRecordsAndReplays) { vgpu::test::capture_records_and_replays(*vm); }
TEST_F(RemoteGraph, ShapeAndClone) { vgpu::test::graph_shape_and_clone(*vm); }
TEST_F(RemoteGraph, MemoryNodes) { vgpu::test::graph_memory_nodes(*vm); }

} // namespace
} // namespace kvmgpu::remote::test
