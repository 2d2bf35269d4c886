// A Linux-ABI guest giving its own RAM second names with the VMM's
// KVMGPU_LINUX_SYS_ALIAS (linux-guests.sh): bytes written through one name
// are read through the other, in this vCPU and in a thread's vCPU that was
// already running when the alias was made (no TLB flush is owed for a new
// mapping); the VMM's own system calls read through an alias; hostile
// arguments are refused with the documented errno.
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>

#include "kvmtool-gpu/abi/linux_abi.h"

#include "guest_check.h"

constexpr uint64_t k2M = 2ull << 20;

static long alias(uint64_t va, uint64_t gpa, uint64_t len) {
    return syscall(static_cast<long>(KVMGPU_LINUX_SYS_ALIAS), va, gpa, len) == 0 ? 0 : errno;
}

static std::atomic<int> g_stage{0};
static std::atomic<uint64_t> g_seen{0};
static volatile uint64_t* g_far = nullptr;

// Running before the alias exists: it must see the new mapping without a flush.
static void* reader(void*) {
    g_stage.store(1);
    while (g_stage.load() != 2) {}
    g_seen.store(g_far[1]);
    g_far[2] = 0x7777;
    g_stage.store(3);
    return nullptr;
}

int main() {
    void* raw = mmap(nullptr, 3 * k2M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(raw != MAP_FAILED, "mmap");
    auto* ram = reinterpret_cast<uint64_t*>((reinterpret_cast<uintptr_t>(raw) + k2M - 1) & ~(k2M - 1));
    const uint64_t gpa = reinterpret_cast<uintptr_t>(ram);
    for (uint64_t i = 0; i < k2M / 8; ++i) ram[i] = i * 0x9e3779b97f4a7c15ull;

    const uint64_t near = 64ull << 30;          // a PD under the boot PDPT
    const uint64_t far = 0x7f0000000000ull;      // a new PDPT in another PML4 slot
    CHECK(alias(near, gpa, k2M) == 0, "alias at 64 GiB");
    const auto* n = reinterpret_cast<const uint64_t*>(near);
    bool same = true;
    for (uint64_t i = 0; i < k2M / 8; ++i) same &= n[i] == i * 0x9e3779b97f4a7c15ull;
    CHECK(same, "the alias at 64 GiB reads the RAM's bytes");

    pthread_t t;
    CHECK(pthread_create(&t, nullptr, reader, nullptr) == 0, "pthread_create");
    while (g_stage.load() != 1) {}
    CHECK(alias(far, gpa, k2M) == 0, "alias at 0x7f0000000000");
    g_far = reinterpret_cast<volatile uint64_t*>(far);
    g_far[0] = 0x1234; // written through the far name ...
    CHECK(ram[0] == 0x1234, "a write through the alias reaches the RAM");
    CHECK(n[0] == 0x1234, "... and the other alias");
    g_stage.store(2);
    while (g_stage.load() != 3) {}
    pthread_join(t, nullptr);
    CHECK(g_seen.load() == 1 * 0x9e3779b97f4a7c15ull, "a running thread reads the new alias");
    CHECK(ram[2] == 0x7777, "a running thread writes through the new alias");

    // The VMM's own calls take pointers into an alias.
    memcpy(reinterpret_cast<char*>(far) + 64, "guest: written from an alias\n", 29);
    CHECK(write(1, reinterpret_cast<char*>(far) + 64, 29) == 29, "write(2) from an alias");

    // Hostile arguments.
    CHECK(alias(near + 4096, gpa, k2M) == EINVAL, "unaligned va: EINVAL");
    CHECK(alias(128ull << 30, gpa, 0) == EINVAL, "empty: EINVAL");
    CHECK(alias(1ull << 47, gpa, k2M) == EINVAL, "past the lower canonical half: EINVAL");
    CHECK(alias(~0ull & ~(k2M - 1), gpa, 2 * k2M) == EINVAL, "wrapping: EINVAL");
    CHECK(alias(gpa, gpa, k2M) == EEXIST, "over RAM: EEXIST");
    CHECK(alias(near, gpa, k2M) == EEXIST, "over an alias: EEXIST");
    CHECK(alias(128ull << 30, gpa + 64 * k2M * 1024, k2M) == EFAULT, "past RAM: EFAULT");

    if (failures) {
        printf("guest: alias_check: %d failed\n", failures);
        return 1;
    }
    printf("guest: alias_check passed\n");
    return 0;
}
