#include "kvmtool-gpu/devices/vgpu/host_alias.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

namespace kvmgpu::vgpu {

namespace {
constexpr uint64_t kPage = 4096;
uint64_t page_of(const uint8_t* p) { return reinterpret_cast<uintptr_t>(p) & ~(kPage - 1); }
} // namespace

std::unique_ptr<HostAlias> HostAlias::make(std::span<const memmap::HostRun> runs, std::string* why) {
    if (runs.empty()) return *why = "nothing to alias", nullptr;
    uint64_t bytes = 0, mapped = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
        const auto start = reinterpret_cast<uintptr_t>(runs[i].host), end = start + runs[i].len;
        if (runs[i].len == 0) return *why = "an empty piece", nullptr;
        if (i > 0 && start % kPage != 0) return *why = "a piece after the first starts inside a page", nullptr;
        if (i + 1 < runs.size() && end % kPage != 0) return *why = "a piece before the last ends inside a page", nullptr;
        mapped += (end + kPage - 1) / kPage * kPage - start / kPage * kPage;
        bytes += runs[i].len;
    }
    void* base = ::mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) return *why = std::string("mmap: ") + std::strerror(errno), nullptr;
    auto* at = static_cast<uint8_t*>(base);
    for (const auto& r : runs) {
        const uint64_t from = page_of(r.host);
        const uint64_t len = (reinterpret_cast<uintptr_t>(r.host) + r.len + kPage - 1) / kPage * kPage - from;
        // Old size 0 on a shared mapping: a second mapping of the same pages.
        if (::mremap(reinterpret_cast<void*>(from), 0, len, MREMAP_MAYMOVE | MREMAP_FIXED, at) == MAP_FAILED) {
            *why = std::string("mremap: ") + std::strerror(errno);
            ::munmap(base, mapped);
            return nullptr;
        }
        at += len;
    }
    return std::unique_ptr<HostAlias>(new HostAlias(static_cast<uint8_t*>(base), mapped,
                                                    reinterpret_cast<uintptr_t>(runs.front().host) % kPage, bytes));
}

HostAlias::~HostAlias() { ::munmap(base_, mapped_); }

} // namespace kvmgpu::vgpu
