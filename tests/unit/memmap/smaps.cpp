#include "smaps.h"

#include <sys/statfs.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace memmap_test {

bool SmapsEntry::has_flag(std::string_view flag) const {
    std::istringstream in(vm_flags);
    std::string f;
    while (in >> f)
        if (f == flag) return true;
    return false;
}

std::optional<SmapsEntry> smaps_for(const void* addr) {
    const auto a = reinterpret_cast<uintptr_t>(addr);
    std::ifstream in("/proc/self/smaps");
    std::string line;
    std::optional<SmapsEntry> cur;
    while (std::getline(in, line)) {
        unsigned long long s = 0, e = 0;
        int consumed = 0;
        // A VMA header: "start-end perms offset dev inode path".
        if (std::sscanf(line.c_str(), "%llx-%llx %n", &s, &e, &consumed) == 2 && consumed > 0) {
            if (cur) return cur; // the previous VMA was ours and is complete
            if (s <= a && a < e) cur = SmapsEntry{s, e};
            continue;
        }
        if (!cur) continue;
        std::istringstream fields(line);
        std::string key;
        fields >> key;
        uint64_t v = 0;
        if (key == "VmFlags:") {
            std::getline(fields, cur->vm_flags);
        } else if (fields >> v) {
            if (key == "KernelPageSize:") cur->kernel_page_kb = v;
            else if (key == "Rss:") cur->rss_kb = v;
            else if (key == "AnonHugePages:") cur->anon_huge_kb = v;
            else if (key == "Private_Hugetlb:" || key == "Shared_Hugetlb:") cur->hugetlb_kb += v;
        }
    }
    return cur;
}

bool hugetlbfs_mount_with_room(uint64_t bytes, uint64_t pages) {
    std::ifstream in("/proc/mounts");
    std::string dev, dir, type, rest;
    while (in >> dev >> dir >> type && std::getline(in, rest)) {
        if (type != "hugetlbfs") continue;
        struct statfs sfs {};
        if (statfs(dir.c_str(), &sfs) != 0 || static_cast<uint64_t>(sfs.f_bsize) != bytes) continue;
        if (sfs.f_blocks == 0 || static_cast<uint64_t>(sfs.f_bavail) >= pages) return true;
    }
    return false;
}

} // namespace memmap_test
