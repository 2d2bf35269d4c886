// The XSAVE state a Linux-ABI guest runs with, chosen as Linux chooses its
// own: CR4.OSXSAVE, and XCR0 the user components that both the host KVM
// supports (KVM_GET_SUPPORTED_CPUID leaf 0xD) and the host kernel enables
// (the VMM's own XGETBV), out of x87, SSE, AVX and AVX-512's three (opmask,
// ZMM_Hi256, Hi16_ZMM: all three or none). AMX's tile state is left out:
// Linux hands it to a process only after arch_prctl(ARCH_REQ_XCOMP_PERM),
// which this VMM does not serve, so its CPUID bits are cleared too. Where
// KVM has no XSAVE (KVM_CAP_XSAVE, KVM_CAP_XCRS) the guest runs without it,
// with the FXSAVE image in its signal frames. Pure: no KVM here.
#pragma once

#include <linux/kvm.h>

#include <cstdint>
#include <vector>

#include "kvmtool-gpu/kvm/xsave_ioctls.h"

namespace kvmgpu::linux_abi {

constexpr uint64_t kXfeatureFp = 1u << 0, kXfeatureSse = 1u << 1, kXfeatureYmm = 1u << 2;
constexpr uint64_t kXfeatureAvx512 = (1u << 5) | (1u << 6) | (1u << 7); // opmask, ZMM_Hi256, Hi16_ZMM
// The bytes KVM_GET_XSAVE / KVM_SET_XSAVE exchange (xsave_ioctls.h).
constexpr uint32_t kKvmXsaveBytes = sizeof(KvmXsaveArea);
// The legacy (FXSAVE) region and the XSAVE header after it.
constexpr uint32_t kFxBytes = 512, kXsaveHeaderBytes = 64;

struct GuestXstate {
    uint64_t xcr0 = 0;      // 0: no XSAVE; the frames carry the FXSAVE image
    uint32_t size = kFxBytes; // the standard-form XSAVE area of xcr0's components (CPUID.(0DH,0):EBX)
    // Where each extended component (2..7) lies in that area, and its size.
    uint32_t offset[8] = {}, bytes[8] = {};
    bool enabled() const { return xcr0 != 0; }
};

// The plan for a guest: `supported` is KVM_GET_SUPPORTED_CPUID, `host_xcr0`
// the host kernel's XCR0 (0: no OSXSAVE), `kvm_has_xsave` whether KVM offers
// KVM_CAP_XSAVE and KVM_CAP_XCRS. Disabled (xcr0 0) where any is missing or
// the area would not fit KVM_GET_XSAVE's 4096 bytes.
// Whether KVM's supported CPUID offers guests XSAVE at all (CPUID.1:ECX.XSAVE;
// kvm-pvm's does not).
bool kvm_offers_xsave(const std::vector<kvm_cpuid_entry2>& supported);
GuestXstate plan_guest_xstate(const std::vector<kvm_cpuid_entry2>& supported, uint64_t host_xcr0, bool kvm_has_xsave);

// The CPUID such a guest gets: `supported` unchanged without XSAVE; with
// it, leaf 1's OSXSAVE set (CR4 has it), leaf 0xD describing xcr0's
// components alone (no supervisor state), and AMX's feature and tile
// leaves gone.
std::vector<kvm_cpuid_entry2> guest_cpuid(std::vector<kvm_cpuid_entry2> supported, const GuestXstate& xs);

// XGETBV(0) of this process: the components the host kernel enabled (0
// where the host has no OSXSAVE).
uint64_t host_xcr0();

// A vCPU's first FPU state in KVM_SET_XSAVE's layout: the x87 control word
// 0x37f and MXCSR 0x1f80 (all exceptions masked), every other register and
// component in its initial state.
KvmXsaveArea initial_xsave();

} // namespace kvmgpu::linux_abi
