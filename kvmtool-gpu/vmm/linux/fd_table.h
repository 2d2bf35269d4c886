// A Linux-ABI guest's file descriptors: 0 (stdin: end of file), 1 and 2
// (the console), and files and directories of the share, at most limit()
// in all (EMFILE past it): kMaxFds, or fewer where the VMM's own descriptor
// limit is shared by several VMs (util/process_limits.h). A descriptor owns
// its host fd; dup shares it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kvmtool-gpu/kvm/unique_fd.h"

namespace kvmgpu::linux_abi {

constexpr int kMaxFds = 256;

struct OpenFile {
    enum class Kind { ConsoleIn, ConsoleOut, Host } kind = Kind::Host;
    UniqueFd host;         // Kind::Host only
    bool directory = false;
    uint64_t flags = 0;    // the guest's open flags (access mode, O_APPEND, ...)
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

private:
    std::vector<std::shared_ptr<OpenFile>> slots_;
};

} // namespace kvmgpu::linux_abi
