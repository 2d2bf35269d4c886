// struct kvm_xsave as the kernel lays it out, and its ioctl numbers, for
// C++. The uapi header ends it with __DECLARE_FLEX_ARRAY, which in C++
// adds an empty struct: sizeof is 4100 where the kernel's C sees 4096, and
// the ioctl numbers, which encode the size, come out wrong (the problem
// cpuid_ioctls.h describes). The 4096 bytes are the whole area unless the
// VMM enables a dynamic component (AMX) with arch_prctl, which it does not.
#pragma once

#include <linux/kvm.h>

#include <cstdint>

namespace kvmgpu {

struct KvmXsaveArea {
    uint32_t region[1024];
};
static_assert(sizeof(KvmXsaveArea) == 4096);

inline constexpr unsigned long kGetXsave = _IOR(KVMIO, 0xa4, KvmXsaveArea);
inline constexpr unsigned long kSetXsave = _IOW(KVMIO, 0xa5, KvmXsaveArea);

} // namespace kvmgpu
