#include "kvmtool-gpu/vmm/linux/epoll_set.h"

#include <poll.h>

#include <cerrno>

namespace kvmgpu::linux_abi {

int EpollSet::control(int op, int fd, const std::shared_ptr<OpenFile>& file, uint32_t events, uint64_t data) {
    constexpr int kAdd = 1, kDel = 2, kMod = 3;
    auto it = entries_.find(fd);
    // An entry whose file was closed (and perhaps the number reused) is gone.
    if (it != entries_.end() && it->second.file.lock() != file) {
        entries_.erase(it);
        it = entries_.end();
    }
    if (op == kDel) {
        if (it == entries_.end()) return -ENOENT;
        entries_.erase(it);
        return 0;
    }
    if (op != kAdd && op != kMod) return -EINVAL;
    // Linux: EPOLLEXCLUSIVE only with ADD, and not with ONESHOT.
    if ((events & kEpollExclusive) && (op == kMod || (events & kEpollOneshot))) return -EINVAL;
    if (op == kAdd) {
        if (it != entries_.end()) return -EEXIST;
        if (entries_.size() >= kMaxEpollEntries) return -ENOSPC;
        entries_[fd] = Entry{file, events, data, false};
        return 0;
    }
    if (it == entries_.end()) return -ENOENT;
    it->second.events = events;
    it->second.data = data;
    it->second.disabled = false;
    return 0;
}

std::vector<EpollWatch> EpollSet::watches() {
    std::vector<EpollWatch> out;
    for (auto it = entries_.begin(); it != entries_.end();) {
        auto file = it->second.file.lock();
        if (!file) {
            it = entries_.erase(it);
            continue;
        }
        if (!it->second.disabled) out.push_back({it->first, std::move(file), it->second.events, it->second.data});
        ++it;
    }
    return out;
}

void EpollSet::reported(int fd, const OpenFile* file) {
    auto it = entries_.find(fd);
    if (it != entries_.end() && it->second.file.lock().get() == file && (it->second.events & kEpollOneshot))
        it->second.disabled = true;
}

int fixed_readiness(const OpenFile& file, uint32_t events) {
    const uint32_t wanted = (events & kPollEventBits) | POLLERR | POLLHUP;
    switch (file.kind) {
    case OpenFile::Kind::ConsoleIn: return static_cast<int>(wanted & (POLLIN | POLLRDNORM)); // end of file: readable
    case OpenFile::Kind::ConsoleOut: return static_cast<int>(wanted & (POLLOUT | POLLWRNORM));
    case OpenFile::Kind::ProcFdDir: return static_cast<int>(wanted & (POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM));
    case OpenFile::Kind::Epoll: return 0; // a nested set: not looked into (the waits say so)
    case OpenFile::Kind::Host: return -1;
    }
    return 0;
}

} // namespace kvmgpu::linux_abi
