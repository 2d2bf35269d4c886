// Bodies of every size land where their landing says, over whatever
// transport UCX picks (UCX_TLS=tcp: the rendezvous path over sockets).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "tests/unit/remote/loopback_server.h"
#include "kvmtool-gpu/remote/ucx_link.h"

namespace kvmgpu::remote::test {
namespace {

TEST(UcxLink, BodiesOfEverySizeLandInPlace) {
    KVMGPU_SKIP_WITHOUT_UCX();
    std::string why;
    LinkPair pair;
    ASSERT_TRUE(pair.client);
    UcxLink* client = pair.client.get();
    const std::vector<size_t> sizes = {1, 4096, 65536, 1 << 20, 16 << 20, 64 << 20};
    std::vector<uint8_t> landed(64 << 20);
    std::thread server([&] {
        auto link = pair.accept();
        ASSERT_TRUE(link);
        link->set_landing(1, [&](const std::vector<uint8_t>&, size_t bytes) { return bytes <= landed.size() ? landed.data() : nullptr; });
        for (size_t n : sizes) {
            UcxMessage m;
            ASSERT_TRUE(link->receive(1, &m, std::chrono::steady_clock::now() + std::chrono::seconds(60))) << n;
            EXPECT_TRUE(m.landed && !m.refused) << n;
            const uint64_t echo = n;
            ASSERT_TRUE(link->send(2, &echo, sizeof echo, nullptr, 0)) << n; // its data is in place now
        }
    });
    std::vector<uint8_t> src(64 << 20);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 131 + 7);
    for (size_t n : sizes) {
        const uint64_t h = n;
        ASSERT_TRUE(client->send(1, &h, sizeof h, src.data(), n, std::chrono::seconds(60), &why)) << n << ": " << why;
        UcxMessage ack;
        ASSERT_TRUE(client->receive(2, &ack, std::chrono::steady_clock::now() + std::chrono::seconds(60))) << n;
        EXPECT_EQ(std::memcmp(landed.data(), src.data(), n), 0) << n;
    }
    server.join();
}

} // namespace
} // namespace kvmgpu::remote::test

namespace kvmgpu::remote::test {
namespace {

// A peer that sends more than kMaxInbox messages nobody takes is dropped:
// the receiver's memory does not grow with what the peer sends.
TEST(UcxLink, AFloodEndsTheLink) {
    KVMGPU_SKIP_WITHOUT_UCX();
    LinkPair pair;
    ASSERT_TRUE(pair.client);
    UcxLink* sender = pair.client.get();
    std::atomic<bool> sent{false};
    std::thread receiver([&] {
        auto link = pair.accept();
        ASSERT_TRUE(link);
        // Takes no message of what arrives (id 1): waits for one never sent.
        while (!sent) link->progress();
        UcxMessage m;
        EXPECT_FALSE(link->receive(9, &m, std::chrono::steady_clock::now() + std::chrono::seconds(20)));
        EXPECT_TRUE(link->peer_lost()); // not the deadline: the flood
        EXPECT_NE(link->peer_error().find("unanswered"), std::string::npos) << link->peer_error();
    });
    const uint64_t h = 0;
    for (size_t i = 0; i < UcxLink::kMaxInbox + 16; ++i) ASSERT_TRUE(sender->send(1, &h, sizeof h, nullptr, 0)) << i;
    sent = true;
    receiver.join();
}

} // namespace
} // namespace kvmgpu::remote::test
