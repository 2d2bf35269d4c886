// The host file systems a guest never sees through its root or shares:
// the kernel's pseudo file systems (procfs, sysfs, debugfs, tracefs,
// securityfs, cgroups, bpf, configfs, efivarfs, pstore, devpts, binfmt_misc,
// nsfs, mqueue, hugetlbfs, ...). The host's /proc is the VMM's: with
// `--root /` it would offer /proc/self/mem and /proc/self/environ. What a
// guest expects there (/proc/self/exe, /sys/devices/system/cpu/online) the
// VMM serves itself (syscalls_proc_files.cpp).
#pragma once

namespace kvmgpu::linux_abi {

// True when host fd `fd` lies on such a file system, or fstatfs fails.
bool on_pseudo_fs(int fd);

} // namespace kvmgpu::linux_abi
