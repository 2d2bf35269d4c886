// The error thrown when a KVM ioctl or a syscall fails during set-up: it
// names the call and carries errno, so one line tells the user what broke.
#pragma once

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kvmgpu {

class KvmError : public std::runtime_error {
public:
    KvmError(const std::string& call, int err)
        : std::runtime_error(call + " failed: " + std::strerror(err) + " (errno " + std::to_string(err) + ")"),
          errno_(err) {}
    int error_number() const { return errno_; }

private:
    int errno_;
};

// Throws KvmError(call, errno) when rc < 0; returns rc otherwise.
inline int check_ioctl(int rc, const char* call) {
    if (rc < 0) throw KvmError(call, errno);
    return rc;
}

} // namespace kvmgpu
