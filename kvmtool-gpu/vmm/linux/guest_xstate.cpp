#include "kvmtool-gpu/vmm/linux/guest_xstate.h"

#include <cpuid.h>

#include <algorithm>
#include <cstring>

namespace kvmgpu::linux_abi {

namespace {
constexpr uint32_t kLeafXstate = 0xd;
constexpr uint32_t kOsxsave = 1u << 27; // CPUID.1:ECX
constexpr uint64_t kXfeatureTileData = 1ull << 18;
// The user components a guest may get (x87, SSE, AVX, AVX-512's three).
constexpr uint64_t kGuestXfeatures = kXfeatureFp | kXfeatureSse | kXfeatureYmm | kXfeatureAvx512;

const kvm_cpuid_entry2* find(const std::vector<kvm_cpuid_entry2>& all, uint32_t function, uint32_t index) {
    for (const auto& e : all)
        if (e.function == function && e.index == index) return &e;
    return nullptr;
}
} // namespace

bool kvm_offers_xsave(const std::vector<kvm_cpuid_entry2>& supported) {
    const kvm_cpuid_entry2* leaf1 = find(supported, 1, 0);
    constexpr uint32_t kXsave = 1u << 26;
    return leaf1 && (leaf1->ecx & kXsave);
}

GuestXstate plan_guest_xstate(const std::vector<kvm_cpuid_entry2>& supported, uint64_t host_xcr0, bool kvm_has_xsave) {
    const kvm_cpuid_entry2* xstate = find(supported, kLeafXstate, 0);
    if (!kvm_has_xsave || !kvm_offers_xsave(supported) || !xstate) return {};
    const uint64_t kvm_xcr0 = xstate->eax | (uint64_t{xstate->edx} << 32);
    uint64_t xcr0 = kvm_xcr0 & host_xcr0 & kGuestXfeatures;
    if ((xcr0 & (kXfeatureFp | kXfeatureSse)) != (kXfeatureFp | kXfeatureSse)) return {};
    // AVX-512 needs AVX and all three of its components (XSETBV refuses the rest).
    if (!(xcr0 & kXfeatureYmm) || (xcr0 & kXfeatureAvx512) != kXfeatureAvx512) xcr0 &= ~kXfeatureAvx512;
    GuestXstate xs;
    xs.size = kFxBytes + kXsaveHeaderBytes;
    for (uint32_t i = 2; i < 8; ++i) {
        if (!(xcr0 >> i & 1)) continue;
        const kvm_cpuid_entry2* c = find(supported, kLeafXstate, i);
        if (!c || c->eax == 0 || c->ebx < kFxBytes + kXsaveHeaderBytes) return {}; // no place for it: no XSAVE
        xs.offset[i] = c->ebx;
        xs.bytes[i] = c->eax;
        xs.size = std::max(xs.size, c->ebx + c->eax);
    }
    if (xs.size > kKvmXsaveBytes) return {};
    xs.xcr0 = xcr0;
    return xs;
}

std::vector<kvm_cpuid_entry2> guest_cpuid(std::vector<kvm_cpuid_entry2> supported, const GuestXstate& xs) {
    if (!xs.enabled()) return supported;
    std::vector<kvm_cpuid_entry2> out;
    for (kvm_cpuid_entry2 e : supported) {
        if (e.function == 1) e.ecx |= kOsxsave;
        if (e.function == kLeafXstate) {
            if (e.index == 0) {
                e.eax = static_cast<uint32_t>(xs.xcr0);
                e.edx = static_cast<uint32_t>(xs.xcr0 >> 32);
                e.ebx = e.ecx = xs.size; // enabled and largest: the same set
            } else if (e.index == 1) {
                e.ecx = e.edx = 0; // no supervisor state (IA32_XSS) to enable
            } else if (e.index >= 64 || !(xs.xcr0 >> e.index & 1)) {
                continue;
            }
        }
        if (!(xs.xcr0 & kXfeatureTileData)) {
            if (e.function == 0x1d || e.function == 0x1e) continue; // tile and TMUL information
            if (e.function == 7 && e.index == 0) e.edx &= ~((1u << 22) | (1u << 24) | (1u << 25)); // AMX-BF16, -TILE, -INT8
            if (e.function == 7 && e.index == 1) {
                e.eax &= ~(1u << 21); // AMX-FP16
                e.edx &= ~(1u << 8);  // AMX-COMPLEX
            }
        }
        out.push_back(e);
    }
    return out;
}

uint64_t host_xcr0() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & kOsxsave)) return 0; // XGETBV would be #UD
    uint32_t lo = 0, hi = 0;
    asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return lo | (uint64_t{hi} << 32);
}

KvmXsaveArea initial_xsave() {
    KvmXsaveArea x{};
    auto* b = reinterpret_cast<uint8_t*>(x.region);
    const uint16_t fcw = 0x37f;
    const uint32_t mxcsr = 0x1f80;
    const uint64_t xstate_bv = kXfeatureFp | kXfeatureSse; // these two as written, the rest initial
    std::memcpy(b + 0, &fcw, 2);
    std::memcpy(b + 24, &mxcsr, 4);
    std::memcpy(b + kFxBytes, &xstate_bv, 8);
    return x;
}

} // namespace kvmgpu::linux_abi
