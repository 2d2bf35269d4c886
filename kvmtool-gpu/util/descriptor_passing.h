// Descriptors carried between processes on a Unix socket (SCM_RIGHTS): a
// GPU worker's recipe with its VM's memory and eventfds (worker_zygote.cpp),
// a remote session's control socket (session_process.cpp).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kvmgpu {

// The most descriptors one message carries here.
inline constexpr size_t kMaxPassedDescriptors = 128;

// Sends `bytes` (at least one) with `fds` attached, retrying on EINTR.
// Returns sendmsg's result: the bytes sent, or -1 with errno.
ssize_t send_with_descriptors(int sock, std::span<const uint8_t> bytes, std::span<const int> fds);

struct ReceivedMessage {
    ssize_t bytes = -1;     // recvmsg's result: 0 when the peer closed, -1 with errno
    std::vector<int> fds;   // close-on-exec; the caller owns them
    bool truncated = false; // the bytes or the descriptors did not all fit
};

// One message, retrying on EINTR.
ReceivedMessage receive_with_descriptors(int sock, std::span<uint8_t> buffer);

} // namespace kvmgpu
