// A Linux-ABI guest doing what ring 3 must not (linux-guests.sh runs one
// mode per VM and checks how the run ends). Usage: hostile_check MODE.
//   flags        system calls with NT, AC and every arithmetic flag set: the
//                RFLAGS ring 3 gets back keep only its own flags, IOPL 0, IF 1
//   vmm-pages    system calls aimed at the VMM's pages: EFAULT; reading the
//                boot info, the command line and the vDSO still works
//   write-tables a store into the boot page tables: a page fault (unmapped)
//   write-vdso   a store into the vDSO: a page fault (read-only)
//   stub         a jump to the system-call stub: a page fault (ring 0's page)
//   cli, sti     #GP (IOPL 0)
//   out, in      port 0x80: #GP, or on KVMs that exit on any port I/O the
//                VMM's refusal; never a device
//   exit-port    the exit device's port from ring 3: the same, not an exit
//   noncanonical `syscall` as the last instruction of the lower half: RCX is
//                2^47; a guest fault naming it, never a return there
//   tf-bad-rsp   `syscall` with TF set and RSP 0: the single-step trap in the
//                ring-0 stub is delivered on the VMM's stack, a clean #DB
//   cr3-thread   a second thread asks the CPU-control device for a bad CR3:
//                refused on its own vCPU, the run ends naming thread 2
//   random N     N random served system calls; ends in an exit or a clean
//                guest fault, never a triple fault
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kvmtool-gpu/abi/linux_abi.h"

#include "guest_check.h"

static uint64_t flags_around_syscall(uint64_t set) {
    uint64_t after;
    asm volatile("pushfq\n\t"
                 "orq %1, (%%rsp)\n\t"
                 "popfq\n\t"
                 "movl $39, %%eax\n\t" // getpid
                 "syscall\n\t"
                 "pushfq\n\t"
                 "popq %0\n\t"
                 "pushfq\n\t"
                 "andq $~0x40000, (%%rsp)\n\t" // AC off again
                 "popfq"
                 : "=r"(after)
                 : "r"(set)
                 : "rax", "rcx", "r11", "memory", "cc");
    return after;
}

static void* ask_for_bad_cr3(void*) {
    *reinterpret_cast<volatile uint64_t*>(KVMGPU_CPU_CONTROL_GPA + KVMGPU_CPU_CONTROL_REG_LOAD_CR3) = 0x1001;
    return nullptr;
}

static int random_calls(long n) {
    const long served[] = {SYS_read, SYS_write, SYS_writev, SYS_fstat, SYS_uname, SYS_getrandom, SYS_clock_gettime,
                           SYS_gettimeofday, SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_prlimit64, SYS_mmap,
                           SYS_munmap, SYS_mprotect, SYS_madvise, SYS_mremap, SYS_brk, SYS_getpid, SYS_arch_prctl,
                           SYS_sched_getaffinity, static_cast<long>(KVMGPU_LINUX_SYS_ALIAS)};
    uint64_t s = 40;
    auto next = [&] { return s = s * 6364136223846793005ull + 1442695040888963407ull, s >> 11; };
    for (long i = 0; i < n; ++i) {
        uint64_t a[6];
        for (auto& v : a) {
            switch (next() % 4) {
            case 0: v = (next() % 0x20000) * 8; break; // the first MiB and the program
            case 1: v = next() % 64; break;
            case 2: v = 0x1000 * (next() % 0x1000); break;
            default: v = next() * 0x9e3779b97f4a7c15ull; break;
            }
        }
        long nr = served[next() % (sizeof served / sizeof served[0])];
        if (nr == SYS_arch_prctl) a[0] = 0x1003; // ARCH_GET_FS: SET would move glibc's TLS
        syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    }
    printf("guest: random: %ld calls made\n", n);
    return 0;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "flags")) {
        constexpr uint64_t kNt = 1u << 14, kAc = 1u << 18, kArith = 0xCD5, kIf = 1u << 9, kIopl = 3u << 12;
        const uint64_t f = flags_around_syscall(kNt | kAc | kArith);
        printf("guest: flags after syscall 0x%lx\n", f);
        CHECK((f & kIopl) == 0, "IOPL 0");
        CHECK(f & kIf, "IF set");
        CHECK((f & kNt) == 0, "NT not returned");
    } else if (!strcmp(mode, "vmm-pages")) {
        timespec ts;
        CHECK(syscall(SYS_clock_gettime, 0, KVMGPU_BOOT_PML4_GPA) == -1 && errno == EFAULT, "clock_gettime into the PML4");
        CHECK(syscall(SYS_getrandom, KVMGPU_IDT_GPA, 64, 0) == -1 && errno == EFAULT, "getrandom over the IDT");
        CHECK(syscall(SYS_uname, KVMGPU_LINUX_SYSCALL_STUB_GPA) == -1 && errno == EFAULT, "uname over the stub");
        CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0, "the clock still works");
        const auto* info = reinterpret_cast<const kvmgpu_boot_info*>(getauxval(AT_KVMGPU_BOOT_INFO));
        CHECK(info && info->magic == KVMGPU_BOOT_MAGIC, "the boot info reads");
        CHECK(*reinterpret_cast<const uint32_t*>(getauxval(AT_SYSINFO_EHDR)) == 0x464c457f, "the vDSO reads");
        printf("guest: vmm-pages: %d failures\n", failures);
    } else if (!strcmp(mode, "write-tables")) {
        *reinterpret_cast<volatile uint64_t*>(KVMGPU_BOOT_PML4_GPA + 8) = 0x400007;
    } else if (!strcmp(mode, "write-vdso")) {
        *reinterpret_cast<volatile uint8_t*>(getauxval(AT_SYSINFO_EHDR)) = 0;
    } else if (!strcmp(mode, "stub")) {
        // getpid through the stub without `syscall`: served (kvm-pvm) and
        // returned to RCX = 0, a NULL fetch; or #GP at the stub's `out`
        // (ring 3 has no port: VMX, SVM).
        asm volatile("xor %%ecx, %%ecx\n\tcall *%1" ::"a"(39), "r"(uint64_t{KVMGPU_LINUX_SYSCALL_STUB_GPA})
                     : "rcx", "r11", "memory");
    } else if (!strcmp(mode, "cli")) {
        asm volatile("cli");
    } else if (!strcmp(mode, "sti")) {
        asm volatile("sti");
    } else if (!strcmp(mode, "out")) {
        asm volatile("outb %%al, $0x80" ::"a"(0));
    } else if (!strcmp(mode, "in")) {
        uint8_t v;
        asm volatile("inb $0x80, %%al" : "=a"(v));
    } else if (!strcmp(mode, "exit-port")) {
        asm volatile("outl %%eax, %%dx" ::"a"(0), "d"(KVMGPU_EXIT_PORT));
    } else if (!strcmp(mode, "noncanonical")) {
        constexpr uint64_t kTop = 1ull << 47, k2M = 2ull << 20;
        void* ram = aligned_alloc(k2M, k2M);
        CHECK(ram != nullptr, "aligned_alloc");
        CHECK(syscall(static_cast<long>(KVMGPU_LINUX_SYS_ALIAS), kTop - k2M, reinterpret_cast<uintptr_t>(ram), k2M) == 0,
              "alias at the top of the lower half");
        auto* code = reinterpret_cast<uint8_t*>(kTop - 2);
        code[0] = 0x0F, code[1] = 0x05; // syscall: RCX = 2^47
        asm volatile("movl $39, %%eax\n\tjmp *%0" ::"r"(code) : "rax", "memory");
    } else if (!strcmp(mode, "tf-bad-rsp")) {
        // IRETQ sets TF and RSP 0 at once; its single-step trap comes after
        // the next instruction, the `syscall`, so in the ring-0 stub.
        asm volatile("movl $39, %%eax\n\t"
                     "pushq $0x2b\n\t" // SS
                     "pushq $0\n\t"    // RSP
                     "pushfq\n\t"
                     "orq $0x100, (%%rsp)\n\t"
                     "pushq $0x33\n\t" // CS
                     "leaq 1f(%%rip), %%rcx\n\t"
                     "pushq %%rcx\n\t"
                     "iretq\n"
                     "1: syscall" ::: "rax", "rcx", "r11", "memory");
    } else if (!strcmp(mode, "cr3-thread")) {
        pthread_t t;
        CHECK(pthread_create(&t, nullptr, ask_for_bad_cr3, nullptr) == 0, "pthread_create");
        pthread_join(t, nullptr);
        for (int i = 0; i < 100; ++i) usleep(1000); // the refusal ends the run meanwhile
    } else if (!strcmp(mode, "random")) {
        return random_calls(argc > 2 ? atol(argv[2]) : 100000);
    } else {
        printf("guest: unknown mode '%s'\n", mode);
        return 2;
    }
    printf("guest: hostile_check %s: still running\n", mode);
    return failures ? 1 : 0;
}
