#include "kvmtool-gpu/devices/vgpu_worker/shared_pieces.h"

#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <string>

namespace kvmgpu::vgpu {

namespace {
bool read_self_maps(std::string* out) {
    const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[16384];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
    close(fd);
    return n == 0;
}

// /proc/self/maps as its lines, in address order; nullopt if unreadable.
std::optional<std::vector<std::string>> self_maps_lines() {
    std::string maps;
    if (!read_self_maps(&maps)) return std::nullopt;
    std::vector<std::string> lines;
    for (size_t pos = 0; pos < maps.size();) {
        const size_t nl = maps.find('\n', pos);
        lines.push_back(maps.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
        pos = nl == std::string::npos ? maps.size() : nl + 1;
    }
    return lines;
}
// What names a VM's memory in /proc/self/maps: the memfds of fork_sharing.h
// users, libhugetlbfs's unlinked files (guest RAM on hugetlbfs), KVM's vCPU
// mappings.
bool names_vm_memory(const std::string& path) {
    return path.starts_with("/memfd:kvmgpu-") || path.starts_with("anon_inode:kvm") ||
           path.find("/libhugetlbfs.tmp.") != std::string::npos;
}
} // namespace

std::optional<std::string> foreign_vm_mapping(std::span<const memmap::ForkShare> own) {
    const auto lines = self_maps_lines();
    if (!lines) return "cannot read /proc/self/maps";
    for (const std::string& line : *lines) {
        uint64_t s, e;
        int path_at = -1;
        if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %*s %*s %*s %*s %n", &s, &e, &path_at) < 2 || path_at < 0)
            continue;
        if (!names_vm_memory(line.substr(static_cast<size_t>(path_at)))) continue;
        bool mine = false;
        for (const memmap::ForkShare& o : own) {
            const auto a = reinterpret_cast<uintptr_t>(o.addr);
            const uint64_t mapped = (o.size + 4095) / 4096 * 4096; // mmap rounds up to whole pages
            mine |= s >= a && e <= a + mapped;
        }
        if (!mine) return line;
    }
    return std::nullopt;
}

std::optional<std::vector<SharedPiece>> shared_pieces(const void* addr, uint64_t bytes) {
    const uint64_t begin = reinterpret_cast<uintptr_t>(addr);
    uint64_t end;
    if (bytes == 0 || __builtin_add_overflow(begin, bytes, &end)) return std::nullopt;
    const auto lines = self_maps_lines();
    if (!lines) return std::nullopt;

    std::vector<SharedPiece> pieces;
    uint64_t at = begin; // first byte not yet covered
    // Lines are in address order: "start-end perms offset major:minor inode [path]".
    for (const std::string& line : *lines) {
        if (at >= end) break;
        uint64_t s, e, off, inode;
        unsigned major, minor;
        char perms[5] = {};
        if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64, &s, &e, perms, &off,
                        &major, &minor, &inode) != 7)
            continue;
        if (e <= at) continue;
        if (s > at) return std::nullopt;                       // a hole
        if (perms[3] != 's' || inode == 0) return std::nullopt; // private, or nothing to name it by
        const SharedPiece p{at, e < end ? e : end, (uint64_t{major} << 32) | minor, inode, off + (at - s)};
        SharedPiece* last = pieces.empty() ? nullptr : &pieces.back();
        // One mapping split into several VMAs (madvise, mlock) is one piece.
        if (last && last->end == p.start && last->dev == p.dev && last->inode == p.inode &&
            last->offset + (last->end - last->start) == p.offset)
            last->end = p.end;
        else
            pieces.push_back(p);
        at = p.end;
    }
    if (at < end) return std::nullopt;
    return pieces;
}

} // namespace kvmgpu::vgpu
