// The file window (vmm/linux/file_window.h) from inside a dynamic guest run
// with --root /: its libraries are mapped there (not copied into RAM), a
// file of the root mapped privately reads as the file, a write to a
// writable private mapping stays private (the file and another mapping
// unchanged), a write to a read-only mapping is the guest's SIGSEGV (its
// handler runs; with "crash", no handler: the run ends with a guest fault),
// and mappings past the slot cap still work (copied into RAM).
// Usage: file_map_check FILE [crash]
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "guest_check.h"

namespace {
constexpr uint64_t kWindowLo = 0x3800000000ull, kWindowHi = 0x4000000000ull; // KVMGPU_LINUX_FILE_WINDOW_*
bool in_window(const void* p) {
    const auto a = reinterpret_cast<uint64_t>(p);
    return a >= kWindowLo && a < kWindowHi;
}
sigjmp_buf back;
volatile uint64_t fault_addr = 0;
void on_segv(int, siginfo_t* info, void*) {
    fault_addr = reinterpret_cast<uint64_t>(info->si_addr);
    siglongjmp(back, 1);
}
} // namespace

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    // ld.so mapped libc: in the window, with its path and a file offset.
    std::ifstream maps("/proc/self/maps");
    bool libc_in_window = false;
    for (std::string line; std::getline(maps, line);)
        if (line.find("libc.so") != std::string::npos && strtoull(line.c_str(), nullptr, 16) >= kWindowLo)
            libc_in_window = true;
    CHECK(libc_in_window, "libc is not mapped in the file window");
    if (libc_in_window) printf("guest: libc mapped in the file window\n");

    const int fd = open(argv[1], O_RDONLY);
    CHECK(fd >= 0, "open %s", argv[1]);
    char want[64] = {};
    CHECK(pread(fd, want, sizeof want - 1, 0) > 0, "pread");
    auto* ro = static_cast<char*>(mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd, 0));
    CHECK(ro != MAP_FAILED && in_window(ro), "read-only mapping not in the window: %p", static_cast<void*>(ro));
    CHECK(ro != MAP_FAILED && memcmp(ro, want, strlen(want)) == 0, "mapping reads as the file");
    auto* rw = static_cast<char*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
    CHECK(rw != MAP_FAILED && in_window(rw), "writable private mapping not in the window");
    if (rw != MAP_FAILED && ro != MAP_FAILED) {
        rw[0] = 'X';
        char disk = 0;
        CHECK(pread(fd, &disk, 1, 0) == 1 && disk == want[0], "the file changed");
        CHECK(ro[0] == want[0], "another mapping saw the private write");
        CHECK(rw[0] == 'X', "the private write did not stick");
        if (disk == want[0] && ro[0] == want[0] && rw[0] == 'X') printf("guest: private writes stay private\n");
        // mprotect adds write to the read-only mapping: writable from now on.
        CHECK(mprotect(ro, 4096, PROT_READ | PROT_WRITE) == 0, "mprotect");
        ro[1] = 'Y';
        CHECK(ro[1] == 'Y', "mprotect'd write");
        CHECK(mprotect(ro, 4096, PROT_READ) == 0, "mprotect back");
    }

    // Past the slot cap: every mapping still works (the later ones copied into RAM).
    std::vector<char*> many;
    size_t outside = 0;
    for (int i = 0; i < 4600; ++i) {
        auto* p = static_cast<char*>(mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd, 0));
        if (p == MAP_FAILED) break;
        if (p[0] != want[0]) break;
        outside += !in_window(p);
        many.push_back(p);
    }
    CHECK(many.size() == 4600, "only %zu of 4600 mappings", many.size());
    CHECK(outside > 0, "no mapping past the slot cap went to RAM");
    for (char* p : many) munmap(p, 4096);
    if (many.size() == 4600 && outside > 0) printf("guest: slot cap: later mappings copied into RAM\n");

    if (argc > 2 && strcmp(argv[2], "crash") == 0) {
        printf("guest: writing a read-only mapping without a handler\n");
        fflush(stdout);
        *const_cast<volatile char*>(ro + 8) = 'Z';
        printf("FAILED: the write went through\n");
        return 1;
    }
    struct sigaction sa = {};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, nullptr);
    if (sigsetjmp(back, 1) == 0) {
        *const_cast<volatile char*>(ro + 8) = 'Z';
        CHECK(false, "a write to a read-only file mapping went through");
    } else {
        CHECK(fault_addr == reinterpret_cast<uint64_t>(ro + 8), "si_addr %llx", static_cast<unsigned long long>(fault_addr));
        printf("guest: SIGSEGV for a write to a read-only file mapping\n");
    }
    CHECK(ro[8] == want[8], "the refused write changed the mapping");
    printf("guest: file_map_check done, %d failures\n", failures);
    return failures ? 1 : 0;
}
