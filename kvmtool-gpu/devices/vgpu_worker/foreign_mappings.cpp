#include "kvmtool-gpu/devices/vgpu_worker/foreign_mappings.h"

#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

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

} // namespace kvmgpu::vgpu
