/* The contract between the VMM and a Linux-ABI guest: an ordinary static
 * x86-64 Linux executable (glibc, libstdc++; `g++ -static` or
 * `-static-pie`) whose system calls the VMM serves. Everything in
 * platform_abi.h about the MMIO window and the boot info still holds; this
 * header adds what differs. Freestanding-safe (no libc).
 *
 * Memory (guest virtual == guest physical, docs/runtime-api.md "Linux-ABI guests"):
 * - All of guest RAM [0, ram_size) is identity-mapped, U=1, on 2 MiB pages,
 *   except: the first 2 MiB on 4 KiB pages, and one unmapped 2 MiB guard
 *   below the stack. Below KVMGPU_IMAGE_BASE page 0 is unmapped (NULL
 *   faults), the boot info, command line, clock page and vDSO read-only,
 *   and the VMM's GDT/TSS/IDT/stubs and page tables out of ring 3's reach;
 *   system calls get EFAULT for any of it.
 * - Ring 3 runs at IOPL 0 with IF set and no port open (cli, sti, in, out
 *   fault).
 * - The MMIO window KVMGPU_MMIO_BASE.. is identity-mapped uncached as for
 *   project images: the vGPU at KVMGPU_VGPU_GPA, the console at
 *   KVMGPU_CONSOLE_GPA.
 * - The boot info (struct kvmgpu_boot_info) is written at
 *   KVMGPU_BOOT_INFO_GPA as for project images (ram_size, tsc_khz,
 *   host_page_size, seed; image_end is the first byte after the program).
 *   Its address is also in the auxiliary vector under AT_KVMGPU_BOOT_INFO,
 *   so a library can tell that it runs under kvmtool-gpu. The FS base
 *   belongs to glibc (0 at entry, set by arch_prctl).
 * - brk and anonymous mmap hand out guest RAM: every pointer the program
 *   holds is its own guest-physical address, and a contiguous virtual range
 *   is contiguous guest-physical memory.
 *
 * - The VMM's vDSO (kvmtool-gpu/vmm/linux/vdso/) is loaded at
 *   KVMGPU_LINUX_VDSO_GPA and named by AT_SYSINFO_EHDR, as Linux names its
 *   own, so glibc reads the clocks (clock_gettime, gettimeofday, time)
 *   without a system call: from the TSC, which ring-3 guest code reads
 *   natively, and the VMM's clock parameters in struct kvmgpu_vvar at
 *   KVMGPU_LINUX_VVAR_GPA.
 *
 * Entry: ring 3 at the ELF entry (static-pie: loaded at
 * KVMGPU_LINUX_PIE_BASE), RSP at the Linux start-up stack (argc, argv, envp,
 * auxv), every other general register 0. A `syscall` enters the VMM's
 * ring-0 stub at KVMGPU_LINUX_SYSCALL_STUB_GPA, whose port write hands the
 * call to the VMM, which returns to ring 3 after the instruction (RCX and
 * R11 clobbered, as on Linux; RFLAGS filtered as SYSRET's, a non-canonical
 * RCX a guest fault). */
#ifndef KVMGPU_ABI_LINUX_ABI_H
#define KVMGPU_ABI_LINUX_ABI_H

#include "platform_abi.h"

/* Auxiliary-vector entry: value is KVMGPU_BOOT_INFO_GPA. ("KG") */
#define AT_KVMGPU_BOOT_INFO 0x4B47u

/* Where a static-pie executable (ET_DYN) is loaded. */
#define KVMGPU_LINUX_PIE_BASE 0x400000ull

/* The VMM's ring-0 system-call stub (LSTAR): `out %al, $KVMGPU_LINUX_SYSCALL_PORT; ud2`. */
#define KVMGPU_LINUX_SYSCALL_STUB_GPA 0xF1000ull
#define KVMGPU_LINUX_SYSCALL_PORT 0x82u

/* The clock page and the vDSO image after it, both below the image base. */
#define KVMGPU_LINUX_VVAR_GPA 0xF2000ull
#define KVMGPU_LINUX_VDSO_GPA 0xF3000ull
#define KVMGPU_LINUX_VDSO_MAX (KVMGPU_IMAGE_BASE - KVMGPU_LINUX_VDSO_GPA)

/* The guest's clocks as lines over its TSC, written by the VMM:
 *   CLOCK_MONOTONIC = mono_base_ns + (((tsc - tsc_base) * mult) >> 32)
 *   CLOCK_REALTIME  = that + realtime_offset_ns (CLOCK_BOOTTIME, _RAW: theirs)
 * `seq` is odd while the VMM rewrites the page (a seqlock); `valid` is 0
 * when the VMM has no usable TSC, and the vDSO then makes the system call. */
struct kvmgpu_vvar {
    uint32_t seq;
    uint32_t valid;
    uint64_t tsc_base;
    uint64_t mult;               /* ns per TSC tick, times 2^32 */
    int64_t mono_base_ns;
    int64_t realtime_offset_ns;
    int64_t boottime_offset_ns;
    int64_t raw_offset_ns;
};

/* kvmtool-gpu's own system call (far above Linux's numbers):
 *   syscall(KVMGPU_LINUX_SYS_ALIAS, va, gpa, len)
 * maps guest virtual [va, va + len) onto guest RAM [gpa, gpa + len), which
 * the identity map already gives the guest, on 2 MiB pages: all three 2 MiB
 * aligned, va in the lower canonical half above RAM and over nothing mapped.
 * An alias is for good (never changed or removed, so no TLB flush is ever
 * owed), and the VMM's own system calls take pointers into it as into RAM.
 * 0, or -EINVAL, -EEXIST (va taken), -EFAULT (gpa not RAM), -ENOMEM.
 * The guest library gives page-locked and managed memory the device's
 * addresses with it (docs/managed-memory.md). */
#define KVMGPU_LINUX_SYS_ALIAS 0x4B470001ull

/* Guard (unmapped, 2 MiB) and stack at the top of RAM. */
#define KVMGPU_LINUX_GUARD_BYTES 0x200000ull

/* The file-mapping window: guest-physical space outside RAM, identity
 * mapped (user, read-write-execute) by the boot tables, where the VMM
 * places a Linux-ABI guest's file mappings as KVM memory slots over host
 * mappings of the files (vmm/linux/file_window.h). Below the MMIO window,
 * above the largest RAM the boot tables map. Not RAM: the vGPU never takes
 * addresses in it (the guest libcuda stages them through RAM). */
#define KVMGPU_LINUX_FILE_WINDOW_GPA 0x3800000000ull /* 224 GiB */
#define KVMGPU_LINUX_FILE_WINDOW_SIZE 0x800000000ull /* 32 GiB */

#ifdef __cplusplus
static_assert(KVMGPU_LINUX_SYSCALL_STUB_GPA >= KVMGPU_CMDLINE_GPA + KVMGPU_CMDLINE_MAX &&
                  KVMGPU_LINUX_SYSCALL_STUB_GPA + 0x1000 <= KVMGPU_IMAGE_BASE,
              "stub page between the command line and the image base");
static_assert(KVMGPU_LINUX_SYSCALL_PORT < KVMGPU_EXIT_PORT, "a port of its own");
static_assert(KVMGPU_LINUX_FILE_WINDOW_GPA % (1ull << 30) == 0 && KVMGPU_LINUX_FILE_WINDOW_SIZE % (1ull << 30) == 0 &&
                  KVMGPU_LINUX_FILE_WINDOW_GPA + KVMGPU_LINUX_FILE_WINDOW_SIZE <= KVMGPU_MMIO_BASE,
              "the file window: whole GiB, below the MMIO window");
static_assert(KVMGPU_LINUX_VVAR_GPA >= KVMGPU_LINUX_SYSCALL_STUB_GPA + 0x1000 &&
                  KVMGPU_LINUX_VDSO_GPA >= KVMGPU_LINUX_VVAR_GPA + 0x1000 && KVMGPU_LINUX_VDSO_GPA < KVMGPU_IMAGE_BASE,
              "clock page and vDSO between the stub and the image base");
static_assert(sizeof(struct kvmgpu_vvar) == 56, "vvar layout");
#endif

#endif
