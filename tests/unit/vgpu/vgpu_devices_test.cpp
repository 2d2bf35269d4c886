// Several devices in one VM (a host backend each, as --gpus 0,0,0
// makes on a machine without a GPU): device queries by ordinal, contexts on
// each device, objects and memory freed on the device that made them,
// copies between devices (staged through the VMM), and peer access: a CPU
// kernel on one device reading another's memory.
#include <cstring>

#include "kvmtool-gpu/devices/vgpu/backend_factory.h"
#include "kvmtool-gpu/abi/vgpu_blas_abi.h"
#include "kvmtool-gpu/devices/vgpu/backends/device_backends.h"
#include "tests/support/host_libraries.h"
#include "tests/support/forwarding_backend.h"
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

constexpr int kDevices = 3;

DeviceBackends three_host_devices(std::vector<HostBackend*>* each) {
    std::vector<std::unique_ptr<GpuBackend>> devices;
    for (int i = 0; i < kDevices; ++i) {
        auto h = make_host_backend();
        each->push_back(h.get());
        devices.push_back(std::move(h));
    }
    return DeviceBackends(std::move(devices));
}

struct VgpuDevices : ::testing::Test {
    std::vector<HostBackend*> host;
    VgpuRig rig{VgpuOptions{.max_handles = 16}, three_host_devices(&host)};
    void SetUp() override { ASSERT_EQ(rig.enable(), VGPU_SUCCESS); }

    uint32_t status(Cmd c) { return rig.call(std::move(c)).status; }
    uint64_t context_on(uint64_t device) {
        const Done d = rig.call({.opcode = VGPU_OP_CTX_CREATE, .args = {0, device}});
        EXPECT_EQ(d.status, VGPU_SUCCESS);
        return d.r0;
    }
    std::vector<uint8_t> read(uint64_t dptr, size_t n) {
        std::vector<uint8_t> v(n);
        EXPECT_EQ(status({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, dptr, n, 0}}), VGPU_SUCCESS);
        rig.get(kDataGpa, v.data(), n);
        return v;
    }
};

TEST_F(VgpuDevices, EachOrdinalIsADevice) {
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_GET_COUNT}).r0, 3u);
    for (uint64_t d = 0; d < kDevices; ++d) {
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_GET_ATTRIBUTE, .args = {10, d}}).r0, 32u) << d; // warp size
        EXPECT_EQ(status({.opcode = VGPU_OP_DEVICE_GET_NAME, .args = {d}}), VGPU_SUCCESS);
        EXPECT_GT(rig.call({.opcode = VGPU_OP_DEVICE_TOTAL_MEM, .args = {d}}).r0, 0u);
    }
    EXPECT_EQ(status({.opcode = VGPU_OP_DEVICE_GET_ATTRIBUTE, .args = {10, 3}}), VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(status({.opcode = VGPU_OP_DEVICE_TOTAL_MEM, .args = {3}}), VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 3}}), VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(status({.opcode = VGPU_OP_PRIMARY_CTX_RETAIN, .args = {2}}), VGPU_SUCCESS);
}

// A block of attributes in one command: each as the single question
// answers it, refused ones left out of the mask; hostile values refused.
TEST_F(VgpuDevices, AttributesComeInBlocks) {
    for (uint64_t first : {uint64_t{0}, uint64_t{VGPU_ATTRIBUTES_PER_CALL}}) {
        const Done block = rig.call({.opcode = VGPU_OP_DEVICE_GET_ATTRIBUTES, .args = {1, first}});
        ASSERT_EQ(block.status, VGPU_SUCCESS);
        unsigned answered = 0;
        for (uint32_t i = 0; i < VGPU_ATTRIBUTES_PER_CALL; ++i) {
            const Done one = rig.call({.opcode = VGPU_OP_DEVICE_GET_ATTRIBUTE, .args = {first + i, 1}});
            const bool in_block = ((i < 64 ? block.r0 : block.r1) >> (i % 64)) & 1;
            EXPECT_EQ(in_block, one.status == VGPU_SUCCESS) << first + i;
            int32_t value = 0;
            std::memcpy(&value, block.payload.data() + i * sizeof value, sizeof value);
            if (in_block) {
                EXPECT_EQ(static_cast<uint64_t>(static_cast<int64_t>(value)), one.r0) << first + i;
                ++answered;
            }
        }
        if (first == 0) {
            EXPECT_GT(answered, 60u); // the attributes a runtime reads
        }
    }
    EXPECT_EQ(status({.opcode = VGPU_OP_DEVICE_GET_ATTRIBUTES, .args = {3, 0}}), VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(status({.opcode = VGPU_OP_DEVICE_GET_ATTRIBUTES, .args = {~0ull, 0}}), VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(status({.opcode = VGPU_OP_DEVICE_GET_ATTRIBUTES, .args = {0, 1ull << 40}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status({.opcode = VGPU_OP_DEVICE_GET_ATTRIBUTES, .args = {0, INT_MAX}}), VGPU_ERROR_INVALID_VALUE);
}

TEST_F(VgpuDevices, AContextWorksOnItsOwnDevice) {
    context_on(1);
    const uint64_t on1 = rig.alloc(4096);
    context_on(2);
    const uint64_t on2 = rig.alloc(8192);
    EXPECT_EQ(host[0]->live_allocations(), 0u);
    EXPECT_EQ(host[1]->live_allocations(), 1u);
    EXPECT_EQ(host[2]->live_allocations(), 1u);
    // Each device's window onto guest RAM is the VM's.
    const Done w = rig.call({.opcode = VGPU_OP_GUEST_RAM_DEVICE_PTR, .args = {kDataGpa, 4096}});
    ASSERT_EQ(w.status, VGPU_SUCCESS);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEMSET_D8, .args = {w.r0, 0x5c, 16, 0}}), VGPU_SUCCESS);
    uint8_t b[16];
    rig.get(kDataGpa, b, sizeof b);
    EXPECT_EQ(b[15], 0x5c);
    // Memory is freed by the device that allocated it, from any context.
    EXPECT_EQ(status({.opcode = VGPU_OP_MEM_FREE, .args = {on1}}), VGPU_SUCCESS);
    EXPECT_EQ(host[1]->live_allocations(), 0u);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEM_FREE, .args = {on2}}), VGPU_SUCCESS);
    EXPECT_EQ(host[2]->live_allocations(), 0u);
}

TEST_F(VgpuDevices, PeerCopiesGoBetweenDevices) {
    const uint64_t c1 = context_on(1);
    const uint64_t src = rig.alloc(64 << 10);
    ASSERT_EQ(status({.opcode = VGPU_OP_MEMSET_D32, .args = {src, 0xA1B2C3D4, 16 << 10, 0}}), VGPU_SUCCESS);
    const uint64_t c2 = context_on(2);
    const uint64_t dst = rig.alloc(64 << 10);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEMCPY_PEER, .args = {dst, c2, src, c1, 64 << 10, 0}}), VGPU_SUCCESS);
    const auto got = read(dst, 64 << 10);
    uint32_t first, last;
    std::memcpy(&first, got.data(), 4);
    std::memcpy(&last, got.data() + got.size() - 4, 4);
    EXPECT_EQ(first, 0xA1B2C3D4u);
    EXPECT_EQ(last, 0xA1B2C3D4u);
    // Within one device (not the current one) too; ranges are still checked.
    EXPECT_EQ(status({.opcode = VGPU_OP_MEMCPY_PEER, .args = {src + 4096, c1, src, c1, 4096, 0}}), VGPU_SUCCESS);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEMCPY_PEER, .args = {dst, c2, src, c1, (64 << 10) + 1, 0}}),
              VGPU_ERROR_INVALID_VALUE);
}

TEST_F(VgpuDevices, AnotherDevicesMemoryIsReachedThroughUnifiedAddressing) {
    context_on(2);
    const uint64_t on2 = rig.alloc(4096);
    context_on(1);
    const uint64_t on1 = rig.alloc(4096);
    // From device 1's context: a memset, a host copy and a device copy on device 2's memory.
    EXPECT_EQ(status({.opcode = VGPU_OP_MEMSET_D8, .args = {on2, 0x11, 4096, 0}}), VGPU_SUCCESS);
    EXPECT_EQ(read(on2, 4)[3], 0x11);
    const uint8_t mine[4] = {1, 2, 3, 4};
    rig.put(kDataGpa, mine, sizeof mine);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {on2 + 8, kDataGpa, 4, 0}}), VGPU_SUCCESS);
    EXPECT_EQ(status({.opcode = VGPU_OP_MEMCPY_DTOD, .args = {on1, on2, 4096, 0}}), VGPU_SUCCESS);
    const auto got = read(on1, 12);
    EXPECT_EQ(got[0], 0x11);
    EXPECT_EQ(got[8], 1);
    EXPECT_EQ(got[11], 4);
    EXPECT_EQ(host[1]->live_allocations(), 1u);
    EXPECT_EQ(host[2]->live_allocations(), 1u);
}

TEST_F(VgpuDevices, ObjectsAndMemoryGoWithTheirContextsDevice) {
    const uint64_t c1 = context_on(1);
    const uint64_t stream1 = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}}).r0;
    uint64_t fn1;
    rig.module_with("vector_add", &fn1);
    rig.alloc(4096);
    const uint64_t c2 = context_on(2);
    rig.alloc(4096);
    EXPECT_EQ(status({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {stream1}}), VGPU_ERROR_INVALID_HANDLE);
    // Destroyed while device 2 is current: device 1 frees what it holds.
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_DESTROY, .args = {c1}}), VGPU_SUCCESS);
    EXPECT_EQ(host[1]->live_allocations(), 0u);
    EXPECT_EQ(host[2]->live_allocations(), 1u);
    EXPECT_NE(rig.alloc(64), 0u); // device 2 still current
    EXPECT_EQ(host[2]->live_allocations(), 2u);
    // RESET frees every device's memory.
    context_on(0);
    rig.alloc(64);
    (void)c2;
    rig.reset();
    for (HostBackend* h : host) EXPECT_EQ(h->live_allocations(), 0u);
}

TEST_F(VgpuDevices, HostDevicesAreEachOthersPeers) {
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_CAN_ACCESS_PEER, .args = {0, 1}}).r0, 1u);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_CAN_ACCESS_PEER, .args = {1, 1}}).r0, 0u); // not its own peer
    EXPECT_EQ(status({.opcode = VGPU_OP_DEVICE_CAN_ACCESS_PEER, .args = {0, 3}}), VGPU_ERROR_INVALID_DEVICE);
    const uint64_t c1 = context_on(1);
    context_on(0);
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_DISABLE_PEER_ACCESS, .args = {c1}}), VGPU_ERROR_PEER_ACCESS_NOT_ENABLED);
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_ENABLE_PEER_ACCESS, .args = {c1, 0}}), VGPU_SUCCESS);
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_ENABLE_PEER_ACCESS, .args = {c1, 0}}),
              VGPU_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    EXPECT_EQ(status({.opcode = VGPU_OP_CTX_DISABLE_PEER_ACCESS, .args = {c1}}), VGPU_SUCCESS);
}

// A kernel on device 1 reads device 0's memory once device 1 has peer
// access to it (as simpleP2P's kernel does over the bus); without it, the
// read is an illegal address, as on a GPU without the mapping.
TEST_F(VgpuDevices, AKernelReadsPeerMemoryOnlyWithPeerAccess) {
    constexpr unsigned n = 256;
    const uint64_t c0 = context_on(0);
    const uint64_t on0 = rig.alloc(n * 4);
    std::vector<float> v(n);
    for (unsigned i = 0; i < n; ++i) v[i] = static_cast<float>(i);
    rig.put(kDataGpa, v.data(), n * 4);
    ASSERT_EQ(status({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {on0, kDataGpa, n * 4, 0}}), VGPU_SUCCESS);
    context_on(1);
    const uint64_t a1 = rig.alloc(n * 4), c1out = rig.alloc(n * 4);
    ASSERT_EQ(status({.opcode = VGPU_OP_MEMSET_D32, .args = {a1, 0x3f800000, n, 0}}), VGPU_SUCCESS); // 1.0f
    uint64_t fn;
    rig.module_with("vector_add", &fn);
    unsigned count = n;
    const std::vector<std::vector<uint8_t>> p = {bytes(on0), bytes(a1), bytes(c1out), bytes(count)};
    ASSERT_EQ(status({.opcode = VGPU_OP_CTX_ENABLE_PEER_ACCESS, .args = {c0, 0}}), VGPU_SUCCESS);
    ASSERT_EQ(rig.launch(fn, p, 1, 1, n, 1).status, VGPU_SUCCESS);
    const auto got = read(c1out, n * 4);
    float last;
    std::memcpy(&last, got.data() + (n - 1) * 4, 4);
    EXPECT_EQ(last, static_cast<float>(n - 1) + 1.0f);
    ASSERT_EQ(status({.opcode = VGPU_OP_CTX_DISABLE_PEER_ACCESS, .args = {c0}}), VGPU_SUCCESS);
    EXPECT_EQ(rig.launch(fn, p, 1, 1, n, 1).status, VGPU_ERROR_ILLEGAL_ADDRESS);
}

// A host backend that says it has a peer path (as CUDA does), so the
// device model's bookkeeping of enabled pairs is exercised.
class PeeringHost final : public ForwardingBackend {
public:
    Status peer_can_access(GpuBackend&, int* out) override { return *out = 1, VGPU_SUCCESS; }
    Status peer_set_access(GpuBackend&, bool) override { return VGPU_SUCCESS; }
};

TEST(VgpuPeerAccess, EnabledOncePerPairAndForgottenWithTheContext) {
    std::vector<std::unique_ptr<GpuBackend>> devices;
    devices.push_back(std::make_unique<PeeringHost>());
    devices.push_back(std::make_unique<PeeringHost>());
    VgpuRig rig{VgpuOptions{}, DeviceBackends(std::move(devices))};
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_CAN_ACCESS_PEER, .args = {0, 1}}).r0, 1u);
    const uint64_t c1 = rig.call({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 1}}).r0;
    const uint64_t c0 = rig.call({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 0}}).r0;
    auto st = [&](uint16_t op, std::vector<uint64_t> args) { return rig.call({.opcode = op, .args = args}).status; };
    EXPECT_EQ(st(VGPU_OP_CTX_ENABLE_PEER_ACCESS, {c1, 1}), VGPU_ERROR_INVALID_VALUE); // flags must be 0
    EXPECT_EQ(st(VGPU_OP_CTX_ENABLE_PEER_ACCESS, {c1, 0}), VGPU_SUCCESS);
    EXPECT_EQ(st(VGPU_OP_CTX_ENABLE_PEER_ACCESS, {c1, 0}), VGPU_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    EXPECT_EQ(st(VGPU_OP_CTX_ENABLE_PEER_ACCESS, {c0, 0}), VGPU_ERROR_PEER_ACCESS_UNSUPPORTED); // itself
    EXPECT_EQ(st(VGPU_OP_CTX_ENABLE_PEER_ACCESS, {12345, 0}), VGPU_ERROR_INVALID_CONTEXT);
    EXPECT_EQ(st(VGPU_OP_CTX_DISABLE_PEER_ACCESS, {c1}), VGPU_SUCCESS);
    EXPECT_EQ(st(VGPU_OP_CTX_DISABLE_PEER_ACCESS, {c1}), VGPU_ERROR_PEER_ACCESS_NOT_ENABLED);
    EXPECT_EQ(st(VGPU_OP_CTX_ENABLE_PEER_ACCESS, {c1, 0}), VGPU_SUCCESS);
    EXPECT_EQ(st(VGPU_OP_CTX_DESTROY, {c1}), VGPU_SUCCESS);
    const uint64_t again = rig.call({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 1}}).r0;
    EXPECT_EQ(st(VGPU_OP_CTX_SET_CURRENT, {c0}), VGPU_SUCCESS);
    EXPECT_EQ(st(VGPU_OP_CTX_ENABLE_PEER_ACCESS, {again, 0}), VGPU_SUCCESS);
}

// A backend of another kind than the host backend it forwards to.
class OtherKind final : public ForwardingBackend {
public:
    uint32_t id() const override { return VGPU_BACKEND_CUDA; }
};

TEST(DeviceBackends, RefusesEmptyNullAndMixedLists) {
    EXPECT_THROW(DeviceBackends(std::vector<std::unique_ptr<GpuBackend>>{}), std::invalid_argument);
    std::vector<std::unique_ptr<GpuBackend>> with_null;
    with_null.push_back(nullptr);
    EXPECT_THROW(DeviceBackends(std::move(with_null)), std::invalid_argument);
    std::vector<std::unique_ptr<GpuBackend>> mixed;
    mixed.push_back(make_host_backend());
    mixed.push_back(std::make_unique<OtherKind>());
    EXPECT_THROW(DeviceBackends(std::move(mixed)), std::invalid_argument);
    // A null single backend is no device at all, which an engine refuses.
    EXPECT_FALSE(DeviceBackends(std::unique_ptr<HostBackend>{}));
    EXPECT_EQ(DeviceBackends(make_host_backend()).count(), 1);
}

// One device: its own description, and no other ordinal to select.
TEST(DeviceBackends, OneDeviceIsItsBackend) {
    auto h = make_host_backend();
    const std::string line = h->describe();
    DeviceBackends one(std::move(h));
    EXPECT_EQ(one.describe(), line);
    EXPECT_EQ(one.select(0), VGPU_SUCCESS);
    EXPECT_EQ(one.select(1), VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(one.select(-1), VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(one.selected(), 0);
    int can = -1;
    EXPECT_EQ(one.can_access_peer(0, 0, &can), VGPU_SUCCESS);
    EXPECT_EQ(can, 0);
    EXPECT_EQ(one.set_peer_access(0, 0, true), VGPU_ERROR_PEER_ACCESS_UNSUPPORTED);
    EXPECT_EQ(one.memcpy_peer(1, 0, 0, 0, 8, 0, false), VGPU_ERROR_INVALID_DEVICE);
}

} // namespace
} // namespace kvmgpu::vgpu::test

namespace kvmgpu::vgpu::test {
namespace {

// A library works on the current context's device: an operand another
// device holds is refused (it would fault there), one of its own is not.
TEST(VgpuDevicesBlas, LibraryOperandsMustBeOnTheCurrentDevice) {
    std::vector<HostBackend*> host;
    VgpuRig rig{VgpuOptions{.max_handles = 16}, three_host_devices(&host)};
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const uint64_t on_device0 = rig.alloc(64);
    const Done ctx = rig.call({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 1}});
    ASSERT_EQ(ctx.status, VGPU_SUCCESS);
    const uint64_t on_device1 = rig.alloc(64);
    const Done h = rig.call({.opcode = VGPU_OP_BLAS_CREATE});
    ASSERT_EQ(h.status, VGPU_SUCCESS);
    vgpu_blas_level1 c{};
    c.head = {h.r0, VGPU_BLAS_SCAL, 0};
    c.type = VGPU_BLAS_R_32F, c.n = 4, c.x = {on_device1, 1};
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_LEVEL1, .payload = bytes(c)}).status, VGPU_SUCCESS);
    c.x.ptr = on_device0;
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_LEVEL1, .payload = bytes(c)}).status, VGPU_ERROR_INVALID_VALUE);
    const Done g = rig.call({.opcode = VGPU_OP_RAND_CREATE, .args = {100}});
    ASSERT_EQ(g.status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_RAND_GENERATE, .args = {g.r0, on_device0, 4, VGPU_RAND_UNIFORM}}).status,
              VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_RAND_GENERATE, .args = {g.r0, on_device1, 4, VGPU_RAND_UNIFORM}}).status,
              VGPU_SUCCESS);
    EXPECT_EQ(host_blas_of(*host[1]).live_handles(), 1u);
    EXPECT_EQ(host_blas_of(*host[0]).live_handles(), 0u);
}

} // namespace
} // namespace kvmgpu::vgpu::test
