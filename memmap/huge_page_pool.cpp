#include "memmap/huge_page_pool.h"

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <string>

namespace memmap {

namespace {

std::optional<uint64_t> read_counter(const std::string& path) {
    std::ifstream in(path);
    uint64_t v = 0;
    if (!(in >> v)) return std::nullopt;
    return v;
}

// The kernel's default huge page size (Hugepagesize in /proc/meminfo), in
// bytes; /proc/sys/vm/nr_hugepages controls the pool of that size only.
uint64_t default_huge_page_bytes() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    uint64_t kib = 0;
    std::string unit;
    while (in >> key) {
        if (key == "Hugepagesize:" && in >> kib) return kib * 1024;
        std::getline(in, unit);
    }
    return 0;
}

// "2M" -> "2 MiB", for messages people read.
std::string human(PageSize page) {
    const std::string_view name = to_string(page);
    return std::string(name.substr(0, name.size() - 1)) + " " + name.back() + "iB";
}

} // namespace

uint64_t HugePagePool::available() const {
    const uint64_t unclaimed = free > reserved ? free - reserved : 0;
    const uint64_t grow = overcommit > surplus ? overcommit - surplus : 0;
    return unclaimed + grow;
}

std::string huge_page_pool_dir(PageSize page) {
    return "/sys/kernel/mm/hugepages/hugepages-" + std::to_string(bytes(page) / 1024) + "kB";
}

std::optional<HugePagePool> read_huge_page_pool(PageSize page) {
    if (page == PageSize::k4K) return std::nullopt;
    const std::string dir = huge_page_pool_dir(page);
    const auto total = read_counter(dir + "/nr_hugepages");
    const auto free = read_counter(dir + "/free_hugepages");
    if (!total || !free) return std::nullopt;
    HugePagePool pool;
    pool.total = *total;
    pool.free = *free;
    pool.reserved = read_counter(dir + "/resv_hugepages").value_or(0);
    pool.surplus = read_counter(dir + "/surplus_hugepages").value_or(0);
    pool.overcommit = read_counter(dir + "/nr_overcommit_hugepages").value_or(0);
    return pool;
}

std::string reserve_command(PageSize page, uint64_t total_pages) {
    const std::string file = bytes(page) == default_huge_page_bytes()
                                 ? std::string("/proc/sys/vm/nr_hugepages")
                                 : huge_page_pool_dir(page) + "/nr_hugepages";
    return "echo " + std::to_string(total_pages) + " > " + file;
}

std::string pool_shortage_message(PageSize page, uint64_t needed, const std::optional<HugePagePool>& pool) {
    char buf[512];
    if (!pool) {
        std::snprintf(buf, sizeof buf,
                      "%" PRIu64 " huge pages of %s needed, but this kernel has no %s pool (%s missing; "
                      "the CPU or kernel does not support that page size)",
                      needed, human(page).c_str(), human(page).c_str(), huge_page_pool_dir(page).c_str());
        return buf;
    }
    const uint64_t avail = pool->available();
    const uint64_t short_by = needed > avail ? needed - avail : 0;
    const std::string cmd = reserve_command(page, pool->total + short_by);
    std::snprintf(buf, sizeof buf,
                  "%" PRIu64 " huge pages of %s needed, %" PRIu64 " available (%" PRIu64 " free, %" PRIu64
                  " reserved by others, pool of %" PRIu64 "); reserve them as root: %s",
                  needed, human(page).c_str(), avail, pool->free, pool->reserved, pool->total, cmd.c_str());
    return buf;
}

} // namespace memmap
