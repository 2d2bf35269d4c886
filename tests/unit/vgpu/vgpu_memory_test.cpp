// Device memory through the ring: allocation and quota, copies (contiguous
// and scatter-gather with every strategy), memset, zero-copy addresses, and
// each way a guest can get a range wrong.
#include <algorithm>
#include <numeric>
#include <random>

#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

struct VgpuMemory : ::testing::Test {
    VgpuRig rig{VgpuOptions{.device_mem_quota = 2ull << 20, .max_handles = 64}};
    void SetUp() override { ASSERT_EQ(rig.enable(), VGPU_SUCCESS); }
    std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
        std::vector<uint8_t> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
        return v;
    }
};

TEST_F(VgpuMemory, AllocCopyBothWaysFree) {
    const uint64_t d = rig.alloc(64 << 10);
    const auto in = pattern(64 << 10, 3);
    rig.put(kDataGpa, in.data(), in.size());
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kDataGpa, in.size(), 0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa + (1 << 20), d, in.size(), 0}}).status,
              VGPU_SUCCESS);
    std::vector<uint8_t> out(in.size());
    rig.get(kDataGpa + (1 << 20), out.data(), out.size());
    EXPECT_EQ(in, out);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {d}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {d}}).status, VGPU_ERROR_INVALID_VALUE); // twice
    const auto c = rig.dev->counters();
    EXPECT_EQ(c.bytes_htod, in.size());
    EXPECT_EQ(c.bytes_dtoh, in.size());
}

TEST_F(VgpuMemory, AsyncCopyAndDeviceToDevice) {
    const uint64_t a = rig.alloc(4096), b = rig.alloc(4096);
    const auto in = pattern(4096, 9);
    rig.put(kDataGpa, in.data(), in.size());
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {a, kDataGpa, 4096, 0}, .flags = VGPU_CMD_FLAG_ASYNC})
                  .status,
              VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOD, .args = {b + 100, a, 1000, 0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_CTX_SYNCHRONIZE}).status, VGPU_SUCCESS);
    std::vector<uint8_t> out(1000);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa + 8192, b + 100, 1000, 0}}).status, VGPU_SUCCESS);
    rig.get(kDataGpa + 8192, out.data(), out.size());
    EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin()));
}

TEST_F(VgpuMemory, MemsetD8AndD32) {
    const uint64_t d = rig.alloc(4096);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {d, 0xAB, 4096, 0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D32, .args = {d + 8, 0x11223344, 2, 0}}).status, VGPU_SUCCESS);
    uint8_t out[24];
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, d, 24, 0}}).status, VGPU_SUCCESS);
    rig.get(kDataGpa, out, sizeof out);
    const uint8_t want[24] = {0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0x44, 0x33, 0x22, 0x11,
                              0x44, 0x33, 0x22, 0x11, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB};
    EXPECT_EQ(0, std::memcmp(out, want, sizeof want));
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D32, .args = {d + 2, 1, 1, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {d, 0x100, 1, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D32, .args = {d, 0, 1025, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D32, .args = {d, 0, 1ull << 62, 0}}).status, VGPU_ERROR_INVALID_VALUE);
}

TEST_F(VgpuMemory, InfoAndQuota) {
    Done info = rig.call({.opcode = VGPU_OP_MEM_GET_INFO});
    ASSERT_EQ(info.status, VGPU_SUCCESS);
    EXPECT_EQ(info.r0, 2u << 20);
    EXPECT_EQ(info.r1, 2u << 20);
    // The device's memory is the GPU's (the host backend's pretend size);
    // what this VM may allocate is cuMemGetInfo's.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_DEVICE_TOTAL_MEM, .args = {0}}).r0, HostBackendOptions{}.total_bytes);
    rig.alloc(1536 << 10);
    info = rig.call({.opcode = VGPU_OP_MEM_GET_INFO});
    EXPECT_EQ(info.r0, 512u << 10);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_ALLOC, .args = {1 << 20}}).status, VGPU_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_ALLOC, .args = {~0ull}}).status, VGPU_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_ALLOC, .args = {0}}).status, VGPU_ERROR_INVALID_VALUE);
    rig.alloc(512 << 10); // exactly what is left
}

TEST_F(VgpuMemory, AllocationCountIsBounded) {
    for (int i = 0; i < 64; ++i) rig.alloc(16);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_ALLOC, .args = {16}}).status, VGPU_ERROR_OUT_OF_MEMORY);
}

TEST_F(VgpuMemory, GuestRangesOutsideRamOrWrapping) {
    const uint64_t d = rig.alloc(8192);
    // Source past the end of RAM, straddling it, wrapping 2^64, and empty.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kRamBytes, 16, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kRamBytes - 8, 16, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, ~0ull - 4095, 8192, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {~0ull - 7, d, 16, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kDataGpa, 0, 0}}).status, VGPU_SUCCESS); // no-op
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GUEST_RAM_DEVICE_PTR, .args = {kRamBytes - 10, 20}}).status,
              VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MODULE_LOAD_DATA, .args = {kRamBytes - 10, 20}}).status,
              VGPU_ERROR_INVALID_VALUE);
}

TEST_F(VgpuMemory, DevicePointersOutsideAllocations) {
    const uint64_t a = rig.alloc(4096);
    const uint64_t b = rig.alloc(4096);
    auto htod = [&](uint64_t dst, uint64_t n) {
        return rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {dst, kDataGpa, n, 0}}).status;
    };
    EXPECT_EQ(htod(a, 4096), VGPU_SUCCESS);
    EXPECT_EQ(htod(a + 1, 4096), VGPU_ERROR_INVALID_VALUE);  // one past the end
    EXPECT_EQ(htod(a - 1, 2), VGPU_ERROR_INVALID_VALUE);     // before the start
    EXPECT_EQ(htod(0, 16), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(htod(0x1000, 16), VGPU_ERROR_INVALID_VALUE);   // looks like guest memory
    EXPECT_EQ(htod(~0ull - 8, 16), VGPU_ERROR_INVALID_VALUE); // dptr + bytes wraps
    EXPECT_EQ(htod(std::min(a, b) + 4000, std::max(a, b) - std::min(a, b)), VGPU_ERROR_INVALID_VALUE); // spans two
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOD, .args = {a, b + 1, 4096, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {a + 16}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {a, kDataGpa, 16, 0x53ull << 56 | 1}}).status,
              VGPU_ERROR_INVALID_HANDLE); // a stream never issued
}

TEST_F(VgpuMemory, ZeroCopyAddressOfGuestRam) {
    const auto in = pattern(4096, 1);
    rig.put(kDataGpa, in.data(), in.size());
    const Done zc = rig.call({.opcode = VGPU_OP_GUEST_RAM_DEVICE_PTR, .args = {kDataGpa, 4096}});
    ASSERT_EQ(zc.status, VGPU_SUCCESS);
    EXPECT_NE(zc.r0, 0u);
    EXPECT_NE(zc.r0, reinterpret_cast<uint64_t>(rig.host_ptr(kDataGpa))); // never a host pointer
    const uint64_t d = rig.alloc(4096);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOD, .args = {d, zc.r0, 4096, 0}}).status, VGPU_SUCCESS);
    std::vector<uint8_t> out(4096);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa + 8192, d, 4096, 0}}).status, VGPU_SUCCESS);
    rig.get(kDataGpa + 8192, out.data(), out.size());
    EXPECT_EQ(in, out);
    // The window ends where guest RAM ends.
    const Done end = rig.call({.opcode = VGPU_OP_GUEST_RAM_DEVICE_PTR, .args = {kRamBytes - 16, 16}});
    ASSERT_EQ(end.status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOD, .args = {d, end.r0, 32, 0}}).status, VGPU_ERROR_INVALID_VALUE);
}

// ---- scatter-gather -------------------------------------------------------

struct VgpuSg : VgpuMemory, ::testing::WithParamInterface<uint64_t> {
    // Entries of odd sizes and offsets, each in its own 16 KiB slot, slots
    // out of order; the last entry continues the one before it (so Coalesce
    // merges something).
    std::vector<vgpu_sg_entry> make_list(uint64_t base) {
        const uint64_t lens[] = {4096, 4096, 100, 4096, 17, 12288, 4095, 1, 8192, 33};
        const uint64_t slot[] = {3, 7, 1, 9, 0, 5, 2, 8, 6, 4};
        std::vector<vgpu_sg_entry> l;
        for (int i = 0; i < 10; ++i) l.push_back({base + slot[i] * 16384 + (lens[i] % 3) * 5, lens[i]});
        l.push_back({l.back().gpa + l.back().len, 3000});
        return l;
    }
    uint64_t total(const std::vector<vgpu_sg_entry>& l) {
        uint64_t t = 0;
        for (auto& e : l) t += e.len;
        return t;
    }
};

TEST_P(VgpuSg, HostToDeviceAndBackWithEachStrategy) {
    const uint64_t strategy = GetParam();
    const auto src = make_list(kDataGpa);
    const uint64_t n = total(src);
    const auto data = pattern(n, static_cast<uint8_t>(strategy));
    uint64_t off = 0;
    for (auto& e : src) rig.put(e.gpa, data.data() + off, e.len), off += e.len;
    const uint64_t list_gpa = kDataGpa + (3 << 20);
    rig.put(list_gpa, src.data(), src.size() * sizeof(vgpu_sg_entry));

    const uint64_t d = rig.alloc(n + 64);
    Done r = rig.call({.opcode = VGPU_OP_MEMCPY_HTOD_SG, .args = {d + 64, list_gpa, src.size(), 0, strategy, n}});
    ASSERT_EQ(r.status, VGPU_SUCCESS);
    std::vector<uint8_t> flat(n);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa + (4 << 20), d + 64, n, 0}}).status, VGPU_SUCCESS);
    rig.get(kDataGpa + (4 << 20), flat.data(), n);
    EXPECT_EQ(flat, data);

    // Back out to a different scattered set.
    const auto dst = make_list(kDataGpa + (1 << 20));
    rig.put(list_gpa, dst.data(), dst.size() * sizeof(vgpu_sg_entry));
    r = rig.call({.opcode = VGPU_OP_MEMCPY_DTOH_SG, .args = {d + 64, list_gpa, dst.size(), 0, strategy, total(dst)}});
    ASSERT_EQ(r.status, VGPU_SUCCESS);
    off = 0;
    for (auto& e : dst) {
        std::vector<uint8_t> got(e.len);
        rig.get(e.gpa, got.data(), e.len);
        EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin() + off)) << "entry at " << e.gpa;
        off += e.len;
    }
    const auto c = rig.dev->counters();
    EXPECT_EQ(c.sg_entries, 2 * src.size());
    if (strategy == VGPU_SG_PER_CHUNK) {
        EXPECT_EQ(c.sg_runs, 2 * src.size());
    }
    if (strategy == VGPU_SG_COALESCE) {
        EXPECT_LT(c.sg_runs, 2 * src.size());
    }
}

INSTANTIATE_TEST_SUITE_P(Strategies, VgpuSg,
                         ::testing::Values(VGPU_SG_AUTO, VGPU_SG_PER_CHUNK, VGPU_SG_COALESCE, VGPU_SG_BOUNCE,
                                           VGPU_SG_BATCH, VGPU_SG_GATHER_KERNEL, VGPU_SG_DEVICE_WALK));

TEST_F(VgpuMemory, BadSgListsAreRefused) {
    const uint64_t d = rig.alloc(1 << 20);
    const uint64_t list_gpa = kDataGpa;
    auto sg = [&](const std::vector<vgpu_sg_entry>& l, uint64_t count, uint64_t strategy = VGPU_SG_COALESCE) {
        rig.put(list_gpa, l.data(), l.size() * sizeof(vgpu_sg_entry));
        return rig.call({.opcode = VGPU_OP_MEMCPY_HTOD_SG, .args = {d, list_gpa, count, 0, strategy}}).status;
    };
    const std::vector<vgpu_sg_entry> good{{kDataGpa + 8192, 4096}};
    EXPECT_EQ(sg(good, 1), VGPU_SUCCESS);
    EXPECT_EQ(sg(good, VGPU_MAX_SG_ENTRIES + 1), VGPU_ERROR_INVALID_VALUE); // count too big
    EXPECT_EQ(sg(good, ~0ull), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(sg(good, VGPU_MAX_SG_ENTRIES), VGPU_ERROR_INVALID_VALUE);     // list runs past RAM
    EXPECT_EQ(sg(good, 1, VGPU_SG_STRATEGY_COUNT_), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(sg({{kRamBytes - 100, 200}}, 1), VGPU_ERROR_INVALID_VALUE);   // entry leaves RAM
    EXPECT_EQ(sg({{kDataGpa + 8192, 0}}, 1), VGPU_ERROR_INVALID_VALUE);     // empty entry
    EXPECT_EQ(sg({{~0ull - 10, 100}}, 1), VGPU_ERROR_INVALID_VALUE);        // entry wraps
    EXPECT_EQ(sg({{kDataGpa, 1 << 20}, {kDataGpa, 16}}, 2), VGPU_ERROR_INVALID_VALUE); // more than the allocation
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD_SG, .args = {d, kRamBytes - 8, 1, 0, 0}}).status,
              VGPU_ERROR_INVALID_VALUE); // the list itself straddles the end of RAM
    EXPECT_EQ(sg(good, 0), VGPU_SUCCESS); // nothing to do
}

} // namespace
} // namespace kvmgpu::vgpu::test
