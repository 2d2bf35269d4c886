// The text of the /proc files the VMM makes up for a Linux-ABI guest
// (syscalls_proc_files.cpp serves them as read-only memfds): each is built
// from the guest's own state when the guest opens it, never from the host's
// /proc, which describes the VMM.
#pragma once

#include <linux/kvm.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kvmgpu::linux_abi {

// One line of /proc/self/maps.
struct MapsEntry {
    uint64_t lo = 0, hi = 0;
    std::string perms; // "rwxp", "r--p", ...
    std::string name;  // a path, "[heap]", "[stack]", "[vdso]", or empty
    uint64_t offset = 0; // a file mapping's offset in its file
};

// Lines sorted by address, in Linux's format.
std::string maps_text(std::vector<MapsEntry> entries);

// Processor 0 only (the guest has one CPU): vendor, family, model,
// stepping, model name and the feature flags (those Linux shows) of the
// guest's CPUID `cpuid` (what the VMM gave KVM_SET_CPUID2); a leaf it
// lacks (all of them when empty) is read from the host's CPUID.
std::string cpuinfo_text(const std::vector<kvm_cpuid_entry2>& cpuid);

// MemTotal is the guest's RAM; MemFree and MemAvailable what its allocator
// has not handed out. Values in kB, as Linux writes them.
std::string meminfo_text(uint64_t total_bytes, uint64_t free_bytes);

// /proc/self/status of the guest, the one process of its VM: pid 1, no
// parent and no tracer, root, one CPU; `name` is the executable's base name
// (cut to 15 bytes, as the kernel's), `used_bytes` its RAM in use.
std::string status_text(const std::string& name, uint32_t threads, uint64_t used_bytes);

} // namespace kvmgpu::linux_abi
