#include "memmap/fork_sharing.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>
#include <system_error>

namespace memmap {

int create_memfd(const char* name, uint64_t size, unsigned flags) {
    const int fd = memfd_create(name, MFD_CLOEXEC | flags);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), std::string("memfd_create(") + name + ")");
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
        const int err = errno;
        close(fd);
        throw std::system_error(err, std::generic_category(),
                                std::string("ftruncate of memfd ") + name + " to " + std::to_string(size) + " bytes");
    }
    return fd;
}

void* map_unforked(int fd, uint64_t size, int extra_flags) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | extra_flags, fd, 0);
    if (p == MAP_FAILED) return p;
    // Without this every later fork (a GPU worker for another VM, a native
    // benchmark child) would map these pages too.
    if (madvise(p, size, MADV_DONTFORK) != 0) {
        const int err = errno;
        munmap(p, size);
        errno = err;
        return MAP_FAILED;
    }
    return p;
}

ForkShare create_unforked_shared(const char* name, uint64_t size) {
    const int fd = create_memfd(name, size);
    void* p = map_unforked(fd, size);
    if (p == MAP_FAILED) {
        const int err = errno;
        close(fd);
        throw std::system_error(err, std::generic_category(), std::string("mmap(MAP_SHARED) of ") + name);
    }
    return ForkShare{p, size, fd};
}

void destroy_unforked_shared(const ForkShare& s) {
    munmap(s.addr, s.size);
    close(s.fd);
}

void* map_received(int fd, uint64_t size, const char* what) {
    struct stat st{};
    if (fstat(fd, &st) != 0) {
        const int err = errno;
        close(fd);
        throw std::system_error(err, std::generic_category(), std::string("fstat of ") + what);
    }
    if (static_cast<uint64_t>(st.st_size) < size) {
        close(fd);
        throw std::invalid_argument(std::string(what) + ": the descriptor holds " + std::to_string(st.st_size) +
                                    " bytes, not " + std::to_string(size));
    }
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        const int err = errno;
        close(fd);
        throw std::system_error(err, std::generic_category(), std::string("mmap of ") + what);
    }
    return p;
}

} // namespace memmap
