// struct kvm_cpuid2 as the kernel lays it out, and its ioctl numbers, for
// C++. The uapi header declares entries[] with __DECLARE_FLEX_ARRAY, which in
// C++ puts an empty struct (1 byte) first: entries lands at offset 12 and
// sizeof is 12 where the kernel's C sees 8. Both the ioctl numbers (they
// encode the size) and every entries[] access would be wrong, so the VMM
// builds the buffer itself: an 8-byte header, then the entries.
#pragma once

#include <linux/kvm.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvmgpu {

// The fixed part of struct kvm_cpuid2 as the kernel lays it out.
struct KvmCpuid2Header {
    uint32_t nent;
    uint32_t padding;
};
static_assert(sizeof(KvmCpuid2Header) == 8);

// A kvm_cpuid2 buffer with room for `n` entries.
class CpuidBuffer {
public:
    explicit CpuidBuffer(uint32_t n) : bytes_(sizeof(KvmCpuid2Header) + size_t{n} * sizeof(kvm_cpuid_entry2)) {
        header()->nent = n;
    }
    KvmCpuid2Header* header() { return reinterpret_cast<KvmCpuid2Header*>(bytes_.data()); }
    kvm_cpuid_entry2* entries() {
        return reinterpret_cast<kvm_cpuid_entry2*>(bytes_.data() + sizeof(KvmCpuid2Header));
    }
    void* ioctl_arg() { return bytes_.data(); }

private:
    std::vector<uint8_t> bytes_;
};

inline constexpr unsigned long kGetSupportedCpuid = _IOWR(KVMIO, 0x05, KvmCpuid2Header);
inline constexpr unsigned long kSetCpuid2 = _IOW(KVMIO, 0x90, KvmCpuid2Header);

} // namespace kvmgpu
