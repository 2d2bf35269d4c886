// A guest's epoll set, kept by the VMM (no host epoll): the descriptors
// it watches, by guest descriptor number, each with the events asked for
// and the guest's 64-bit data. An entry holds its open file weakly, so it
// lasts while the file does (every descriptor of it closed: gone, as on
// Linux). Readiness is looked up at each wait (level-triggered; EPOLLET is
// accepted and served level-triggered, which an edge-triggered program
// that reads until EAGAIN does not tell apart; EPOLLONESHOT disables an
// entry once reported, until EPOLL_CTL_MOD). Limits: kMaxEpollSets sets a
// VM, kMaxEpollEntries entries a set. No KVM here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "kvmtool-gpu/vmm/linux/fd_table.h"

namespace kvmgpu::linux_abi {

constexpr int kMaxEpollSets = 64;              // per VM (EMFILE past it)
constexpr size_t kMaxEpollEntries = kMaxFds;   // per set (ENOSPC past it)

struct EpollWatch { // one entry as a wait sees it
    int fd;
    std::shared_ptr<OpenFile> file;
    uint32_t events;
    uint64_t data;
};

class EpollSet {
public:
    // EPOLL_CTL_ADD (1), DEL (2), MOD (3) of `fd` (whose open file is
    // `file`): 0 or -errno (EEXIST, ENOENT, EINVAL, ENOSPC, EPERM).
    int control(int op, int fd, const std::shared_ptr<OpenFile>& file, uint32_t events, uint64_t data);
    // The live, enabled entries; forgets those whose file is gone.
    std::vector<EpollWatch> watches();
    // EPOLLONESHOT entries just reported: disabled until EPOLL_CTL_MOD.
    void reported(int fd, const OpenFile* file);
    size_t size() const { return entries_.size(); }

private:
    struct Entry {
        std::weak_ptr<OpenFile> file;
        uint32_t events = 0;
        uint64_t data = 0;
        bool disabled = false;
    };
    std::map<int, Entry> entries_;
};

// The events an epoll entry or pollfd may ask for and be told of
// (EPOLLIN, PRI, OUT, ERR, HUP, RDNORM, RDBAND, WRNORM, WRBAND, MSG, RDHUP).
constexpr uint32_t kPollEventBits = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x2000;
constexpr uint32_t kEpollEt = 1u << 31, kEpollOneshot = 1u << 30, kEpollWakeup = 1u << 29,
                   kEpollExclusive = 1u << 28;

// The readiness of a file the VMM answers for itself (the console, an
// epoll set, /proc/self/fd): its revents for `events` (POLLERR and POLLHUP
// always asked); -1 for a host-backed file, which host_poll answers.
int fixed_readiness(const OpenFile& file, uint32_t events);

} // namespace kvmgpu::linux_abi
