#include "kvmtool-gpu/util/descriptor_passing.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace kvmgpu {

namespace {

constexpr size_t kControlBytes = CMSG_SPACE(kMaxPassedDescriptors * sizeof(int));

} // namespace

ssize_t send_with_descriptors(int sock, std::span<const uint8_t> bytes, std::span<const int> fds) {
    if (bytes.empty() || fds.size() > kMaxPassedDescriptors) return errno = EINVAL, -1;
    iovec io{const_cast<uint8_t*>(bytes.data()), bytes.size()};
    alignas(cmsghdr) char control[kControlBytes] = {};
    msghdr msg{};
    msg.msg_iov = &io, msg.msg_iovlen = 1;
    if (!fds.empty()) {
        msg.msg_control = control, msg.msg_controllen = CMSG_SPACE(fds.size() * sizeof(int));
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(fds.size() * sizeof(int));
        std::memcpy(CMSG_DATA(c), fds.data(), fds.size() * sizeof(int));
    }
    ssize_t n;
    while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    return n;
}

ReceivedMessage receive_with_descriptors(int sock, std::span<uint8_t> buffer) {
    ReceivedMessage got;
    iovec io{buffer.data(), buffer.size()};
    alignas(cmsghdr) char control[kControlBytes];
    msghdr msg{};
    msg.msg_iov = &io, msg.msg_iovlen = 1;
    msg.msg_control = control, msg.msg_controllen = sizeof control;
    while ((got.bytes = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    if (got.bytes < 0) return got;
    // Whatever arrived is ours to close, even in a message the caller refuses.
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        const auto* p = reinterpret_cast<const int*>(CMSG_DATA(c));
        got.fds.insert(got.fds.end(), p, p + n);
    }
    got.truncated = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
    return got;
}

} // namespace kvmgpu
