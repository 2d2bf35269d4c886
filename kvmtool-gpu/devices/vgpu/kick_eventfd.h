// The ring consumer's kick eventfd: what the guest's doorbell reaches (KVM
// writes it for an ioeventfd; the vCPU thread writes it for a trapped
// write) and what the consumer sleeps on once idle. A GPU worker inherits
// it across fork. Level-triggered: a kick before the consumer sleeps keeps
// the counter non-zero, so the sleep returns at once.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace kvmgpu::vgpu {

class KickEventfd {
public:
    // Throws std::system_error if the eventfd cannot be made.
    KickEventfd() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
        if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "vgpu: eventfd");
    }
    ~KickEventfd() { ::close(fd_); }
    KickEventfd(const KickEventfd&) = delete;
    KickEventfd& operator=(const KickEventfd&) = delete;

    int fd() const { return fd_; }
    // Any thread; never blocks (a saturated counter is a pending kick anyway).
    void kick() const noexcept { kick_fd(fd_); }
    static void kick_fd(int fd) noexcept {
        const uint64_t one = 1;
        [[maybe_unused]] ssize_t n = ::write(fd, &one, sizeof one);
    }
    // Resets the counter of a (non-blocking) eventfd.
    static void drain(int fd) noexcept {
        uint64_t v;
        [[maybe_unused]] ssize_t n = ::read(fd, &v, sizeof v);
    }

private:
    int fd_;
};

} // namespace kvmgpu::vgpu
