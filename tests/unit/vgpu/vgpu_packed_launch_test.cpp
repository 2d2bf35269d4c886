// The module's parameter layout, as the guest gets it (FUNC_GET_PARAM_INFO),
// and launches that carry the kernel's parameter buffer laid out by it
// (LAUNCH_KERNEL_PACKED): in the ring slot, or in guest RAM when larger.
// Every malformed one is refused, and the device carries on: inline and in
// a GPU worker process (which must survive each).
#include <cstring>
#include <memory>

#include "kvmtool-gpu/abi/param_echo_shapes.h"
#include "tests/support/vgpu_rig.h"
#include "tests/support/worker_vgpu.h"

namespace kvmgpu::vgpu::test {
namespace {

struct PackedLaunch : ::testing::TestWithParam<bool> {
    std::unique_ptr<WorkerVgpu> in_worker = GetParam() ? std::make_unique<WorkerVgpu>() : nullptr;
    std::unique_ptr<VgpuRig> inline_rig = GetParam() ? nullptr : std::make_unique<VgpuRig>();
    VgpuRig& rig = in_worker ? in_worker->rig : *inline_rig;
    uint64_t echo = 0, add = 0;
    void SetUp() override {
        ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
        rig.module_with("param_echo", &echo);
        rig.module_with("vector_add", &add);
    }
    // Launch `fn` (one thread) with `bytes` of parameters; inline when they
    // fit, else through guest RAM at `gpa`.
    Done launch(uint64_t fn, const std::vector<uint8_t>& buffer, uint64_t gpa = 0, int64_t payload_len = -1) {
        Cmd c{.opcode = VGPU_OP_LAUNCH_KERNEL_PACKED,
              .args = {fn, 0, 1 | (1ull << 32), 1 | (1ull << 32), 1 | (1ull << 32), uint64_t{buffer.size()} << 32}};
        if (gpa) {
            rig.put(gpa, buffer.data(), buffer.size());
            c.payload = bytes(gpa);
        } else {
            c.payload = buffer;
        }
        c.payload_len = payload_len;
        return rig.call(c);
    }
};

TEST_P(PackedLaunch, TheLayoutIsTheModulesInChunks) {
    const Done all = rig.call({.opcode = VGPU_OP_FUNC_GET_PARAM_INFO, .args = {echo, 0}});
    ASSERT_EQ(all.status, VGPU_SUCCESS);
    EXPECT_EQ(all.r0, kEchoParams);
    EXPECT_EQ(all.r1, kEchoBufferBytes);
    for (unsigned i = 0; i < kEchoParams; ++i) {
        vgpu_param_desc d;
        std::memcpy(&d, all.payload.data() + i * sizeof d, sizeof d);
        EXPECT_EQ(d.offset, kEchoOffsets[i]) << i;
        EXPECT_EQ(d.size, kEchoSizes[i]) << i;
    }
    const Done tail = rig.call({.opcode = VGPU_OP_FUNC_GET_PARAM_INFO, .args = {echo, 4}});
    vgpu_param_desc d;
    std::memcpy(&d, tail.payload.data(), sizeof d);
    EXPECT_EQ(d.offset, kEchoOffsets[4]);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_FUNC_GET_PARAM_INFO, .args = {echo, kEchoParams}}).r0, kEchoParams);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_FUNC_GET_PARAM_INFO, .args = {echo, kEchoParams + 1}}).status,
              VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_FUNC_GET_PARAM_INFO, .args = {echo ^ (1ull << 32), 0}}).status,
              VGPU_ERROR_INVALID_HANDLE);
}

TEST_P(PackedLaunch, ParametersInTheSlotAndInGuestRam) {
    // vector_add's buffer (28 bytes) in the slot.
    const uint64_t d = rig.alloc(4 * 4);
    std::vector<float> ones(4, 1.0f);
    rig.put(kDataGpa, ones.data(), 16);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kDataGpa, 16, 0}}).status, VGPU_SUCCESS);
    std::vector<uint8_t> buf(28);
    const uint32_t n = 4;
    for (uint64_t off : {0u, 8u, 16u}) std::memcpy(buf.data() + off, &d, 8);
    std::memcpy(buf.data() + 24, &n, 4);
    Cmd c{.opcode = VGPU_OP_LAUNCH_KERNEL_PACKED,
          .args = {add, 0, 1 | (1ull << 32), 1 | (4ull << 32), 1 | (1ull << 32), 28ull << 32},
          .payload = buf};
    ASSERT_EQ(rig.call(c).status, VGPU_SUCCESS);
    float got[4];
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, d, 16, 0}}).status, VGPU_SUCCESS);
    rig.get(kDataGpa, got, sizeof got);
    for (float v : got) EXPECT_EQ(v, 2.0f);

    // param_echo's 570 bytes from guest RAM: every byte arrives.
    const uint64_t out = rig.alloc(kEchoOutBytes);
    std::vector<uint8_t> echo_buf(kEchoBufferBytes);
    for (size_t i = 0; i < echo_buf.size(); ++i) echo_buf[i] = static_cast<uint8_t>(i * 7 + 3);
    std::memcpy(echo_buf.data(), &out, 8);
    ASSERT_EQ(launch(echo, echo_buf, kDataGpa + 8192).status, VGPU_SUCCESS);
    std::vector<uint8_t> echoed(kEchoOutBytes);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, out, kEchoOutBytes, 0}}).status,
              VGPU_SUCCESS);
    rig.get(kDataGpa, echoed.data(), echoed.size());
    size_t at = 0;
    for (unsigned i = 1; i < kEchoParams; ++i) {
        EXPECT_EQ(std::memcmp(echoed.data() + at, echo_buf.data() + kEchoOffsets[i], kEchoSizes[i]), 0) << i;
        at += kEchoSizes[i];
    }
}

TEST_P(PackedLaunch, MalformedLaunchesAreRefused) {
    std::vector<uint8_t> echo_buf(kEchoBufferBytes);
    const uint64_t out = rig.alloc(kEchoOutBytes);
    std::memcpy(echo_buf.data(), &out, 8);
    const uint64_t gpa = kDataGpa + 8192;
    // A buffer of any other size than the kernel's.
    for (size_t bytes : {size_t{0}, size_t{569}, size_t{571}, size_t{32764}, size_t{40000}}) {
        std::vector<uint8_t> b(bytes);
        EXPECT_EQ(launch(echo, b, bytes > VGPU_PAYLOAD_BYTES ? gpa : 0).status, VGPU_ERROR_INVALID_VALUE) << bytes;
    }
    // No address, or one outside guest RAM or running past its end.
    EXPECT_EQ(launch(echo, echo_buf, gpa, 4).status, VGPU_ERROR_INVALID_VALUE);
    for (uint64_t bad : {uint64_t{kRamBytes}, uint64_t{kRamBytes - 16}, ~uint64_t{0} - 8}) {
        Cmd c{.opcode = VGPU_OP_LAUNCH_KERNEL_PACKED,
              .args = {echo, 0, 1 | (1ull << 32), 1 | (1ull << 32), 1 | (1ull << 32), uint64_t{kEchoBufferBytes} << 32},
              .payload = bytes(bad)};
        EXPECT_EQ(rig.call(c).status, VGPU_ERROR_INVALID_VALUE) << bad;
    }
    // A small kernel's buffer longer than the payload says.
    std::vector<uint8_t> add_buf(28);
    Cmd c{.opcode = VGPU_OP_LAUNCH_KERNEL_PACKED,
          .args = {add, 0, 1 | (1ull << 32), 1 | (1ull << 32), 1 | (1ull << 32), 28ull << 32},
          .payload = add_buf,
          .payload_len = 20};
    EXPECT_EQ(rig.call(c).status, VGPU_ERROR_INVALID_VALUE);
    // Bad handles and shapes.
    EXPECT_EQ(launch(echo ^ (1ull << 32), echo_buf, gpa).status, VGPU_ERROR_INVALID_HANDLE);
    Cmd zero{.opcode = VGPU_OP_LAUNCH_KERNEL_PACKED,
             .args = {echo, 0, 0, 1 | (1ull << 32), 1 | (1ull << 32), uint64_t{kEchoBufferBytes} << 32},
             .payload = bytes(gpa)};
    EXPECT_EQ(rig.call(zero).status, VGPU_ERROR_INVALID_VALUE);
    // The device carries on (a worker was not replaced).
    EXPECT_EQ(launch(echo, echo_buf, gpa).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.dev->counters().recoveries, 0u);
}

INSTANTIATE_TEST_SUITE_P(Engines, PackedLaunch, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "worker" : "inline"; });

} // namespace
} // namespace kvmgpu::vgpu::test
