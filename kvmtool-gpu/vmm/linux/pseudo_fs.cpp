#include "kvmtool-gpu/vmm/linux/pseudo_fs.h"

#include <linux/magic.h>
#include <sys/vfs.h>

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace kvmgpu::linux_abi {

bool on_pseudo_fs(int fd) {
    struct statfs fs {};
    if (::fstatfs(fd, &fs) != 0) return true;
    // <linux/magic.h>'s values; a few older headers lack some, spelled out.
    constexpr uint64_t kRefused[] = {
        PROC_SUPER_MAGIC,   SYSFS_MAGIC,        DEBUGFS_MAGIC,  0x74726163 /* tracefs */,
        SECURITYFS_MAGIC,   CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, BPF_FS_MAGIC,
        0x62656570 /* configfs */, EFIVARFS_MAGIC, PSTOREFS_MAGIC, DEVPTS_SUPER_MAGIC,
        0x42494e4d /* binfmt_misc */, NSFS_MAGIC, 0x19800202 /* mqueue */, HUGETLBFS_MAGIC,
        SELINUX_MAGIC,      SMACK_MAGIC,        0x65735543 /* fusectl */, 0x6c6f6f70 /* binderfs */,
    };
    const auto type = static_cast<uint64_t>(static_cast<uint32_t>(fs.f_type));
    return std::find(std::begin(kRefused), std::end(kRefused), type) != std::end(kRefused);
}

} // namespace kvmgpu::linux_abi
