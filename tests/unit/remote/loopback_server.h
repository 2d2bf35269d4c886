// A GPU server on the host backend, listening on the loopback at a port the
// kernel picks, served on a thread for the test's life; and a VgpuRig whose
// engine is the remote one connected to it.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "kvmtool-gpu/remote/gpu_server.h"
#include "kvmtool-gpu/remote/remote_engine.h"
#include "kvmtool-gpu/remote/ucx_api.h"
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::remote::test {

inline const SharedKey kTestKey{"loopback-test-key-0123456789"};

// Skips the test, saying why, where UCX cannot be loaded.
#define KVMGPU_SKIP_WITHOUT_UCX()                                                   \
    do {                                                                            \
        std::string ucx_why;                                                        \
        if (!::kvmgpu::remote::ucx_api(&ucx_why)) GTEST_SKIP() << ucx_why;          \
    } while (0)

struct LoopbackServer {
    std::unique_ptr<GpuServer> server;
    std::atomic<bool> stop{false};
    std::thread thread;

    explicit LoopbackServer(GpuServerOptions o = {}) {
        o.listen = "127.0.0.1:0";
        if (o.key.bytes.empty()) o.key = kTestKey;
        o.backend = vgpu::BackendChoice::Host;
        std::string why;
        server = GpuServer::start(o, &why);
        EXPECT_TRUE(server) << why;
        if (server) thread = std::thread([this] { server->run(stop); });
    }
    ~LoopbackServer() {
        stop = true;
        if (thread.joinable()) thread.join();
    }
    std::string address() const { return "127.0.0.1:" + std::to_string(server->port()); }
};

// A rig whose commands run on `server`; dev is null (and *why says so) if
// the connection was refused.
inline vgpu::test::EngineMaker remote_engine_on(const LoopbackServer& server, std::string* why,
                                                const SharedKey& key = kTestKey) {
    return [&server, why, key](const memmap::GuestMemory& mem, const vgpu::VgpuOptions& o) {
        return make_remote_engine(mem, o, RemoteTarget{server.address(), key}, why);
    };
}

// A GPU server and a VM (a VgpuRig) whose commands run there, its ring
// enabled: the fixture of the remote tests. `options` and `ring_entries`
// may be set in a derived fixture's constructor.
struct RemoteVm : ::testing::Test {
    vgpu::VgpuOptions options;
    uint32_t ring_entries = vgpu::test::kRingEntries;
    std::unique_ptr<LoopbackServer> server;
    std::unique_ptr<vgpu::test::VgpuRig> rig;
    std::string why;
    void SetUp() override {
        KVMGPU_SKIP_WITHOUT_UCX();
        server = std::make_unique<LoopbackServer>();
        rig = std::make_unique<vgpu::test::VgpuRig>(options, remote_engine_on(*server, &why));
        ASSERT_TRUE(rig->dev) << why;
        rig->entries = ring_entries;
        ASSERT_EQ(rig->enable(vgpu::test::kRingGpa, ring_entries), 0u);
    }
    void TearDown() override { rig.reset(); } // before the server it talks to
    const GpuServerStats& stats() const { return server->server->stats(); }
};

} // namespace kvmgpu::remote::test
