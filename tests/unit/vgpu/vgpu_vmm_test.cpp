// Virtual memory management through the ring on the host backend
// (VGPU_OP_VMM_*): the whole reserve/create/map/access path, the quota,
// every hostile field, and what a context's destruction and RESET free.
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

constexpr uint64_t kG = HostVirtualMemory::kGranule; // 2 MiB

struct VgpuVmm : ::testing::Test {
    VgpuRig rig{VgpuOptions{.device_mem_quota = 8 * kG, .max_handles = 16}};
    void SetUp() override { ASSERT_EQ(rig.enable(), VGPU_SUCCESS); }
    Done op(uint16_t opcode, std::vector<uint64_t> args) { return rig.call({.opcode = opcode, .args = std::move(args)}); }
    uint64_t ok(uint16_t opcode, std::vector<uint64_t> args) {
        const Done d = op(opcode, std::move(args));
        EXPECT_EQ(d.status, VGPU_SUCCESS) << "opcode " << opcode;
        return d.r0;
    }
    uint64_t used() {
        const Done d = op(VGPU_OP_MEM_GET_INFO, {});
        return d.r1 - d.r0;
    }
    // A reservation of `granules` with one physical block mapped at its start, access set.
    uint64_t mapped(uint64_t granules, uint64_t* handle) {
        const uint64_t va = ok(VGPU_OP_VMM_RESERVE, {granules * kG, 0, 0});
        *handle = ok(VGPU_OP_VMM_CREATE, {granules * kG});
        ok(VGPU_OP_VMM_MAP, {va, granules * kG, 0, *handle});
        ok(VGPU_OP_VMM_SET_ACCESS, {va, granules * kG, 0, VGPU_VMM_ACCESS_READWRITE});
        return va;
    }
};

// A question about a device, as the driver's: no current context needed.
TEST_F(VgpuVmm, GranularityNamesADeviceAndNeedsNoContext) {
    ok(VGPU_OP_CTX_SET_CURRENT, {0});
    EXPECT_EQ(op(VGPU_OP_MEM_ALLOC, {4096}).status, VGPU_ERROR_INVALID_CONTEXT);
    EXPECT_EQ(ok(VGPU_OP_VMM_GRANULARITY, {0}), kG);
    EXPECT_EQ(op(VGPU_OP_VMM_GRANULARITY, {7}).status, VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(op(VGPU_OP_VMM_GRANULARITY, {~0ull}).status, VGPU_ERROR_INVALID_DEVICE);
}

TEST_F(VgpuVmm, MappedMemoryIsTheVmsForCopiesAndKernels) {
    EXPECT_EQ(ok(VGPU_OP_VMM_GRANULARITY, {}), kG);
    uint64_t h = 0;
    const uint64_t va = mapped(1, &h);
    EXPECT_EQ(used(), kG);
    // Two float vectors in, their sum out, all inside the mapping.
    const uint32_t n = 256;
    std::vector<float> a(n), b(n), c(n);
    for (uint32_t i = 0; i < n; ++i) a[i] = float(i), b[i] = 2.0f * float(i);
    rig.put(kDataGpa, a.data(), n * 4);
    rig.put(kDataGpa + n * 4, b.data(), n * 4);
    ASSERT_EQ(op(VGPU_OP_MEMCPY_HTOD, {va, kDataGpa, 2 * n * 4, 0}).status, VGPU_SUCCESS);
    uint64_t fn = 0;
    rig.module_with("vector_add", &fn);
    const uint64_t pa = va, pb = va + n * 4, pc = va + 2 * n * 4;
    const std::vector<std::vector<uint8_t>> params = {bytes(pa), bytes(pb), bytes(pc), bytes(n)};
    ASSERT_EQ(rig.launch(fn, params, 1, 1, n, 1).status, VGPU_SUCCESS);
    ASSERT_EQ(op(VGPU_OP_MEMCPY_DTOH, {kDataGpa, pc, n * 4, 0}).status, VGPU_SUCCESS);
    rig.get(kDataGpa, c.data(), n * 4);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], 3.0f * float(i)) << i;
    // A range running past the mapping is not the VM's.
    EXPECT_EQ(op(VGPU_OP_MEMCPY_HTOD, {va + kG - 4, kDataGpa, 8, 0}).status, VGPU_ERROR_INVALID_VALUE);
    // Access taken away: no longer the VM's device memory.
    ok(VGPU_OP_VMM_SET_ACCESS, {va, kG, 0, VGPU_VMM_ACCESS_NONE});
    EXPECT_EQ(op(VGPU_OP_MEMCPY_HTOD, {va, kDataGpa, 4, 0}).status, VGPU_ERROR_INVALID_VALUE);
    // Teardown in the driver's order gives the quota back.
    ok(VGPU_OP_VMM_UNMAP, {va, kG});
    ok(VGPU_OP_VMM_RELEASE, {h});
    ok(VGPU_OP_VMM_FREE_RESERVATION, {va, kG});
    EXPECT_EQ(used(), 0u);
}

TEST_F(VgpuVmm, ReleasedMemoryStaysWhileMappedAndCountsUntilUnmapped) {
    uint64_t h = 0;
    const uint64_t va = mapped(2, &h);
    ok(VGPU_OP_VMM_RELEASE, {h});
    EXPECT_EQ(used(), 2 * kG);
    EXPECT_EQ(op(VGPU_OP_VMM_RELEASE, {h}).status, VGPU_ERROR_INVALID_VALUE); // released already
    EXPECT_EQ(op(VGPU_OP_VMM_MAP, {va, kG, 0, h}).status, VGPU_ERROR_INVALID_HANDLE);
    rig.put(kDataGpa, "managed", 8);
    ASSERT_EQ(op(VGPU_OP_MEMCPY_HTOD, {va + kG, kDataGpa, 8, 0}).status, VGPU_SUCCESS);
    ok(VGPU_OP_VMM_UNMAP, {va, 2 * kG});
    EXPECT_EQ(used(), 0u);
    ok(VGPU_OP_VMM_FREE_RESERVATION, {va, 2 * kG});
}

TEST_F(VgpuVmm, QuotaCountsPhysicalMemory) {
    const uint64_t h = ok(VGPU_OP_VMM_CREATE, {6 * kG});
    EXPECT_EQ(op(VGPU_OP_VMM_CREATE, {4 * kG}).status, VGPU_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(op(VGPU_OP_MEM_ALLOC, {4 * kG}).status, VGPU_ERROR_OUT_OF_MEMORY); // one quota for both
    EXPECT_EQ(op(VGPU_OP_VMM_CREATE, {UINT64_MAX - kG + 1}).status, VGPU_ERROR_OUT_OF_MEMORY);
    ok(VGPU_OP_VMM_RELEASE, {h});
    EXPECT_EQ(used(), 0u);
    // Reservations cost no memory.
    const uint64_t va = ok(VGPU_OP_VMM_RESERVE, {64 * kG, 0, 0});
    EXPECT_EQ(used(), 0u);
    ok(VGPU_OP_VMM_FREE_RESERVATION, {va, 64 * kG});
}

TEST_F(VgpuVmm, TheAddressAskedForIsGivenWhereFree) {
    const uint64_t want = 0x40000000; // canonical, granule-aligned, no allocation there
    EXPECT_EQ(ok(VGPU_OP_VMM_RESERVE, {kG, 0, want}), want);
    const uint64_t other = ok(VGPU_OP_VMM_RESERVE, {kG, 0, want}); // taken: another, as a hint
    EXPECT_NE(other, want);
    EXPECT_EQ(ok(VGPU_OP_VMM_RESERVE, {kG, 8 * kG, 0}) % (8 * kG), 0u); // alignment honoured
}

TEST_F(VgpuVmm, HostileFieldsAreRefused) {
    const uint64_t va = ok(VGPU_OP_VMM_RESERVE, {4 * kG, 0, 0});
    const uint64_t h = ok(VGPU_OP_VMM_CREATE, {kG});
    // Reserve.
    EXPECT_EQ(op(VGPU_OP_VMM_RESERVE, {0, 0, 0}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(op(VGPU_OP_VMM_RESERVE, {kG + 1, 0, 0}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(op(VGPU_OP_VMM_RESERVE, {kG, 3 * kG, 0}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(op(VGPU_OP_VMM_RESERVE, {kG, 0, 4096}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(op(VGPU_OP_VMM_RESERVE, {4 * kG, 0, UINT64_MAX - kG + 1}).status, VGPU_ERROR_INVALID_VALUE);
    // Free.
    EXPECT_EQ(op(VGPU_OP_VMM_FREE_RESERVATION, {va, kG}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(op(VGPU_OP_VMM_FREE_RESERVATION, {va + kG, 3 * kG}).status, VGPU_ERROR_INVALID_VALUE);
    // Create.
    EXPECT_EQ(op(VGPU_OP_VMM_CREATE, {0}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(op(VGPU_OP_VMM_CREATE, {4096}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(op(VGPU_OP_VMM_CREATE, {kG, 2}).status, VGPU_ERROR_INVALID_VALUE); // compression type
    EXPECT_EQ(op(VGPU_OP_VMM_CREATE, {kG, ~0ull}).status, VGPU_ERROR_INVALID_VALUE);
    const auto compressible = op(VGPU_OP_VMM_CREATE, {kG, 1});
    EXPECT_EQ(compressible.status, VGPU_SUCCESS);
    EXPECT_EQ(compressible.r1, 0u); // asked for, not granted: the host backend has none
    EXPECT_EQ(op(VGPU_OP_VMM_RELEASE, {compressible.r0}).status, VGPU_SUCCESS);
    // Map.
    EXPECT_EQ(op(VGPU_OP_VMM_MAP, {va, kG, kG, h}).status, VGPU_ERROR_INVALID_VALUE);     // offset
    EXPECT_EQ(op(VGPU_OP_VMM_MAP, {va + 4096, kG, 0, h}).status, VGPU_ERROR_INVALID_VALUE); // unaligned
    EXPECT_EQ(op(VGPU_OP_VMM_MAP, {va, 2 * kG, 0, h}).status, VGPU_ERROR_INVALID_VALUE);  // larger than h
    EXPECT_EQ(op(VGPU_OP_VMM_MAP, {va + 4 * kG, kG, 0, h}).status, VGPU_ERROR_INVALID_VALUE); // past the reservation
    EXPECT_EQ(op(VGPU_OP_VMM_MAP, {0x40000000, kG, 0, h}).status, VGPU_ERROR_INVALID_VALUE);  // no reservation
    EXPECT_EQ(op(VGPU_OP_VMM_MAP, {va, kG, 0, h + 1}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(op(VGPU_OP_VMM_MAP, {va, kG, 0, 0}).status, VGPU_ERROR_INVALID_HANDLE);
    const uint64_t stream = ok(VGPU_OP_STREAM_CREATE, {0});
    EXPECT_EQ(op(VGPU_OP_VMM_MAP, {va, kG, 0, stream}).status, VGPU_ERROR_INVALID_HANDLE); // another kind
    ok(VGPU_OP_VMM_MAP, {va, kG, 0, h});
    EXPECT_EQ(op(VGPU_OP_VMM_MAP, {va, kG, 0, h}).status, VGPU_ERROR_INVALID_VALUE); // mapped already
    // Set access.
    EXPECT_EQ(op(VGPU_OP_VMM_SET_ACCESS, {va, kG, 0, 2}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(op(VGPU_OP_VMM_SET_ACCESS, {va, kG, 1, 3}).status, VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(op(VGPU_OP_VMM_SET_ACCESS, {va, 2 * kG, 0, 3}).status, VGPU_ERROR_INVALID_VALUE); // a hole
    EXPECT_EQ(op(VGPU_OP_VMM_SET_ACCESS, {va, UINT64_MAX, 0, 3}).status, VGPU_ERROR_INVALID_VALUE);
    // Unmap: whole mappings only; a mapped reservation cannot be freed.
    EXPECT_EQ(op(VGPU_OP_VMM_UNMAP, {va, kG / 2}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(op(VGPU_OP_VMM_UNMAP, {va, 2 * kG}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(op(VGPU_OP_VMM_FREE_RESERVATION, {va, 4 * kG}).status, VGPU_ERROR_INVALID_VALUE);
    ok(VGPU_OP_VMM_UNMAP, {va, kG});
    EXPECT_EQ(op(VGPU_OP_VMM_UNMAP, {va, kG}).status, VGPU_ERROR_INVALID_VALUE);
}

TEST_F(VgpuVmm, AContextTakesWhatItMadeAndResetTakesEverything) {
    const uint64_t ctx = ok(VGPU_OP_CTX_CREATE, {0, 0});
    uint64_t h = 0;
    const uint64_t va = mapped(2, &h);
    EXPECT_EQ(used(), 2 * kG);
    // Another context may not release it (handles are the context's).
    const uint64_t other = ok(VGPU_OP_CTX_CREATE, {0, 0});
    EXPECT_EQ(op(VGPU_OP_VMM_RELEASE, {h}).status, VGPU_ERROR_INVALID_VALUE);
    ok(VGPU_OP_CTX_DESTROY, {ctx});
    ok(VGPU_OP_CTX_SET_CURRENT, {other});
    EXPECT_EQ(used(), 0u);
    EXPECT_EQ(op(VGPU_OP_MEMCPY_HTOD, {va, kDataGpa, 4, 0}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(op(VGPU_OP_VMM_FREE_RESERVATION, {va, 2 * kG}).status, VGPU_ERROR_INVALID_VALUE);
    // RESET: the same for every context.
    uint64_t h2 = 0;
    const uint64_t va2 = mapped(1, &h2);
    ok(VGPU_OP_VMM_CREATE, {kG});
    EXPECT_EQ(used(), 2 * kG);
    rig.reset();
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(used(), 0u);
    EXPECT_EQ(op(VGPU_OP_MEMCPY_HTOD, {va2, kDataGpa, 4, 0}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(op(VGPU_OP_VMM_MAP, {va2, kG, 0, h2}).status, VGPU_ERROR_INVALID_HANDLE);
    // The freed addresses can be had again.
    EXPECT_EQ(ok(VGPU_OP_VMM_RESERVE, {kG, 0, 0x40000000}), 0x40000000u);
}

} // namespace
} // namespace kvmgpu::vgpu::test
