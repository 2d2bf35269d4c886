// A hostile guest (VM A) against the vGPU device model while another VM (B)
// lives in the same process with its own device, data and handles. Every
// attack must get an error status (or be harmless by construction, where
// the test says why), and afterwards both devices carry on: carry_on()
// runs a good round trip on A and checks B's memory, RAM and handles.
//
// Cases the vGPU's own suite already covers are not repeated here, only
// extended: see tests/unit/vgpu/ VgpuMemory.GuestRangesOutsideRamOrWrapping,
// .DevicePointersOutsideAllocations, .BadSgListsAreRefused, .InfoAndQuota;
// VgpuKernels.ModuleAndFunctionErrors, .LaunchPayloadErrors,
// .IllegalAddressIsStickyThenRecovered, .HandleTablesAreBounded;
// VgpuRing.ProducerTooFarAheadBreaksTheRingUntilReset; VgpuEnable.*;
// TwoVms.HandlesAndDevicePointersDoNotCross. Two-region RAM (holes) is in
// vgpu_attack_ram_test.cpp.
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>

#include "kvmtool-gpu/abi/platform_abi.h"
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

constexpr uint64_t kQuota = 1 << 20;
constexpr uint64_t kMaxModule = 4096;
constexpr uint32_t kMaxRing = 64;
constexpr uint64_t kBRamCanary = kDataGpa + 0x10000; // B's guest data that A must never reach
constexpr uint64_t kScratch = kDataGpa + 0x20000;    // A's and B's own scratch

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed ^ (i * 31) ^ (i >> 7));
    return v;
}

struct Attack : ::testing::Test {
    VgpuRig a{VgpuOptions{.max_ring = kMaxRing, .device_mem_quota = kQuota, .max_handles = 16,
                          .max_module_bytes = kMaxModule}};
    VgpuRig b{VgpuOptions{.device_mem_quota = kQuota, .max_handles = 16}};

    // B's belongings.
    uint64_t b_buf = 0, b_stream = 0, b_event = 0, b_module = 0, b_fn = 0, b_window = 0;
    const std::vector<uint8_t> b_canary = pattern(4096, 0x5B);

    void SetUp() override {
        ASSERT_EQ(a.enable(), VGPU_SUCCESS);
        ASSERT_EQ(b.enable(), VGPU_SUCCESS);
        b_buf = b.alloc(4096);
        b.put(kScratch, b_canary.data(), b_canary.size());
        ASSERT_EQ(b.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {b_buf, kScratch, 4096, 0}}).status, VGPU_SUCCESS);
        b.put(kBRamCanary, b_canary.data(), b_canary.size());
        b_stream = b.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}}).r0;
        b_event = b.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}}).r0;
        b_module = b.module_with("vector_add", &b_fn);
        const Done w = b.call({.opcode = VGPU_OP_GUEST_RAM_DEVICE_PTR, .args = {kBRamCanary, 4096}});
        ASSERT_EQ(w.status, VGPU_SUCCESS);
        b_window = w.r0;
    }

    // A still works, and B's memory, guest RAM and handles are untouched.
    void carry_on() {
        SCOPED_TRACE("carry_on");
        EXPECT_EQ(a.reg_read32(VGPU_REG_STATUS), VGPU_STATUS_ENABLED);
        const auto in = pattern(256, 0xA1);
        a.put(kScratch, in.data(), in.size());
        const Done d = a.call({.opcode = VGPU_OP_MEM_ALLOC, .args = {256}});
        ASSERT_EQ(d.status, VGPU_SUCCESS);
        EXPECT_EQ(a.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d.r0, kScratch, 256, 0}}).status, VGPU_SUCCESS);
        EXPECT_EQ(a.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kScratch + 4096, d.r0, 256, 0}}).status, VGPU_SUCCESS);
        std::vector<uint8_t> out(256);
        a.get(kScratch + 4096, out.data(), out.size());
        EXPECT_EQ(in, out);
        EXPECT_EQ(a.call({.opcode = VGPU_OP_MEM_FREE, .args = {d.r0}}).status, VGPU_SUCCESS);

        EXPECT_EQ(b.reg_read32(VGPU_REG_STATUS), VGPU_STATUS_ENABLED);
        std::vector<uint8_t> got(4096);
        ASSERT_EQ(b.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kScratch + 8192, b_buf, 4096, 0}}).status,
                  VGPU_SUCCESS);
        b.get(kScratch + 8192, got.data(), got.size());
        EXPECT_EQ(got, b_canary) << "B's device memory changed";
        b.get(kBRamCanary, got.data(), got.size());
        EXPECT_EQ(got, b_canary) << "B's guest RAM changed";
        EXPECT_EQ(b.call({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {b_stream}}).status, VGPU_SUCCESS);
        EXPECT_EQ(b.call({.opcode = VGPU_OP_EVENT_RECORD, .args = {b_event, b_stream}}).status, VGPU_SUCCESS);
        const Done f = b.call({.opcode = VGPU_OP_MODULE_GET_FUNCTION,
                               .args = {b_module},
                               .payload = std::vector<uint8_t>{'v', 'e', 'c', 't', 'o', 'r', '_', 'a', 'd', 'd'}});
        EXPECT_EQ(f.status, VGPU_SUCCESS);
        EXPECT_EQ(f.r0, b_fn);
        EXPECT_EQ(b.dev->counters().recoveries, 0u) << "B lost its context";
    }

    uint32_t a_status(const Cmd& c) { return a.call(c).status; }
    // ENABLE from raw register values, touching neither guest RAM nor the
    // rig's view of the ring (for rings that must be refused).
    uint32_t a_raw_enable(uint64_t gpa, uint32_t entries) {
        a.reg_write64(VGPU_REG_RING_GPA, gpa);
        a.reg_write32(VGPU_REG_RING_SIZE, entries);
        a.reg_write32(VGPU_REG_CONTROL, VGPU_CONTROL_ENABLE);
        return a.reg_read32(VGPU_REG_ERROR);
    }
    // Waits up to 2 s for A's status register to read `want`.
    bool a_status_becomes(uint32_t want) {
        for (int i = 0; i < 2000; ++i) {
            if (a.reg_read32(VGPU_REG_STATUS) == want) return true;
            usleep(1000);
        }
        return false;
    }
};

// ---- addresses and lengths ---------------------------------------------

TEST_F(Attack, GuestPhysicalAddressesOutsideRam) {
    const uint64_t d = a.alloc(8192);
    const uint64_t outside[] = {kRamBytes, kRamBytes + 4096, KVMGPU_MMIO_BASE, KVMGPU_VGPU_GPA,
                                KVMGPU_MAX_RAM - 8, 1ull << 52, 1ull << 63, ~0ull - 15};
    for (uint64_t gpa : outside) {
        SCOPED_TRACE(gpa);
        EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, gpa, 16, 0}}), VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {gpa, d, 16, 0}}), VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {gpa, d, 16, 0}, .flags = VGPU_CMD_FLAG_ASYNC}),
                  VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(a_status({.opcode = VGPU_OP_MODULE_LOAD_DATA, .args = {gpa, 16}}), VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(a_status({.opcode = VGPU_OP_GUEST_RAM_DEVICE_PTR, .args = {gpa, 16}}), VGPU_ERROR_INVALID_VALUE);
        // The SG list itself outside RAM, then a list inside RAM naming it.
        EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_DTOH_SG, .args = {d, gpa, 1, 0, VGPU_SG_COALESCE}}),
                  VGPU_ERROR_INVALID_VALUE);
        const vgpu_sg_entry e{gpa, 16};
        a.put(kScratch, &e, sizeof e);
        for (uint64_t how = 0; how < VGPU_SG_STRATEGY_COUNT_; ++how)
            EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_DTOH_SG, .args = {d, kScratch, 1, 0, how, 16}}),
                      VGPU_ERROR_INVALID_VALUE)
                << "strategy " << how;
    }
    // A ring placed outside RAM is refused at ENABLE; the old one is gone
    // after RESET, the good one works again.
    a.reset();
    for (uint64_t gpa : std::initializer_list<uint64_t>{kRamBytes, KVMGPU_VGPU_GPA, kRamBytes - 4096, 1ull << 63})
        EXPECT_EQ(a_raw_enable(gpa, 16), VGPU_ERROR_INVALID_VALUE) << gpa;
    EXPECT_EQ(a.reg_read32(VGPU_REG_STATUS), 0u);
    ASSERT_EQ(a.enable(), VGPU_SUCCESS);
    carry_on();
}

TEST_F(Attack, LengthsThatWrap) {
    const uint64_t d = a.alloc(8192);
    const uint64_t to_2_64 = 0 - kScratch; // kScratch + this == 2^64 == 0
    for (uint64_t len : std::initializer_list<uint64_t>{to_2_64, to_2_64 + 16, ~0ull, 1ull << 63}) {
        SCOPED_TRACE(len);
        EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kScratch, len, 0}}), VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kScratch, d, len, 0}}), VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_DTOD, .args = {d, d, len, 0}}), VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMSET_D8, .args = {d, 0, len, 0}}), VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMSET_D32, .args = {d, 0, len, 0}}), VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(a_status({.opcode = VGPU_OP_GUEST_RAM_DEVICE_PTR, .args = {kScratch, len}}), VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(a_status({.opcode = VGPU_OP_MODULE_LOAD_DATA, .args = {kScratch, len}}), VGPU_ERROR_INVALID_VALUE);
        // dptr + len wrapping from just below 2^64.
        EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {~0ull - 7, kScratch, 16, 0}}),
                  VGPU_ERROR_INVALID_VALUE);
    }
    // SG entries whose gpa + len wraps, and a list whose count * 16 would.
    const vgpu_sg_entry wraps[] = {{kScratch, 0 - kScratch}, {~0ull, 2}, {kScratch + 64, ~0ull}};
    for (const auto& e : wraps) {
        a.put(kScratch, &e, sizeof e);
        EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD_SG, .args = {d, kScratch, 1, 0, VGPU_SG_PER_CHUNK}}),
                  VGPU_ERROR_INVALID_VALUE);
    }
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD_SG, .args = {d, kScratch, 1ull << 60, 0, 0}}),
              VGPU_ERROR_INVALID_VALUE);
    // Kernel sizes: n = 2^32 - 1 over a huge grid, on a small allocation. The
    // CPU kernel's range check fails like a GPU's would: ILLEGAL_ADDRESS,
    // which is sticky (A's context is re-created; B's is not touched).
    uint64_t fn;
    a.module_with("vector_add", &fn);
    const std::vector<std::vector<uint8_t>> p = {bytes(d), bytes(d), bytes(d), bytes(uint32_t{0xFFFFFFFF})};
    EXPECT_EQ(a.launch(fn, p, 0xFFFFFFFF, 1, 1024, 1).status, VGPU_ERROR_INVALID_VALUE); // grid x >= 2^31, as a GPU says
    EXPECT_EQ(a.launch(fn, p, 0x7FFFFFFF, 1, 1024, 1).status, VGPU_ERROR_ILLEGAL_ADDRESS);
    // Ring sizes whose byte size would be huge.
    a.reset();
    for (uint32_t n : {0x80000000u, 0xFFFFFFFFu, 1u << 20}) EXPECT_EQ(a_raw_enable(kRingGpa, n), VGPU_ERROR_INVALID_VALUE);
    ASSERT_EQ(a.enable(), VGPU_SUCCESS);
    carry_on();
}

// ---- the ring ------------------------------------------------------------

TEST_F(Attack, RingIndicesBeyondTheRing) {
    ASSERT_EQ(a_status({.opcode = VGPU_OP_NOP}), VGPU_SUCCESS); // consumer is 1
    // Producer far ahead, behind the consumer (a huge unsigned distance), and
    // at the half-way point of the index space: each breaks the ring at once,
    // nothing of the garbage runs, and only RESET recovers.
    for (uint32_t producer : {1u + kRingEntries + 1, 0u, 0x80000001u, 0xFFFFFFFFu}) {
        SCOPED_TRACE(producer);
        a.set_producer(producer);
        a.doorbell();
        ASSERT_TRUE(a_status_becomes(VGPU_STATUS_BROKEN));
        EXPECT_EQ(a.reg_read32(VGPU_REG_ERROR), VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(a.consumer(), 1u);
        // B is not held up by A's broken ring.
        EXPECT_EQ(b.call({.opcode = VGPU_OP_NOP}).status, VGPU_SUCCESS);
        a.reset();
        ASSERT_EQ(a.enable(), VGPU_SUCCESS);
        ASSERT_EQ(a_status({.opcode = VGPU_OP_NOP}), VGPU_SUCCESS);
    }
    // Exactly a full ring of garbage is legal: every slot runs once, each
    // gets its error, and the consumer lands on the producer.
    const uint32_t start = a.consumer();
    std::vector<uint64_t> seqs;
    for (uint32_t i = 0; i < kRingEntries; ++i)
        seqs.push_back(a.post({.opcode = static_cast<uint16_t>(0xFF00 + i), .flags = 0xFFFF, .payload_len = 0x7FFFFFFF}));
    a.doorbell();
    for (uint64_t s : seqs) EXPECT_NE(a.wait(s).status, VGPU_SUCCESS);
    EXPECT_EQ(a.consumer(), start + kRingEntries);
    // The guest scribbling the device's consumer word changes nothing: the
    // device keeps its own count and writes it back.
    *reinterpret_cast<volatile uint32_t*>(a.host_ptr(kRingGpa) + offsetof(vgpu_ring_header, consumer)) = 12345;
    EXPECT_EQ(a_status({.opcode = VGPU_OP_NOP}), VGPU_SUCCESS);
    EXPECT_EQ(a.consumer(), start + kRingEntries + 1);
    carry_on();
}

TEST_F(Attack, RingLargerThanMaxRing) {
    EXPECT_EQ(a.reg_read32(VGPU_REG_MAX_RING), kMaxRing);
    a.reset();
    for (uint32_t n : {kMaxRing * 2, 4096u, 1u << 16, 1u << 31})
        EXPECT_EQ(a_raw_enable(kRingGpa, n), VGPU_ERROR_INVALID_VALUE) << n;
    EXPECT_EQ(a.reg_read32(VGPU_REG_STATUS), 0u);
    ASSERT_EQ(a.enable(kRingGpa, kMaxRing), VGPU_SUCCESS); // the limit itself is fine
    EXPECT_EQ(a_status({.opcode = VGPU_OP_NOP}), VGPU_SUCCESS);
    a.reset();
    ASSERT_EQ(a.enable(), VGPU_SUCCESS);
    carry_on();
}

// The ABI has no descriptor chains: a scatter-gather list is a flat array
// with an explicit count (<= VGPU_MAX_SG_ENTRIES), read once, so it cannot
// loop. What a guest can do is repeat entries, and point lists and entries
// at the ring itself or at the list being read.
TEST_F(Attack, ScatterGatherListsThatRepeatOrPointIntoTheRing) {
    const uint64_t d = a.alloc(256 << 10);
    // 2^18 entries naming the same byte: bounded work, and refused when the
    // total exceeds the allocation (1 byte more).
    constexpr uint64_t kN = 1 << 18;
    const uint64_t list = kDataGpa + (1 << 20);
    std::vector<vgpu_sg_entry> same(kN, vgpu_sg_entry{kScratch, 1});
    a.put(list, same.data(), same.size() * sizeof(vgpu_sg_entry));
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_DTOH_SG, .args = {d, list, kN, 0, VGPU_SG_PER_CHUNK}}), VGPU_SUCCESS);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD_SG, .args = {d, list, kN, 0, VGPU_SG_BOUNCE}}), VGPU_SUCCESS);
    same.push_back({kScratch, 1});
    a.put(list, same.data(), same.size() * sizeof(vgpu_sg_entry));
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD_SG, .args = {d, list, kN + 1, 0, VGPU_SG_COALESCE}}),
              VGPU_ERROR_INVALID_VALUE);
    // Unbounded work would show as the ctest time-out, not as a timing assertion.

    // The list inside the ring (a payload slot), its entries naming the
    // ring's descriptors and completions: copies into the ring are the
    // guest's own business; the device works from its copies, so the
    // command completes and the next one runs.
    const uint64_t ring_end = kRingGpa + vgpu_ring_bytes(kRingEntries);
    const uint64_t payload7 = kRingGpa + vgpu_payload_offset(kRingEntries, 7);
    const vgpu_sg_entry into_ring[] = {{kRingGpa + vgpu_command_offset(9), 64 * 4},
                                       {kRingGpa + vgpu_completion_offset(kRingEntries, 9), 32 * 4},
                                       {payload7, 32}};
    a.put(payload7, into_ring, sizeof into_ring);
    std::vector<uint8_t> ee(4096, 0xEE); // seq 0xEEEE...: never one the rig waits for
    a.put(kScratch, ee.data(), ee.size());
    ASSERT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kScratch, 4096, 0}}), VGPU_SUCCESS);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_DTOH_SG, .args = {d, payload7, 3, 0, VGPU_SG_COALESCE}}), VGPU_SUCCESS);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD_SG, .args = {d, kRingGpa, 3, 0, VGPU_SG_BATCH}}),
              VGPU_ERROR_INVALID_VALUE); // the header read as a list: garbage entries
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kRingGpa, ring_end - kRingGpa, 0}}), VGPU_SUCCESS);
    // A list whose entries overwrite the list itself while it is in use.
    const vgpu_sg_entry self[] = {{kScratch, 32}, {kScratch + 32, 4064}};
    a.put(kScratch, self, sizeof self);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_DTOH_SG, .args = {d, kScratch, 2, 0, VGPU_SG_BOUNCE}}), VGPU_SUCCESS);
    carry_on();

    // The device made to overwrite the guest's own producer index: the ring
    // breaks (the guest's doing), RESET recovers it.
    a.put(kScratch, ee.data(), ee.size());
    ASSERT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kScratch, 4096, 0}}), VGPU_SUCCESS);
    const vgpu_sg_entry header{kRingGpa, 64}; // producer := 0xEEEEEEEE
    a.put(kScratch, &header, sizeof header);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_DTOH_SG, .args = {d, kScratch, 1, 0, VGPU_SG_COALESCE}}), VGPU_SUCCESS);
    EXPECT_TRUE(a_status_becomes(VGPU_STATUS_BROKEN));
    EXPECT_EQ(b.call({.opcode = VGPU_OP_NOP}).status, VGPU_SUCCESS);
    a.reset();
    ASSERT_EQ(a.enable(), VGPU_SUCCESS);
    carry_on();
}

// ---- handles and device pointers -------------------------------------------

TEST_F(Attack, HandlesNeverIssuedOrAlreadyFreed) {
    uint64_t fn;
    const uint64_t m = a.module_with("vector_add", &fn);
    const uint64_t s = a.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}}).r0;
    const uint64_t e = a.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}}).r0;
    const uint64_t d = a.alloc(4096);
    // Forged numbers: each kind's tag with slots and generations never issued.
    std::vector<uint64_t> bad;
    for (uint64_t kind : {0x4dull, 0x46ull, 0x53ull, 0x45ull, 0x00ull, 0xFFull})
        for (uint64_t low : {1ull, 2ull, 16ull, 0xFFFFFFFFull}) bad.push_back(kind << 56 | 0x123456ull << 32 | low);
    bad.push_back(~0ull);
    bad.push_back(1);
    // Issued ones, used as the wrong kind.
    const uint64_t wrong_kind[] = {m, fn, s, e, d};

    auto expect_refused = [&](uint64_t h, bool is_right_kind_for_stream) {
        SCOPED_TRACE(h);
        if (!is_right_kind_for_stream) {
            EXPECT_EQ(a_status({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {h}}), VGPU_ERROR_INVALID_HANDLE);
            EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kScratch, 16, h}}), VGPU_ERROR_INVALID_HANDLE);
            EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMSET_D8, .args = {d, 0, 16, h}}), VGPU_ERROR_INVALID_HANDLE);
            EXPECT_EQ(a_status({.opcode = VGPU_OP_EVENT_RECORD, .args = {e, h}}), VGPU_ERROR_INVALID_HANDLE);
        }
        if (h != e) {
            EXPECT_EQ(a_status({.opcode = VGPU_OP_EVENT_SYNCHRONIZE, .args = {h}}), VGPU_ERROR_INVALID_HANDLE);
            EXPECT_EQ(a_status({.opcode = VGPU_OP_EVENT_ELAPSED_TIME, .args = {h, h}}), VGPU_ERROR_INVALID_HANDLE);
        }
        if (h != m) {
            EXPECT_EQ(a_status({.opcode = VGPU_OP_MODULE_GET_FUNCTION, .args = {h}, .payload = {'x'}}),
                      VGPU_ERROR_INVALID_HANDLE);
        }
        if (h != fn) {
            EXPECT_EQ(a.launch(h, {}, 1, 1, 1, 1).status, VGPU_ERROR_INVALID_HANDLE);
        }
        if (h != d) {
            EXPECT_EQ(a_status({.opcode = VGPU_OP_MEM_FREE, .args = {h}}), VGPU_ERROR_INVALID_VALUE);
        }
    };
    for (uint64_t h : bad) expect_refused(h, false);
    for (uint64_t h : wrong_kind) expect_refused(h, h == s);

    // Made before d goes: the host backend reuses a freed address (as a GPU
    // does), and this one must not be d's.
    const uint64_t live = a.alloc(64);
    // Freed: each handle goes stale the moment it is destroyed.
    ASSERT_EQ(a_status({.opcode = VGPU_OP_STREAM_DESTROY, .args = {s}}), VGPU_SUCCESS);
    ASSERT_EQ(a_status({.opcode = VGPU_OP_EVENT_DESTROY, .args = {e}}), VGPU_SUCCESS);
    ASSERT_EQ(a_status({.opcode = VGPU_OP_MEM_FREE, .args = {d}}), VGPU_SUCCESS);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {s}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_STREAM_DESTROY, .args = {s}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_EVENT_RECORD, .args = {e, 0}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kScratch, 16, 0}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEM_FREE, .args = {d}}), VGPU_ERROR_INVALID_VALUE);
    // A new stream reuses the slot under a new number; the old one stays dead.
    const uint64_t s2 = a.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}}).r0;
    EXPECT_NE(s2, s);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {s}}), VGPU_ERROR_INVALID_HANDLE);
    // A freed allocation as a kernel argument: the kernel faults.
    const std::vector<std::vector<uint8_t>> p = {bytes(live), bytes(live), bytes(d), bytes(uint32_t{4})};
    EXPECT_EQ(a.launch(fn, p, 1, 1, 4, 1).status, VGPU_ERROR_ILLEGAL_ADDRESS);
    // Everything from before RESET is stale after it.
    a.module_with("vector_add", &fn);
    a.reset();
    ASSERT_EQ(a.enable(), VGPU_SUCCESS);
    EXPECT_EQ(a.launch(fn, {}, 1, 1, 1, 1).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {s2}}), VGPU_ERROR_INVALID_HANDLE);
    carry_on();
}

TEST_F(Attack, AnotherVmsHandlesAndDevicePointers) {
    const uint64_t d = a.alloc(4096);
    // B's device memory, as every kind of device argument.
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {b_buf, kScratch, 16, 0}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kScratch, b_buf, 16, 0}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_DTOD, .args = {d, b_buf, 16, 0}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_DTOD, .args = {b_buf, d, 16, 0}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMSET_D8, .args = {b_buf, 0, 16, 0}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMSET_D32, .args = {b_buf, 0, 4, 0}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEM_FREE, .args = {b_buf}}), VGPU_ERROR_INVALID_VALUE);
    const vgpu_sg_entry e{kScratch, 16};
    a.put(kScratch + 64, &e, sizeof e);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD_SG, .args = {b_buf, kScratch + 64, 1, 0, 0}}),
              VGPU_ERROR_INVALID_VALUE);
    // B's zero-copy window onto B's guest RAM.
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_DTOD, .args = {b_window, d, 16, 0}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kScratch, b_window, 16, 0}}), VGPU_ERROR_INVALID_VALUE);
    // B's handles.
    EXPECT_EQ(a_status({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {b_stream}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_STREAM_DESTROY, .args = {b_stream}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kScratch, 16, b_stream}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_EVENT_RECORD, .args = {b_event, 0}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_EVENT_DESTROY, .args = {b_event}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MODULE_UNLOAD, .args = {b_module}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MODULE_GET_FUNCTION, .args = {b_module}, .payload = {'v'}}),
              VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a.launch(b_fn, {}, 1, 1, 1, 1).status, VGPU_ERROR_INVALID_HANDLE);
    // A's own kernel handed B's device memory, B's RAM window, or a raw host
    // pointer into B's guest RAM: each faults in A (ILLEGAL_ADDRESS, sticky
    // for A only), never touches B.
    const uint64_t b_host = reinterpret_cast<uint64_t>(b.host_ptr(kBRamCanary));
    for (uint64_t target : {b_buf, b_window, b_host}) {
        SCOPED_TRACE(target);
        for (int all_three = 0; all_three < 2; ++all_three) {
            uint64_t fn; // made again each time: the fault drops all of A's objects
            a.module_with("vector_add", &fn);
            const uint64_t mine = all_three ? target : a.alloc(64);
            const std::vector<std::vector<uint8_t>> p = {bytes(mine), bytes(mine), bytes(target), bytes(uint32_t{16})};
            EXPECT_EQ(a.launch(fn, p, 1, 1, 16, 1).status, VGPU_ERROR_ILLEGAL_ADDRESS);
        }
    }
    carry_on();
}

// A stream's access policy window names device memory to the driver: never
// B's buffer or B's RAM window; B's streams and graphs are not A's to read,
// clone or ask about.
TEST_F(Attack, StreamWindowsAndGraphShapesOfAnotherVm) {
    const uint64_t s = a.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}}).r0;
    auto window = [&](uint64_t stream, uint64_t base) {
        const float ratio = 1.0f;
        vgpu_args_stream_attribute w{stream, VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW, {base, 256, 0, 2, 0, 0}};
        std::memcpy(&w.v.hit_ratio_bits, &ratio, sizeof ratio);
        Cmd cmd{.opcode = VGPU_OP_STREAM_SET_ATTRIBUTE, .args = std::vector<uint64_t>(6)};
        std::memcpy(cmd.args.data(), &w, sizeof w);
        return a_status(cmd);
    };
    EXPECT_EQ(window(s, b_buf), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(window(0, b_buf), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(window(s, b_window), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(window(b_stream, b_buf), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_STREAM_GET_ATTRIBUTE, .args = {b_stream, VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW}}),
              VGPU_ERROR_INVALID_HANDLE);
    const uint64_t bg = b.call({.opcode = VGPU_OP_GRAPH_CREATE, .args = {0}}).r0;
    const uint64_t bn = b.call({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {bg}}).r0;
    const uint64_t bclone = b.call({.opcode = VGPU_OP_GRAPH_CLONE, .args = {bg}}).r0;
    ASSERT_NE(bclone, 0u);
    const uint64_t ag = a.call({.opcode = VGPU_OP_GRAPH_CREATE, .args = {0}}).r0;
    const uint64_t aclone = a.call({.opcode = VGPU_OP_GRAPH_CLONE, .args = {ag}}).r0;
    EXPECT_EQ(a_status({.opcode = VGPU_OP_GRAPH_CLONE, .args = {bg}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_GRAPH_NODE_FIND_IN_CLONE, .args = {bclone, bn}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_GRAPH_NODE_FIND_IN_CLONE, .args = {aclone, bn}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_GRAPH_NODE_GET_TYPE, .args = {bn}}), VGPU_ERROR_INVALID_HANDLE);
    for (uint64_t kind = 0; kind < 4; ++kind)
        EXPECT_EQ(a_status({.opcode = VGPU_OP_GRAPH_EDGES, .args = {kind % 3 == 0 ? bg : bn, 0, kind}}),
                  VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(b.call({.opcode = VGPU_OP_GRAPH_NODE_GET_TYPE, .args = {bn}}).r0, 5u); // B's node still B's
    carry_on();
}

// An event node names an event to the driver: never B's; B's graphs,
// nodes and execs are not A's to add to, change, switch off or ask about.
TEST_F(Attack, EventNodesAndEnablingOfAnotherVm) {
    const uint64_t bg = b.call({.opcode = VGPU_OP_GRAPH_CREATE, .args = {0}}).r0;
    const uint64_t brec = b.call({.opcode = VGPU_OP_GRAPH_ADD_EVENT_NODE, .args = {bg, b_event, 0}}).r0;
    const uint64_t bset = b.call({.opcode = VGPU_OP_GRAPH_ADD_MEMSET_NODE, .args = {bg, b_buf, 0, 4, 4}}).r0;
    const uint64_t bexec = b.call({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {bg, 0}}).r0;
    ASSERT_NE(bexec, 0u);
    const uint64_t ag = a.call({.opcode = VGPU_OP_GRAPH_CREATE, .args = {0}}).r0;
    const uint64_t aev = a.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}}).r0;
    const uint64_t arec = a.call({.opcode = VGPU_OP_GRAPH_ADD_EVENT_NODE, .args = {ag, aev, 0}}).r0;
    const uint64_t aexec = a.call({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {ag, 0}}).r0;
    ASSERT_NE(aexec, 0u);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_GRAPH_ADD_EVENT_NODE, .args = {ag, b_event, 0}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_GRAPH_ADD_EVENT_NODE, .args = {bg, aev, 1}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT, .args = {0, arec, b_event, 0}}),
              VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT, .args = {0, brec, aev, 0}}),
              VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT, .args = {bexec, arec, aev, 0}}),
              VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_GRAPH_EVENT_NODE_GET_EVENT, .args = {brec, 0}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_GRAPH_NODE_SET_ENABLED, .args = {bexec, bset, 0}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_GRAPH_NODE_SET_ENABLED, .args = {aexec, bset, 0}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_GRAPH_NODE_GET_ENABLED, .args = {bexec, bset}}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_GRAPH_EXEC_GET_FLAGS, .args = {bexec}}), VGPU_ERROR_INVALID_HANDLE);
    // B's node still records B's event, its memset still on.
    EXPECT_EQ(b.call({.opcode = VGPU_OP_GRAPH_EVENT_NODE_GET_EVENT, .args = {brec, 0}}).r0, b_event);
    EXPECT_EQ(b.call({.opcode = VGPU_OP_GRAPH_NODE_GET_ENABLED, .args = {bexec, bset}}).r0, 1u);
    carry_on();
}

// ---- limits ----------------------------------------------------------------

TEST_F(Attack, AllocationRequestsPastTheQuota) {
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEM_ALLOC, .args = {kQuota + 1}}), VGPU_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEM_ALLOC, .args = {1ull << 63}}), VGPU_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEM_ALLOC, .args = {~0ull}}), VGPU_ERROR_OUT_OF_MEMORY);
    // Three of 300 KiB fit, the fourth does not: the sum counts, not the size.
    std::vector<uint64_t> held;
    for (int i = 0; i < 3; ++i) held.push_back(a.alloc(300 << 10));
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEM_ALLOC, .args = {300 << 10}}), VGPU_ERROR_OUT_OF_MEMORY);
    const Done info = a.call({.opcode = VGPU_OP_MEM_GET_INFO});
    EXPECT_EQ(info.r0, kQuota - 3 * (300 << 10));
    EXPECT_EQ(info.r1, kQuota);
    // B's quota is its own: A's exhaustion does not shrink it.
    const Done b_info = b.call({.opcode = VGPU_OP_MEM_GET_INFO});
    EXPECT_EQ(b_info.r0, kQuota - 4096);
    const uint64_t big = b.alloc(kQuota - 4096);
    EXPECT_EQ(b.call({.opcode = VGPU_OP_MEM_FREE, .args = {big}}).status, VGPU_SUCCESS);
    // The count limit (max_handles allocations) holds with tiny requests too.
    for (int i = 3; i < 16; ++i) held.push_back(a.alloc(1));
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MEM_ALLOC, .args = {1}}), VGPU_ERROR_OUT_OF_MEMORY);
    for (uint64_t d : held) EXPECT_EQ(a_status({.opcode = VGPU_OP_MEM_FREE, .args = {d}}), VGPU_SUCCESS);
    EXPECT_EQ(a.host->live_allocations(), 0u);
    carry_on();
}

TEST_F(Attack, HandleTablesFillUpPerVm) {
    // Modules and functions (streams and events: VgpuKernels.HandleTablesAreBounded).
    for (int i = 0; i < 16; ++i) {
        a.put(kScratch, kHostModulePtx, kHostModulePtxBytes);
        ASSERT_EQ(a_status({.opcode = VGPU_OP_MODULE_LOAD_DATA, .args = {kScratch, kHostModulePtxBytes}}), VGPU_SUCCESS)
            << i;
    }
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MODULE_LOAD_DATA, .args = {kScratch, kHostModulePtxBytes}}),
              VGPU_ERROR_OUT_OF_MEMORY);
    // B can still make all of its own.
    for (int i = 0; i < 15; ++i) ASSERT_EQ(b.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}}).status, VGPU_SUCCESS);
    a.reset(); // frees A's modules
    ASSERT_EQ(a.enable(), VGPU_SUCCESS);
    carry_on();
}

TEST_F(Attack, ModuleImageLargerThanMaxModuleBytes) {
    const auto image = pattern(kMaxModule + 1, 3);
    a.put(kScratch, image.data(), image.size());
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MODULE_LOAD_DATA, .args = {kScratch, kMaxModule + 1}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MODULE_LOAD_DATA, .args = {kScratch, 1ull << 40}}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MODULE_LOAD_DATA, .args = {kRamBytes - 16, kMaxModule}}),
              VGPU_ERROR_INVALID_VALUE);
    // Junk of an allowed size is no image, as the driver says.
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MODULE_LOAD_DATA, .args = {kScratch, kMaxModule}}), VGPU_ERROR_INVALID_IMAGE);
    // A fatbin header over the junk, filling the limit itself.
    const struct {
        uint32_t magic = 0xBA55ED50u;
        uint16_t version = 1, header_bytes = 16;
        uint64_t payload_bytes = kMaxModule - 16;
    } fatbin_header;
    a.put(kScratch, &fatbin_header, sizeof fatbin_header);
    const Done ok = a.call({.opcode = VGPU_OP_MODULE_LOAD_DATA, .args = {kScratch, kMaxModule}});
    EXPECT_EQ(ok.status, VGPU_SUCCESS);
    EXPECT_EQ(a_status({.opcode = VGPU_OP_MODULE_UNLOAD, .args = {ok.r0}}), VGPU_SUCCESS);
    carry_on();
}

// ---- the register block ------------------------------------------------------

TEST_F(Attack, EveryRegisterOffsetAndWidth) {
    // Writes of garbage at every offset of the first page with every width
    // (the second page is the doorbell: any write there is a kick). The
    // staged RING_GPA/RING_SIZE may change; the running ring does not.
    const uint8_t junk[8] = {0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5};
    for (uint64_t off = 0; off < 0x100; ++off)
        for (size_t w : {1, 2, 3, 4, 5, 7, 8}) a.dev->write(off, {junk, w});
    a.dev->write(0xFFC, {junk, 8}); // straddles into the doorbell page
    for (uint64_t off = VGPU_DOORBELL_OFFSET; off < KVMGPU_VGPU_SIZE; off += 0x3FF) a.dev->write(off, {junk, 3});
    a.dev->write(KVMGPU_VGPU_SIZE, {junk, 8}); // past the block (the bus would not route it)
    a.dev->write(~0ull - 3, {junk, 4});
    EXPECT_EQ(a.reg_read32(VGPU_REG_STATUS), VGPU_STATUS_ENABLED);
    EXPECT_EQ(a.reg_read32(VGPU_REG_ERROR), VGPU_ERROR_INVALID_VALUE); // CONTROL got unknown bits
    EXPECT_EQ(a_status({.opcode = VGPU_OP_NOP}), VGPU_SUCCESS);
    // Reads anywhere, any width up to 8: the bytes of the block or zeros.
    uint8_t buf[8];
    for (uint64_t off = 0; off < KVMGPU_VGPU_SIZE; off += 3)
        for (size_t w : {1, 2, 4, 8}) a.dev->read(off, {buf, w});
    a.dev->read(~0ull - 7, {buf, 8});
    // Read-only registers ignore writes.
    a.reg_write32(VGPU_REG_MAGIC, 0);
    a.reg_write32(VGPU_REG_STATUS, 0);
    a.reg_write32(VGPU_REG_MAX_RING, 1u << 20);
    EXPECT_EQ(a.reg_read32(VGPU_REG_MAGIC), VGPU_MAGIC);
    EXPECT_EQ(a.reg_read32(VGPU_REG_STATUS), VGPU_STATUS_ENABLED);
    EXPECT_EQ(a.reg_read32(VGPU_REG_MAX_RING), kMaxRing);
    // ENABLE|RESET together: reset first, then enable from the staged
    // (garbage) registers, which is refused; a clean ENABLE works.
    a.reg_write32(VGPU_REG_CONTROL, VGPU_CONTROL_ENABLE | VGPU_CONTROL_RESET);
    EXPECT_EQ(a.reg_read32(VGPU_REG_STATUS), 0u);
    EXPECT_EQ(a.reg_read32(VGPU_REG_ERROR), VGPU_ERROR_INVALID_VALUE);
    ASSERT_EQ(a.enable(), VGPU_SUCCESS);
    // A doorbell storm with nothing published.
    for (int i = 0; i < 10000; ++i) a.reg_write32(VGPU_DOORBELL_OFFSET, static_cast<uint32_t>(i));
    carry_on();
}

} // namespace
} // namespace kvmgpu::vgpu::test

namespace kvmgpu::vgpu::test {
namespace {

// ---- teardown --------------------------------------------------------------

// A guest that fills its ring with slow commands must not hold the VMM's
// teardown for all of them: stop() (the VM is over, e.g. its watchdog
// fired) lets the command in hand finish and drops the rest. Matmuls of
// n = 384 on the host backend take tens of milliseconds each; a full
// ring of them, seconds.
TEST(AttackTeardown, StopDoesNotRunTheRestOfAFullRing) {
    VgpuRig rig;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    uint64_t fn;
    rig.module_with("matmul", &fn);
    const uint32_t n = 384;
    const uint64_t d = rig.alloc(uint64_t{n} * n * 4);
    Cmd launch = rig.launch_cmd(fn, std::vector<std::vector<uint8_t>>{bytes(d), bytes(d), bytes(d), bytes(n)}, {24, 24, 1},
                                {16, 16, 1});
    launch.flags = VGPU_CMD_FLAG_ASYNC;
    for (uint32_t i = 0; i < kRingEntries; ++i) rig.post(launch);
    const uint32_t before = rig.consumer();
    rig.doorbell();
    while (rig.consumer() == before) std::this_thread::yield(); // the first one is done
    rig.dev->stop();
    EXPECT_LT(rig.consumer() - before, kRingEntries) << "stop() ran the whole ring first";
}


// On the host backend a kernel is CPU work in the executor: one the size a
// GPU finishes in a second would take the CPU hours (and the VM's teardown
// would wait for it). Beyond 2^36 multiply-adds the launch is refused at
// once with CUDA_ERROR_LAUNCH_TIMEOUT (702), as a GPU watchdog would.
TEST(AttackTeardown, HostBackendRefusesAKernelTooBigForACpu) {
    VgpuRig rig(VgpuOptions{.device_mem_quota = 256ull << 20});
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    uint64_t fn;
    rig.module_with("matmul", &fn);
    const uint32_t n = 4200; // 4200^3 = 7.4e10 > 2^36; b spans n*n floats = 70.6 MB (never touched)
    const uint64_t d = rig.alloc(72ull << 20);
    const std::vector<std::vector<uint8_t>> p = {bytes(d), bytes(d), bytes(d), bytes(n)};
    EXPECT_EQ(rig.launch(fn, p, 263, 263, 16, 16).status, 702u); // refused up front: running it takes hours
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_NOP}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.dev->counters().recoveries, 0u); // not sticky
}

} // namespace
} // namespace kvmgpu::vgpu::test
