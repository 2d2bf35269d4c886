// The FPU state in a Linux-ABI guest's signal frame (the area
// uc_mcontext.fpstate points at), as x86-64 Linux writes and reads it.
// Without XSAVE (guest_xstate.h) it is the 512-byte FXSAVE image. With it,
// the standard-form XSAVE area of XCR0's components: the legacy region
// with struct _fpx_sw_bytes in its software-reserved bytes 464..511
// (FP_XSTATE_MAGIC1, the sizes, XCR0), the XSAVE header, the components,
// and FP_XSTATE_MAGIC2 right after the area. Reading it back follows
// Linux's rt_sigreturn: software bytes that do not hold together (magic1,
// sizes, magic2) mean a legacy-only frame (x87 and SSE from the FXSAVE
// image, everything else initial); what XRSTOR would fault on (a header
// naming components XCR0 lacks, a compacted-form XCOMP_BV, bytes 8..23 of
// the header not zero, an area not 64-byte aligned, or 16 for a legacy
// frame, memory not the guest's) is refused, for which Linux sends SIGSEGV.
// What comes back is rebuilt from the validated fields only (header bytes
// 24..63, which XRSTOR's standard form ignores, stay zero; MXCSR keeps the
// CPU's bits), so KVM_SET_XSAVE gets nothing it would refuse. Everything
// here reads a copy: other guest threads may change the frame meanwhile.
#pragma once

#include <linux/kvm.h>

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "kvmtool-gpu/vmm/linux/guest_xstate.h"
#include "kvmtool-gpu/vmm/linux/user_memory.h"

namespace kvmgpu::linux_abi {

constexpr uint32_t kFpXstateMagic1 = 0x46505853, kFpXstateMagic2 = 0x46505845;
constexpr uint64_t kUcFpXstate = 0x1; // uc_flags: the fpstate is an XSAVE area

// The FXSAVE image of KVM's legacy FPU state, and back (MXCSR limited to `mxcsr_mask`).
std::vector<uint8_t> fx_from_kvm(const kvm_fpu& f);
kvm_fpu kvm_from_fx(std::span<const uint8_t> fx, uint32_t mxcsr_mask);

// The bytes a frame's fpstate holds: `saved` is the FXSAVE image without
// XSAVE, else KVM_GET_XSAVE's area (at least xs.size bytes).
std::vector<uint8_t> frame_fpstate(std::span<const uint8_t> saved, const GuestXstate& xs);

// The fpstate at guest address `at` (0: none, the initial state, as Linux
// gives): the FXSAVE image to load without XSAVE, else a KVM_SET_XSAVE
// area (kKvmXsaveBytes); a string says why Linux would send SIGSEGV.
std::variant<std::vector<uint8_t>, std::string> fpstate_from_frame(const UserMemory& mem, uint64_t at,
                                                                   const GuestXstate& xs, uint32_t mxcsr_mask);

} // namespace kvmgpu::linux_abi
