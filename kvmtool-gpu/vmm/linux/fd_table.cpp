#include "kvmtool-gpu/vmm/linux/fd_table.h"

#include <algorithm>
#include <cerrno>

namespace kvmgpu::linux_abi {

FdTable::FdTable(int limit) : slots_(std::clamp(limit, 3, kMaxFds)) {
    auto in = std::make_shared<OpenFile>();
    in->kind = OpenFile::Kind::ConsoleIn;
    auto out = std::make_shared<OpenFile>();
    out->kind = OpenFile::Kind::ConsoleOut;
    out->flags = 1; // O_WRONLY
    in->link = out->link = "/dev/console";
    slots_[0] = in;
    slots_[1] = out;
    slots_[2] = out;
}

int FdTable::install(std::shared_ptr<OpenFile> file, int min_fd) {
    for (int fd = min_fd < 0 ? 0 : min_fd; fd < limit(); ++fd)
        if (!slots_[fd]) {
            slots_[fd] = std::move(file);
            return fd;
        }
    return -EMFILE;
}

OpenFile* FdTable::get(int64_t fd) const { return fd >= 0 && fd < limit() ? slots_[fd].get() : nullptr; }

std::shared_ptr<OpenFile> FdTable::share(int64_t fd) const {
    return fd >= 0 && fd < limit() ? slots_[fd] : nullptr;
}

int FdTable::close(int64_t fd) {
    if (!get(fd)) return -EBADF;
    slots_[fd].reset();
    return 0;
}

int FdTable::place(int64_t newfd, std::shared_ptr<OpenFile> file) {
    if (newfd < 0 || newfd >= limit()) return -EBADF;
    slots_[newfd] = std::move(file);
    return 0;
}

int FdTable::open_count() const {
    int n = 0;
    for (const auto& s : slots_) n += s != nullptr;
    return n;
}

std::vector<int> FdTable::open_fds() const {
    std::vector<int> out;
    for (int fd = 0; fd < limit(); ++fd)
        if (slots_[fd]) out.push_back(fd);
    return out;
}

} // namespace kvmgpu::linux_abi
