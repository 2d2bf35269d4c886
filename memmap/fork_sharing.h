// Memory a VMM shares with exactly one other process (a VM's GPU worker)
// and with no other. Each such mapping is MAP_SHARED over a file descriptor
// (a memfd, or a hugetlbfs file) and marked MADV_DONTFORK, so no fork
// inherits it: no child of the VMM (a worker zygote started late, a native
// benchmark) finds a VM's RAM, channel or counters in its address space.
// The process that is meant to have a mapping is handed its descriptor and
// maps it itself, the vhost-user shape: a backend gets its VM's memory as
// descriptors and nothing else.
#pragma once

#include <cstdint>
#include <span>

namespace memmap {

// One shared mapping: [addr, addr + size) of `fd` from offset 0.
struct ForkShare {
    void* addr;
    uint64_t size;
    int fd;
};

// A memfd of `size` bytes (close-on-exec; `flags` adds e.g. MFD_HUGETLB).
// Throws std::system_error with the call and errno.
int create_memfd(const char* name, uint64_t size, unsigned flags = 0);

// mmap(MAP_SHARED) of `fd` and MADV_DONTFORK on it; `extra` adds flags such
// as MAP_NORESERVE. Returns MAP_FAILED with errno set (the caller words the
// error: a short huge-page pool is told apart from other failures).
void* map_unforked(int fd, uint64_t size, int extra_flags = 0);

// A MAP_SHARED|MAP_ANONYMOUS-like mapping for small VMM/worker state: a memfd
// named `name`, mapped with map_unforked. Throws std::system_error.
ForkShare create_unforked_shared(const char* name, uint64_t size);
void destroy_unforked_shared(const ForkShare& s); // unmaps and closes

// A descriptor another process handed over (SCM_RIGHTS): mmap(MAP_SHARED)
// of its first `size` bytes, wherever the kernel puts it. Throws
// std::invalid_argument (the file holds fewer bytes) or std::system_error,
// naming `what`; the descriptor is closed on failure.
void* map_received(int fd, uint64_t size, const char* what);

} // namespace memmap
