// The guest's libcuda: the VMM's own guest libcuda.so.1 (guest-stub/libcuda,
// docs/libcuda.md), which a Linux-ABI guest gets for every libcuda.so* its
// file system offers (the host driver's with --root /, a CUDA toolkit's
// stubs/libcuda.so) and for those names in the standard library directories
// when the root has none, so ld.so's search finds it. The host driver's
// library cannot work in a VM: it talks to /dev/nvidia*, which a guest never
// reaches.
// The file is the VMM's choice (its own install or build, guest_locator.h),
// opened once by the VMM; the guest gets read-only descriptors of it and
// never names its host path. A write to one of its names is EROFS.
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>

#include "kvmtool-gpu/kvm/unique_fd.h"

namespace kvmgpu::linux_abi {

class LibraryOverlay {
public:
    // Opens `host_file` read-only. Throws std::runtime_error naming it when
    // it is not a regular file the VMM can read.
    explicit LibraryOverlay(const std::string& host_file);

    // Whether a path's last component is one the overlay answers:
    // "libcuda.so" or "libcuda.so.<anything>".
    static bool names_library(std::string_view last_component);
    // Whether a normalized absolute guest path lies directly in one of the
    // directories ld.so searches by default (/lib, /usr/lib, /lib64,
    // /usr/lib64 and their x86_64-linux-gnu).
    static bool in_default_search_dir(const std::string& normalized_path);

    // A new read-only descriptor of the file (its own offset), or -errno.
    int open() const;
    int stat(struct stat* out) const;

private:
    UniqueFd fd_;
};

} // namespace kvmgpu::linux_abi
