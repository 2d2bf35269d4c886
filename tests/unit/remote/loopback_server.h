// A GPU server on the host backend, listening on the loopback at a port the
// kernel picks, served on a thread for the test's life; and a VgpuRig whose
// engine is the remote one connected to it.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "kvmtool-gpu/remote/gpu_server.h"
#include "kvmtool-gpu/remote/remote_engine.h"
#include "kvmtool-gpu/remote/ucx_api.h"
#include "kvmtool-gpu/remote/ucx_link.h"
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

// A raw link to `address` (a test speaking the protocol by hand), or to a
// listener of its own on the loopback; nullptr with a failed assertion.
inline std::unique_ptr<UcxLink> raw_link(const std::string& address, std::shared_ptr<UcxContext>* ctx_out = nullptr) {
    std::string why;
    auto ctx = UcxContext::create(&why);
    EXPECT_TRUE(ctx) << why;
    if (!ctx) return nullptr;
    auto link = UcxLink::connect(ctx, address, &why);
    EXPECT_TRUE(link) << why;
    if (ctx_out) *ctx_out = ctx;
    return link;
}

// A listener on the loopback and a link connected to it; accept() gives the
// listener's end (call it on the thread that will use it).
struct LinkPair {
    std::shared_ptr<UcxContext> ctx;
    std::unique_ptr<UcxListener> listener;
    std::unique_ptr<UcxLink> client;
    LinkPair() {
        std::string why;
        ctx = UcxContext::create(&why);
        EXPECT_TRUE(ctx) << why;
        if (ctx) listener = UcxListener::listen(ctx, "127.0.0.1:0", &why);
        EXPECT_TRUE(listener) << why;
        if (listener) client = UcxLink::connect(ctx, "127.0.0.1:" + std::to_string(listener->port()), &why);
        EXPECT_TRUE(client) << why;
    }
    std::unique_ptr<UcxLink> accept() {
        ucp_conn_request_h req = listener->take(std::chrono::steady_clock::now() + std::chrono::seconds(20));
        EXPECT_NE(req, nullptr);
        if (!req) return nullptr;
        std::string why;
        auto link = UcxLink::accept(ctx, req, &why);
        EXPECT_TRUE(link) << why;
        return link;
    }
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
