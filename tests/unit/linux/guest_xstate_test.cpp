// The XSAVE state a Linux-ABI guest gets: XCR0 is what KVM supports and
// the host enables, of x87/SSE/AVX/AVX-512 (all three AVX-512 components
// or none), never AMX; the guest's CPUID leaf 0xD describes that XCR0 and
// nothing else; without KVM's XSAVE the CPUID stays KVM's.
#include <gtest/gtest.h>

#include "kvmtool-gpu/vmm/linux/guest_xstate.h"

namespace kvmgpu::linux_abi {
namespace {

kvm_cpuid_entry2 entry(uint32_t function, uint32_t index, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    kvm_cpuid_entry2 e{};
    e.function = function;
    e.index = index;
    e.eax = a, e.ebx = b, e.ecx = c, e.edx = d;
    return e;
}

// A Sapphire-Rapids-like KVM: AVX-512, PKRU and AMX's tiles in leaf 0xD.
constexpr uint64_t kKvmXcr0 = 0xe7 | (1u << 9) | (1u << 17) | (1u << 18);
std::vector<kvm_cpuid_entry2> supported() {
    return {
        entry(1, 0, 0x806f8, 0, (1u << 26) | (1u << 28), 1u << 26), // XSAVE, AVX; SSE2
        entry(7, 0, 1, 1u << 16, 0, (1u << 22) | (1u << 24) | (1u << 25) | (1u << 4)), // AVX512F; AMX x3; FSRM
        entry(7, 1, (1u << 21) | (1u << 5), 0, 0, 1u << 8), // AMX-FP16, AVX512_BF16; AMX-COMPLEX
        entry(0xd, 0, static_cast<uint32_t>(kKvmXcr0), 2696, 11008, 0),
        entry(0xd, 1, 0xf, 0, 0x1800, 0),
        entry(0xd, 2, 256, 576, 0, 0),
        entry(0xd, 5, 64, 1088, 0, 0),
        entry(0xd, 6, 512, 1152, 0, 0),
        entry(0xd, 7, 1024, 1664, 0, 0),
        entry(0xd, 9, 8, 2688, 0, 0),
        entry(0xd, 11, 16, 0, 1, 0), // CET_U: supervisor
        entry(0xd, 17, 64, 2752, 0, 0),
        entry(0xd, 18, 8192, 2816, 6, 0),
        entry(0x1d, 0, 1, 0, 0, 0),
        entry(0x1e, 0, 0, 0x4010, 0, 0),
    };
}

const kvm_cpuid_entry2* find(const std::vector<kvm_cpuid_entry2>& all, uint32_t f, uint32_t i) {
    for (const auto& e : all)
        if (e.function == f && e.index == i) return &e;
    return nullptr;
}

TEST(GuestXstate, Xcr0IsKvmsAndTheHostsUserStateWithoutAmx) {
    const uint64_t host = kKvmXcr0; // the host kernel enables everything, tiles included
    const GuestXstate xs = plan_guest_xstate(supported(), host, true);
    EXPECT_EQ(xs.xcr0, 0xe7u) << "x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM: no PKRU, no tiles";
    EXPECT_EQ(xs.size, 2688u) << "Hi16_ZMM ends the area";
    EXPECT_EQ(xs.offset[2], 576u);
    EXPECT_EQ(xs.bytes[2], 256u);
    EXPECT_EQ(xs.offset[7], 1664u);
    EXPECT_EQ(xs.bytes[7], 1024u);
    // The host kernel without AVX-512, or with part of it: AVX only.
    for (uint64_t h : {uint64_t{0x7}, uint64_t{0x27}, uint64_t{0x67}}) {
        const GuestXstate avx = plan_guest_xstate(supported(), h, true);
        EXPECT_EQ(avx.xcr0, 0x7u) << h;
        EXPECT_EQ(avx.size, 832u) << h;
    }
    // No XSAVE where KVM lacks it, the host has no OSXSAVE, or x87/SSE are missing.
    EXPECT_FALSE(plan_guest_xstate(supported(), host, false).enabled());
    EXPECT_FALSE(plan_guest_xstate(supported(), 0, true).enabled());
    EXPECT_FALSE(plan_guest_xstate(supported(), 0x5, true).enabled());
    auto no_xsave = supported();
    no_xsave[0].ecx &= ~(1u << 26);
    EXPECT_FALSE(plan_guest_xstate(no_xsave, host, true).enabled());
    // A component KVM names without a place for it: no XSAVE rather than a wrong layout.
    auto no_place = supported();
    for (auto& e : no_place)
        if (e.function == 0xd && e.index == 2) e.ebx = 0;
    EXPECT_FALSE(plan_guest_xstate(no_place, host, true).enabled());
}

TEST(GuestXstate, TheGuestsCpuidDescribesItsXcr0) {
    const GuestXstate xs = plan_guest_xstate(supported(), kKvmXcr0, true);
    const auto cpuid = guest_cpuid(supported(), xs);
    EXPECT_NE(find(cpuid, 1, 0)->ecx & (1u << 27), 0u) << "OSXSAVE: CR4 has it";
    const auto* d0 = find(cpuid, 0xd, 0);
    ASSERT_TRUE(d0);
    EXPECT_EQ(d0->eax, 0xe7u);
    EXPECT_EQ(d0->edx, 0u);
    EXPECT_EQ(d0->ebx, 2688u);
    EXPECT_EQ(d0->ecx, 2688u);
    EXPECT_EQ(find(cpuid, 0xd, 1)->eax, 0xfu) << "XSAVEOPT and the rest as KVM says";
    EXPECT_EQ(find(cpuid, 0xd, 1)->ecx, 0u) << "no supervisor state";
    for (uint32_t i : {2u, 5u, 6u, 7u}) EXPECT_TRUE(find(cpuid, 0xd, i)) << i;
    for (uint32_t i : {9u, 11u, 17u, 18u}) EXPECT_FALSE(find(cpuid, 0xd, i)) << i;
    EXPECT_EQ(find(cpuid, 7, 0)->edx, 1u << 4) << "AMX's bits gone, FSRM kept";
    EXPECT_EQ(find(cpuid, 7, 0)->ebx, 1u << 16) << "AVX512F kept";
    EXPECT_EQ(find(cpuid, 7, 1)->eax, 1u << 5) << "AMX-FP16 gone, AVX512_BF16 kept";
    EXPECT_EQ(find(cpuid, 7, 1)->edx, 0u) << "AMX-COMPLEX gone";
    EXPECT_FALSE(find(cpuid, 0x1d, 0));
    EXPECT_FALSE(find(cpuid, 0x1e, 0));
    // Without XSAVE: KVM's CPUID as it is (OSXSAVE 0: CR4 lacks it).
    const auto plain = guest_cpuid(supported(), GuestXstate{});
    ASSERT_EQ(plain.size(), supported().size());
    EXPECT_EQ(find(plain, 1, 0)->ecx & (1u << 27), 0u);
    EXPECT_EQ(find(plain, 0xd, 0)->eax, static_cast<uint32_t>(kKvmXcr0));
}

TEST(GuestXstate, TheInitialAreaHasTheDefaultControlWords) {
    const KvmXsaveArea x = initial_xsave();
    const auto* b = reinterpret_cast<const uint8_t*>(x.region);
    EXPECT_EQ(b[0] | b[1] << 8, 0x37f);
    EXPECT_EQ(b[24] | b[25] << 8, 0x1f80);
    EXPECT_EQ(b[512], kXfeatureFp | kXfeatureSse) << "XSTATE_BV: x87 and SSE as written, the rest initial";
    for (uint32_t i = 513; i < kKvmXsaveBytes; ++i) ASSERT_EQ(b[i], 0) << i;
}

} // namespace
} // namespace kvmgpu::linux_abi
