// What a GPU server refuses, and what a VMM refuses of a server.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include "kvmtool-gpu/remote/guest_ram_copy.h"
#include "kvmtool-gpu/remote/span_list.h"
#include "kvmtool-gpu/remote/remote_wire.h"
#include "kvmtool-gpu/remote/ucx_link.h"
#include "tests/unit/remote/loopback_server.h"

namespace kvmgpu::remote::test {
namespace {

using vgpu::test::VgpuRig;

template <typename Done>
bool eventually(Done done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

TEST(RemoteSecurity, AVmmWithAnotherKeyIsNotServed) {
    KVMGPU_SKIP_WITHOUT_UCX();
    LoopbackServer server;
    std::string why;
    VgpuRig rig({}, remote_engine_on(server, &why, SharedKey{"some-other-key-0123456789"}));
    EXPECT_FALSE(rig.dev);
    // The server proves the key first: the VMM stops there, before it gives
    // the server any access to guest RAM.
    EXPECT_NE(why.find("does not hold our key"), std::string::npos) << why;
    EXPECT_EQ(server.server->stats().sessions_started.load(), 0u);
}

TEST(RemoteSecurity, NobodyListeningIsOneLine) {
    KVMGPU_SKIP_WITHOUT_UCX();
    std::string why;
    LinkPair pair;
    ASSERT_TRUE(pair.listener);
    const std::string address = "127.0.0.1:" + std::to_string(pair.listener->port());
    pair.listener.reset(); // the port is closed now (the pair's own connection refused with it)
    pair.client.reset();
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 1 << 20));
    EXPECT_FALSE(make_remote_engine(mem, {}, RemoteTarget{address, kTestKey}, &why));
    EXPECT_NE(why.find(address), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
}

TEST(RemoteSecurity, AnotherBuildOrGarbageIsRefused) {
    KVMGPU_SKIP_WITHOUT_UCX();
    LoopbackServer server;
    std::shared_ptr<UcxContext> ctx;
    auto link = raw_link(server.address(), &ctx);
    ASSERT_TRUE(link);
    WireHello hello{kWireMagic, kWireVersion, VGPU_ABI_VERSION + 1, 0, 0, fresh_nonce()};
    ASSERT_TRUE(link->send(kHello, &hello, sizeof hello, nullptr, 0));
    UcxMessage m;
    ASSERT_TRUE(link->receive(kChallenge, &m, std::chrono::steady_clock::now() + std::chrono::seconds(20)));
    WireChallenge c{};
    ASSERT_EQ(m.header.size(), sizeof c);
    std::memcpy(&c, m.header.data(), sizeof c);
    EXPECT_NE(c.status, 0u);
    EXPECT_NE(std::string(m.body.begin(), m.body.end()).find("vGPU ABI"), std::string::npos);
    // A header of the wrong size is refused too.
    auto garbage = raw_link(server.address());
    ASSERT_TRUE(garbage);
    const uint32_t junk = 7;
    ASSERT_TRUE(garbage->send(kHello, &junk, sizeof junk, nullptr, 0));
    ASSERT_TRUE(garbage->receive(kChallenge, &m, std::chrono::steady_clock::now() + std::chrono::seconds(20)));
    std::memcpy(&c, m.header.data(), sizeof c);
    EXPECT_NE(c.status, 0u);
    EXPECT_TRUE(eventually([&] { return server.server->stats().refused.load() == 2; }));
    EXPECT_EQ(server.server->stats().sessions_started.load(), 0u);
}

TEST(RemoteSecurity, AFloodingPeerIsDroppedAndOthersServed) {
    KVMGPU_SKIP_WITHOUT_UCX();
    LoopbackServer server;
    auto flood = raw_link(server.address());
    ASSERT_TRUE(flood);
    // Messages the server never asked for, far past any batch in flight.
    const uint64_t junk = 0;
    for (size_t i = 0; i < 2 * UcxLink::kMaxInbox && !flood->peer_lost(); ++i)
        flood->send(kControlDone, &junk, sizeof junk, nullptr, 0, std::chrono::seconds(5));
    EXPECT_TRUE(eventually([&] {
        flood->progress();
        return flood->peer_lost();
    }));
    EXPECT_EQ(server.server->stats().sessions_started.load(), 0u);
    // The server still serves the next VMM.
    std::string why;
    VgpuRig rig({}, remote_engine_on(server, &why));
    ASSERT_TRUE(rig.dev) << why;
    ASSERT_EQ(rig.enable(), 0u);
    rig.alloc(4096);
}

// A server that proves the key, takes a command and never answers; then
// `end_wait` on the VMM's engine, which must end the call it waits in.
void call_a_silent_server_holds(const std::function<void(vgpu::CommandEngine&)>& end_wait) {
    std::string why;
    auto ctx = UcxContext::create(&why);
    ASSERT_TRUE(ctx) << why;
    auto listener = UcxListener::listen(ctx, "127.0.0.1:0", &why);
    ASSERT_TRUE(listener) << why;
    const std::string address = "127.0.0.1:" + std::to_string(listener->port());
    std::atomic<bool> holding{false}, done{false};
    std::thread silent([&] {
        ucp_conn_request_h req = listener->take(Clock::now() + std::chrono::seconds(20));
        ASSERT_NE(req, nullptr);
        std::string refused;
        auto link = UcxLink::accept(ctx, req, &refused);
        ASSERT_TRUE(link) << refused;
        UcxMessage m;
        const auto soon = [] { return Clock::now() + std::chrono::seconds(20); };
        WireHello hello{};
        ASSERT_TRUE(link->receive(kHello, &m, soon()) && header_as(m, &hello));
        WireChallenge c{};
        c.magic = kWireMagic;
        c.server_nonce = fresh_nonce();
        c.server_proof = key_proof(kTestKey, "server", hello.client_nonce, c.server_nonce);
        ASSERT_TRUE(link->send(kChallenge, &c, sizeof c, nullptr, 0));
        ASSERT_TRUE(link->receive(kProof, &m, soon()));
        const WireWelcome w{};
        const char name[] = "silent";
        ASSERT_TRUE(link->send(kWelcome, &w, sizeof w, name, sizeof name - 1));
        ASSERT_TRUE(link->receive(kCommands, &m, soon()));
        holding = true; // and never answers
        while (!done) link->progress();
    });
    struct StopSilent { // also when an assertion below ends the test early
        std::atomic<bool>& done;
        std::thread& t;
        ~StopSilent() {
            done = true;
            t.join();
        }
    } stop_silent{done, silent};
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 1 << 20));
    auto engine = make_remote_engine(mem, {}, RemoteTarget{address, kTestKey}, &why);
    ASSERT_TRUE(engine) << why;
    vgpu::GuestCommand nop{};
    nop.desc.opcode = VGPU_OP_NOP;
    vgpu::CommandResult r;
    std::thread caller([&] { r = engine->sink()->execute(nop); });
    EXPECT_TRUE(eventually([&] { return holding.load(); }));
    end_wait(*engine);
    caller.join();
    EXPECT_EQ(r.status, VGPU_ERROR_NO_DEVICE);
    EXPECT_EQ(engine->sink()->execute(nop).status, VGPU_ERROR_NO_DEVICE); // and every later call
}

// A cancel (RESET's grace, a hung GPU) ends the VMM's wait.
TEST(RemoteSecurity, ACallAServerHoldsCanBeCancelled) {
    KVMGPU_SKIP_WITHOUT_UCX();
    call_a_silent_server_holds([](vgpu::CommandEngine& e) { e.cancel_call_in_flight(); });
}

// The VM stopping ends it too, after a grace: a silent server cannot hold a VMM's teardown.
TEST(RemoteSecurity, AStoppingVmStopsWaitingForASilentServer) {
    KVMGPU_SKIP_WITHOUT_UCX();
    call_a_silent_server_holds([](vgpu::CommandEngine& e) { e.vm_stopping(); });
}

using RemoteRefusals = RemoteVm;

TEST_F(RemoteRefusals, ZeroCopyAndRegisteredGuestMemoryAreRefused) {
    VgpuRig& rig = *this->rig;
    EXPECT_EQ(rig.reg_read64(VGPU_REG_FEATURES) & VGPU_FEATURE_ZERO_COPY, 0u);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GUEST_RAM_DEVICE_PTR, .args = {vgpu::test::kDataGpa, 4096}}).status,
              VGPU_ERROR_NOT_SUPPORTED);
    vgpu_sg_entry e{vgpu::test::kDataGpa, 4096};
    rig.put(vgpu::test::kDataGpa + 65536, &e, sizeof e);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_HOST_REGISTER, .args = {vgpu::test::kDataGpa + 65536, 1, 4096, 0}}).status,
              VGPU_ERROR_NOT_SUPPORTED);
}

TEST(RemoteSecurity, AVmmThatVanishesLeavesNoSession) {
    KVMGPU_SKIP_WITHOUT_UCX();
    LoopbackServer server;
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 1 << 20));
    {
        std::string why;
        auto engine = make_remote_engine(mem, {}, RemoteTarget{server.address(), kTestKey}, &why);
        ASSERT_TRUE(engine) << why;
        engine->start();
        vgpu::GuestCommand alloc{};
        alloc.desc.opcode = VGPU_OP_MEM_ALLOC;
        alloc.desc.arg[0] = 1 << 20;
        EXPECT_EQ(engine->sink()->execute(alloc).status, VGPU_SUCCESS);
        EXPECT_EQ(server.server->stats().sessions_started.load(), 1u);
        // Gone without stop(): no word to the server, the connection just closes.
    }
    EXPECT_TRUE(eventually([&] { return server.server->stats().sessions_ended.load() == 1; }));
}

// Each session is a process of its own, not the server's: one that dies (as
// a sticky driver fault ends CUDA in its process) takes no other VM's GPU.
TEST(RemoteSecurity, EachSessionIsAProcessOfItsOwn) {
    KVMGPU_SKIP_WITHOUT_UCX();
    LoopbackServer server;
    std::string why_first, why_second;
    VgpuRig first({}, remote_engine_on(server, &why_first));
    ASSERT_TRUE(first.dev) << why_first;
    ASSERT_TRUE(eventually([&] { return server.server->session_pids().size() == 1; }));
    const pid_t first_pid = server.server->session_pids()[0];
    VgpuRig second({}, remote_engine_on(server, &why_second));
    ASSERT_TRUE(second.dev) << why_second;
    ASSERT_EQ(first.enable(), 0u);
    ASSERT_EQ(second.enable(), 0u);
    first.alloc(4096);
    second.alloc(4096);
    const std::vector<pid_t> pids = server.server->session_pids();
    ASSERT_EQ(pids.size(), 2u);
    EXPECT_NE(pids[0], pids[1]);
    for (pid_t p : pids) EXPECT_NE(p, getpid());
    ASSERT_EQ(kill(first_pid, SIGKILL), 0);
    EXPECT_EQ(first.call({VGPU_OP_MEM_ALLOC, {4096}}).status, VGPU_ERROR_NO_DEVICE);
    EXPECT_EQ(second.call({VGPU_OP_MEM_ALLOC, {4096}}).status, VGPU_SUCCESS);
    EXPECT_TRUE(eventually([&] { return server.server->session_pids().size() == 1; }));
}

TEST(RemoteSecurity, RamLargerThanTheServerTakesIsRefused) {
    KVMGPU_SKIP_WITHOUT_UCX();
    GpuServerOptions o;
    o.max_guest_ram = 4 << 20; // the rig's RAM is 8 MiB
    LoopbackServer server(o);
    std::string why;
    VgpuRig rig({}, remote_engine_on(server, &why));
    EXPECT_FALSE(rig.dev);
    EXPECT_NE(why.find("--max-guest-ram"), std::string::npos) << why;
}

} // namespace
} // namespace kvmgpu::remote::test

namespace kvmgpu::remote::test {
namespace {

// What a server may write into a VMM's guest RAM: spans inside one region,
// of the size the header says; nothing else lands.
TEST(RemoteSecurity, DataLandsOnlyInsideGuestRam) {
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 1 << 20));
    const Landing land = data_landing(mem);
    auto header = [](uint64_t gpa, uint64_t bytes) {
        const WireSpan s{gpa, bytes};
        return std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(&s), reinterpret_cast<const uint8_t*>(&s) + sizeof s);
    };
    EXPECT_EQ(land(header(4096, 100), 100), mem.translate(memmap::GuestPhysAddr{4096}, 100)->data());
    EXPECT_EQ(land(header((1 << 20) - 50, 100), 100), nullptr); // runs past RAM
    EXPECT_EQ(land(header(~0ull - 10, 100), 100), nullptr);     // wraps
    EXPECT_EQ(land(header(4096, 100), 4096), nullptr);          // body larger than the span
    EXPECT_EQ(land(std::vector<uint8_t>(3), 100), nullptr);     // no span at all
}

// A span list (FETCH_LIST, DATA_LIST) from either side: parsed only within
// its limits and with exactly its bytes, landed only when every span lies
// inside guest RAM, and then nothing of a bad one.
TEST(RemoteSecurity, SpanListsLandOnlyInsideGuestRamAndWhole) {
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 1 << 20));
    auto message = [](std::vector<WireSpan> spans, uint64_t body_extra, uint32_t count) {
        UcxMessage m;
        const WireSpanList head{count, 0};
        m.header.assign(reinterpret_cast<const uint8_t*>(&head), reinterpret_cast<const uint8_t*>(&head) + sizeof head);
        m.body.assign(reinterpret_cast<const uint8_t*>(spans.data()),
                      reinterpret_cast<const uint8_t*>(spans.data() + spans.size()));
        m.body.resize(m.body.size() + body_extra, 0x5a);
        return m;
    };
    std::vector<WireSpan> got;
    const std::vector<WireSpan> two{{4096, 100}, {8192, 28}};
    EXPECT_TRUE(parse_span_list(message(two, 128, 2), true, &got));
    EXPECT_EQ(got.size(), 2u);
    EXPECT_TRUE(parse_span_list(message(two, 0, 2), false, &got)); // FETCH_LIST: no bytes
    EXPECT_FALSE(parse_span_list(message(two, 127, 2), true, &got)); // a byte short
    EXPECT_FALSE(parse_span_list(message(two, 129, 2), true, &got)); // a byte over
    EXPECT_FALSE(parse_span_list(message(two, 128, 3), true, &got)); // count past the table
    EXPECT_FALSE(parse_span_list(message({}, 0, 0), false, &got));   // empty
    EXPECT_FALSE(parse_span_list(message({{0, kListSpanMax + 1}}, 0, 1), false, &got));
    EXPECT_FALSE(parse_span_list(message({{0, 0}}, 0, 1), false, &got));
    EXPECT_FALSE(parse_span_list(message(std::vector<WireSpan>(kMaxListSpans + 1, WireSpan{0, 1}), 0, kMaxListSpans + 1),
                                 false, &got));
    EXPECT_FALSE(parse_span_list(message(std::vector<WireSpan>(32, WireSpan{0, kListSpanMax}), 0, 32), false, &got))
        << "more than kMaxListBytes in all";

    // Landing: one span past RAM refuses the list, and nothing of it lands.
    uint8_t* first = mem.translate(memmap::GuestPhysAddr{4096}, 100)->data();
    std::memset(first, 0, 100);
    const std::vector<WireSpan> bad{{4096, 100}, {(1 << 20) - 50, 100}};
    UcxMessage m = message(bad, 200, 2);
    ASSERT_TRUE(parse_span_list(m, true, &got));
    EXPECT_FALSE(scatter_span_list(mem, got, m.body));
    EXPECT_EQ(first[0], 0) << "a refused list wrote guest RAM";
    m = message(two, 128, 2);
    ASSERT_TRUE(parse_span_list(m, true, &got));
    EXPECT_TRUE(scatter_span_list(mem, got, m.body));
    EXPECT_EQ(first[0], 0x5a);
    // Gathering for a FETCH_LIST reads guest RAM only.
    std::vector<uint8_t> body;
    EXPECT_FALSE(gather_span_list(mem, bad, &body));
    EXPECT_TRUE(body.empty());
    ASSERT_TRUE(gather_span_list(mem, two, &body));
    EXPECT_EQ(body.size(), 2 * sizeof(WireSpan) + 128);
    EXPECT_EQ(body[2 * sizeof(WireSpan)], 0x5a);
}

} // namespace
} // namespace kvmgpu::remote::test
