// A Linux-ABI guest's file descriptors: 0 (stdin: end of file), 1 and 2
// (the console) unless the VMM lends its own (host_stdio.h), files and directories of the share, pipe ends and
// eventfds (host ones, made for this VM alone), epoll sets and the
// /proc/self/fd directory (the VMM's own objects, no host fd), at most
// limit() in all (EMFILE past it): kMaxFds, or fewer where the VMM's own
// descriptor limit is shared by several VMs (util/process_limits.h). A
// descriptor owns its host fd (one at most); dup shares it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kvmtool-gpu/kvm/unique_fd.h"

namespace kvmgpu::linux_abi {

constexpr int kMaxFds = 256;

class EpollSet;

struct OpenFile {
    enum class Kind { ConsoleIn, ConsoleOut, Host, Epoll, ProcFdDir } kind = Kind::Host;
    UniqueFd host;         // Kind::Host only
    bool directory = false;
    // A pipe end or an eventfd: its host fd is O_NONBLOCK, and a guest read
    // or write without O_NONBLOCK that finds it not ready waits outside the
    // server's lock (syscall_server.h), as a blocking call.
    bool stream = false;
    uint64_t flags = 0;    // the guest's open flags (access mode, O_APPEND, O_NONBLOCK ...)
    std::string link;      // what readlink of /proc/self/fd/N gives: the guest's path, "pipe:[ino]", ...
    int stdio = -1;        // which of the VMM's own streams (0, 1, 2) it is, when they are lent (host_stdio.h)
    std::shared_ptr<EpollSet> epoll; // Kind::Epoll
    uint64_t dir_next = 0;           // Kind::ProcFdDir: the next entry getdents64 gives
};

class FdTable {
public:
    // 0, 1, 2 on the console; `limit` is clamped to [3, kMaxFds].
    explicit FdTable(int limit = kMaxFds);
    int limit() const { return static_cast<int>(slots_.size()); }

    // Lowest free descriptor >= min_fd, or -EMFILE.
    int install(std::shared_ptr<OpenFile> file, int min_fd = 0);
    // nullptr when fd is not open (EBADF).
    OpenFile* get(int64_t fd) const;
    std::shared_ptr<OpenFile> share(int64_t fd) const;
    // 0 or -EBADF.
    int close(int64_t fd);
    // dup2/dup3's placement: replaces newfd. 0 or -EBADF.
    int place(int64_t newfd, std::shared_ptr<OpenFile> file);
    int open_count() const;
    // The open descriptors, lowest first (/proc/self/fd).
    std::vector<int> open_fds() const;

private:
    std::vector<std::shared_ptr<OpenFile>> slots_;
};

} // namespace kvmgpu::linux_abi
