// The writable directory a guest with a read-only root gets, mounted at
// kPrivateTmpGuestPath, with HOME and TMPDIR pointing at it, unless a share
// is at /tmp: programs expect one (Python's tempfile refuses to start without
// a writable temporary directory; CuPy, CUDA's JIT and compilers keep caches
// under HOME). The root's own /tmp stays visible (read-only) around it. A
// fresh directory under the host's temporary directory ($TMPDIR, else /tmp),
// mode 0700, its own per VM, removed with everything in it when the VM ends.
#pragma once

#include <memory>
#include <string>

namespace kvmgpu::linux_abi {

inline constexpr const char* kPrivateTmpGuestPath = "/tmp/kvmgpu-vm";

class PrivateTmp {
public:
    // Throws std::runtime_error naming the directory and errno.
    static std::unique_ptr<PrivateTmp> create();
    ~PrivateTmp(); // removes it; a failure is not an error at the VM's end
    PrivateTmp(const PrivateTmp&) = delete;
    PrivateTmp& operator=(const PrivateTmp&) = delete;

    const std::string& host_dir() const { return dir_; }

private:
    explicit PrivateTmp(std::string dir) : dir_(std::move(dir)) {}
    std::string dir_;
};

} // namespace kvmgpu::linux_abi
