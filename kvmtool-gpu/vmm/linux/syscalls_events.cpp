// Pipes, eventfds, poll and epoll (select and pselect6 over poll's wait:
// syscalls_select.cpp). A pipe is a host pipe and an eventfd a
// host eventfd, made for this guest alone: each end is one of its
// descriptors (so within its limit), and each host fd is O_NONBLOCK, so no
// call ever blocks under the server's lock. A guest read or write that
// would block waits in serve() outside the lock (stream_wait) and tries
// again. poll, ppoll, epoll_wait and epoll_pwait are blocking calls: they
// look up the guest's descriptors under the lock, wait on the host fds
// without it (guest_wait.h: in slices, ended by a stop or the VMM's kick),
// and write the result under it again. The console answers for itself
// (stdin: end of file, so readable; stdout and stderr: writable). Signal
// masks given to ppoll and epoll_pwait are read (EFAULT) and not applied:
// a signal for the guest comes only from the guest itself
// (guest_signals.h), never during a wait.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "kvmtool-gpu/vmm/linux/epoll_set.h"
#include "kvmtool-gpu/vmm/linux/guest_wait.h"
#include "kvmtool-gpu/vmm/linux/syscall_server.h"

namespace kvmgpu::linux_abi {

namespace {
constexpr uint64_t kEventBytes = 12; // struct epoll_event: packed on x86-64
constexpr int kMaxEpollEvents = INT32_MAX / 12;

std::string pipe_link(int host) {
    struct stat st {};
    return "pipe:[" + std::to_string(::fstat(host, &st) == 0 ? st.st_ino : 0) + "]";
}
} // namespace

int64_t SyscallServer::sys_pipe2(uint64_t fds_addr, uint64_t flags) {
    if (flags & ~uint64_t{O_NONBLOCK | O_CLOEXEC | O_DIRECT}) return -EINVAL;
    if (!user_.span(fds_addr, 8)) return -EFAULT;
    if (fds_.limit() - fds_.open_count() < 2) return -EMFILE;
    int host[2];
    if (::pipe2(host, O_NONBLOCK | O_CLOEXEC | static_cast<int>(flags & O_DIRECT)) != 0) return -errno;
    const std::string link = pipe_link(host[0]);
    int guest[2];
    for (int end = 0; end < 2; ++end) {
        auto file = std::make_shared<OpenFile>();
        file->host = UniqueFd(host[end]);
        file->stream = true;
        file->flags = (end == 0 ? O_RDONLY : O_WRONLY) | (flags & O_NONBLOCK);
        file->link = link;
        guest[end] = fds_.install(std::move(file)); // room for both was checked above
    }
    if (user_.write(fds_addr, guest, sizeof guest)) return 0;
    fds_.close(guest[0]);
    fds_.close(guest[1]);
    return -EFAULT;
}

int64_t SyscallServer::sys_eventfd2(uint64_t initval, uint64_t flags) {
    if (flags & ~uint64_t{EFD_SEMAPHORE | EFD_CLOEXEC | EFD_NONBLOCK}) return -EINVAL;
    if (initval > UINT32_MAX) return -EINVAL; // an unsigned int in Linux's prototype
    if (fds_.open_count() >= fds_.limit()) return -EMFILE;
    const int host = ::eventfd(static_cast<unsigned>(initval), EFD_CLOEXEC | EFD_NONBLOCK | static_cast<int>(flags & EFD_SEMAPHORE));
    if (host < 0) return -errno;
    auto file = std::make_shared<OpenFile>();
    file->host = UniqueFd(host);
    file->stream = true;
    file->flags = O_RDWR | (flags & O_NONBLOCK);
    file->link = "anon_inode:[eventfd]";
    return fds_.install(std::move(file));
}

int64_t SyscallServer::sys_epoll_create1(uint64_t flags) {
    if (flags & ~uint64_t{O_CLOEXEC}) return -EINVAL;
    std::set<const EpollSet*> sets;
    for (int fd : fds_.open_fds())
        if (const OpenFile* f = fds_.get(fd); f->kind == OpenFile::Kind::Epoll) sets.insert(f->epoll.get());
    if (sets.size() >= static_cast<size_t>(kMaxEpollSets)) return -EMFILE;
    auto file = std::make_shared<OpenFile>();
    file->kind = OpenFile::Kind::Epoll;
    file->flags = O_RDWR;
    file->epoll = std::make_shared<EpollSet>();
    file->link = "anon_inode:[eventpoll]";
    return fds_.install(std::move(file));
}

int64_t SyscallServer::sys_epoll_ctl(uint64_t epfd, uint64_t op, uint64_t fd, uint64_t event) {
    constexpr uint64_t kDel = 2;
    uint8_t raw[kEventBytes] = {};
    if (op != kDel && !user_.read(event, raw, sizeof raw)) return -EFAULT;
    uint32_t events;
    uint64_t data;
    std::memcpy(&events, raw, 4);
    std::memcpy(&data, raw + 4, 8);
    const OpenFile* ep = fds_.get(static_cast<int64_t>(epfd));
    auto file = fds_.share(static_cast<int64_t>(fd));
    if (!ep || !file) return -EBADF;
    if (ep->kind != OpenFile::Kind::Epoll || ep == file.get()) return -EINVAL;
    if (file->kind == OpenFile::Kind::Epoll) return -EINVAL; // nested sets are not served
    // As Linux: a regular file or directory cannot be watched (always ready).
    if (file->kind == OpenFile::Kind::Host && !file->stream) return -EPERM;
    if (file->kind == OpenFile::Kind::ProcFdDir) return -EPERM;
    const uint32_t known = kPollEventBits | kEpollEt | kEpollOneshot | kEpollWakeup | kEpollExclusive;
    return ep->epoll->control(static_cast<int>(op), static_cast<int>(fd), file, events & known, data);
}

std::optional<FutexDeadline> SyscallServer::poll_deadline(int64_t timeout_ms) {
    if (timeout_ms < 0) return std::nullopt;
    return deadline_after(CLOCK_MONOTONIC, timespec{timeout_ms / 1000, (timeout_ms % 1000) * 1'000'000});
}

int64_t SyscallServer::ppoll_deadline(uint64_t ts_addr, uint64_t mask, uint64_t mask_size,
                                      std::optional<FutexDeadline>& deadline) {
    std::lock_guard lock(mu_);
    if (mask && (mask_size != 8 || !user_.span(mask, 8))) return mask_size != 8 ? -EINVAL : -EFAULT;
    if (!ts_addr) {
        deadline.reset();
        return 0;
    }
    const auto ts = user_.read_obj<timespec>(ts_addr);
    if (!ts) return -EFAULT;
    if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1'000'000'000) return -EINVAL;
    deadline = deadline_after(CLOCK_MONOTONIC, *ts);
    return 0;
}

int64_t SyscallServer::sys_poll(uint64_t fds_addr, uint64_t nfds, const std::optional<FutexDeadline>& deadline) {
    std::vector<pollfd> guest;
    {
        std::lock_guard lock(mu_);
        if (nfds > static_cast<uint64_t>(fds_.limit())) return -EINVAL; // Linux: past RLIMIT_NOFILE
        guest.resize(nfds);
        if (nfds && !user_.read(fds_addr, guest.data(), nfds * sizeof(pollfd))) return -EFAULT;
    }
    const int64_t n = poll_files(guest, deadline);
    if (n < 0) return n;
    std::lock_guard lock(mu_);
    if (nfds && !user_.write(fds_addr, guest.data(), nfds * sizeof(pollfd))) return -EFAULT;
    return n;
}

int64_t SyscallServer::poll_files(std::vector<pollfd>& guest, const std::optional<FutexDeadline>& deadline) {
    std::vector<std::shared_ptr<OpenFile>> files;
    {
        std::lock_guard lock(mu_);
        for (const pollfd& p : guest) files.push_back(p.fd < 0 ? nullptr : fds_.share(p.fd));
    }
    std::vector<pollfd> host;
    std::vector<size_t> host_index;
    auto attempt = [&](const timespec& slice) -> int64_t {
        host.clear();
        host_index.clear();
        int64_t ready = 0;
        for (size_t i = 0; i < guest.size(); ++i) {
            pollfd& p = guest[i];
            p.revents = 0;
            if (p.fd < 0) continue;
            const uint32_t events = static_cast<uint16_t>(p.events);
            if (!files[i]) {
                p.revents = POLLNVAL;
            } else if (files[i]->kind == OpenFile::Kind::Epoll) {
                p.revents = static_cast<short>(epoll_ready_now(*files[i]) ? events & (POLLIN | POLLRDNORM) : 0);
            } else if (const int fixed = fixed_readiness(*files[i], events); fixed >= 0) {
                p.revents = static_cast<short>(fixed);
            } else {
                host.push_back({files[i]->host.get(), static_cast<short>(events & kPollEventBits), 0});
                host_index.push_back(i);
            }
            ready += p.revents != 0;
        }
        const int64_t n = host_poll(host.data(), host.size(), ready ? timespec{} : slice);
        if (n < 0) return n;
        for (size_t j = 0; j < host.size(); ++j) {
            guest[host_index[j]].revents = host[j].revents;
            ready += host[j].revents != 0;
        }
        return ready;
    };
    return wait_in_slices(attempt, deadline, stopping_);
}

bool SyscallServer::epoll_ready_now(const OpenFile& ep) {
    std::vector<EpollWatch> watches;
    {
        std::lock_guard lock(mu_);
        watches = ep.epoll->watches();
    }
    std::vector<pollfd> host;
    for (const EpollWatch& w : watches) {
        if (const int fixed = fixed_readiness(*w.file, w.events); fixed >= 0) {
            if (fixed) return true;
            continue;
        }
        host.push_back({w.file->host.get(), static_cast<short>(w.events & kPollEventBits), 0});
    }
    return host_poll(host.data(), host.size(), timespec{}) > 0;
}

int64_t SyscallServer::sys_epoll_wait(uint64_t epfd, uint64_t events_addr, int64_t max_events,
                                      const std::optional<FutexDeadline>& deadline) {
    if (max_events <= 0 || max_events > kMaxEpollEvents) return -EINVAL;
    std::shared_ptr<OpenFile> ep;
    {
        std::lock_guard lock(mu_);
        if (!user_.span(events_addr, static_cast<uint64_t>(max_events) * kEventBytes)) return -EFAULT;
        ep = fds_.share(static_cast<int64_t>(epfd));
        if (!ep) return -EBADF;
        if (ep->kind != OpenFile::Kind::Epoll) return -EINVAL;
    }
    std::vector<uint8_t> out;
    std::vector<EpollWatch> watches;
    std::vector<pollfd> host;
    std::vector<size_t> host_index;
    auto attempt = [&](const timespec& slice) -> int64_t {
        {
            std::lock_guard lock(mu_); // the set as it is now: other threads may change it during a wait
            watches = ep->epoll->watches();
        }
        std::vector<uint32_t> revents(watches.size(), 0);
        host.clear();
        host_index.clear();
        bool any = false;
        for (size_t i = 0; i < watches.size(); ++i) {
            if (const int fixed = fixed_readiness(*watches[i].file, watches[i].events); fixed >= 0) {
                revents[i] = static_cast<uint32_t>(fixed);
                any |= fixed != 0;
                continue;
            }
            host.push_back({watches[i].file->host.get(), static_cast<short>(watches[i].events & kPollEventBits), 0});
            host_index.push_back(i);
        }
        const int64_t n = host_poll(host.data(), host.size(), any ? timespec{} : slice);
        if (n < 0) return n;
        for (size_t j = 0; j < host.size(); ++j) revents[host_index[j]] = static_cast<uint16_t>(host[j].revents);
        out.clear();
        std::lock_guard lock(mu_);
        for (size_t i = 0; i < watches.size() && out.size() / kEventBytes < static_cast<uint64_t>(max_events); ++i) {
            const uint32_t got = revents[i] & ((watches[i].events & kPollEventBits) | POLLERR | POLLHUP);
            if (!got) continue;
            uint8_t e[kEventBytes];
            std::memcpy(e, &got, 4);
            std::memcpy(e + 4, &watches[i].data, 8);
            out.insert(out.end(), e, e + kEventBytes);
            ep->epoll->reported(watches[i].fd, watches[i].file.get());
        }
        return static_cast<int64_t>(out.size() / kEventBytes);
    };
    const int64_t n = wait_in_slices(attempt, deadline, stopping_);
    if (n <= 0) return n;
    std::lock_guard lock(mu_);
    return user_.write(events_addr, out.data(), out.size()) ? n : -EFAULT;
}

std::shared_ptr<OpenFile> SyscallServer::stream_to_wait_on(const SyscallCall& c, short& events) const {
    if (c.nr != SYS_read && c.nr != SYS_write && c.nr != SYS_readv && c.nr != SYS_writev && c.nr != SYS_sendfile)
        return nullptr;
    auto file = fds_.share(static_cast<int64_t>(c.arg[0])); // sendfile's too: its output
    if (!file || !file->stream || (file->flags & O_NONBLOCK)) return nullptr;
    events = (c.nr == SYS_read || c.nr == SYS_readv) ? POLLIN : POLLOUT;
    return file;
}

int64_t SyscallServer::stream_wait(const OpenFile& file, short events) {
    pollfd p{file.host.get(), events, 0};
    return wait_in_slices([&](const timespec& slice) { return host_poll(&p, 1, slice); }, std::nullopt, stopping_);
}

} // namespace kvmgpu::linux_abi
