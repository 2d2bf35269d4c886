/* The guest <-> VMM platform contract: guest-physical memory map, boot info,
 * and the small platform devices (debug console, boot marker, exit port).
 *
 * Freestanding-safe: no libc, usable from the guest build and the VMM alike.
 * Every layout here is checked with static asserts; bump
 * KVMGPU_PLATFORM_ABI_VERSION on any change. Linux-ABI guests (static
 * Linux executables) keep the MMIO window and the boot info and add
 * linux_abi.h: identity map, AT_KVMGPU_BOOT_INFO, the system-call stub. */
#ifndef KVMGPU_ABI_PLATFORM_ABI_H
#define KVMGPU_ABI_PLATFORM_ABI_H

#include <stdint.h>

#define KVMGPU_PLATFORM_ABI_VERSION 2u

/* ---- guest-physical memory map ----------------------------------------
 * RAM is one range [0, ram_size). The first MiB belongs to the VMM's boot
 * structures; guest images are linked at KVMGPU_IMAGE_BASE and above.
 * Devices live in an MMIO window far above RAM (below 2^39, so it fits the
 * narrowest physical-address width we meet: QEMU TCG's 40 bits). */
#define KVMGPU_BOOT_INFO_GPA 0x1000ull    /* struct kvmgpu_boot_info; rdi at entry; FS base (so a
                                             stack-protector canary at %fs:0x28 reads the seed) */
#define KVMGPU_GDT_GPA 0x2000ull          /* VMM's flat 64-bit GDT */
#define KVMGPU_TSS_GPA 0x2800ull          /* VMM's TSS; its I/O bitmap opens ports < 0x600 to ring 3 */
#define KVMGPU_TSS_OPEN_PORTS 0x600u
#define KVMGPU_IDT_GPA 0x2A00ull          /* VMM's IDT: vectors 0-31 -> the fault stubs */
#define KVMGPU_FAULT_STUBS_GPA 0x2C00ull  /* 16 bytes per vector: write it to the fault port */
#define KVMGPU_FAULT_STACK_TOP 0x3000ull  /* ring-0 stack (TSS RSP0) for the exception frame */
#define KVMGPU_BOOT_PML4_GPA 0x3000ull    /* VMM's identity page tables start here */
#define KVMGPU_BOOT_TABLES_END 0xF0000ull /* ... and end below this */
#define KVMGPU_CMDLINE_GPA 0xF0000ull     /* guest argument string, NUL-terminated */
#define KVMGPU_CMDLINE_MAX 4096u
#define KVMGPU_IMAGE_BASE 0x100000ull     /* 1 MiB: lowest address a PT_LOAD may use */

#define KVMGPU_MMIO_BASE 0x4000000000ull /* 256 GiB */
#define KVMGPU_MMIO_SIZE 0x100000ull     /* the VMM identity-maps this window */
#define KVMGPU_MAX_RAM KVMGPU_MMIO_BASE  /* RAM must end below the MMIO window */

/* Debug console (MMIO). */
#define KVMGPU_CONSOLE_GPA (KVMGPU_MMIO_BASE + 0x0000ull)
#define KVMGPU_CONSOLE_SIZE 0x1000ull
#define KVMGPU_CONSOLE_REG_PUTC 0x0u  /* 1-byte write: one character */
#define KVMGPU_CONSOLE_REG_WRITE 0x8u /* 8-byte write: GPA of a kvmgpu_console_buf */
#define KVMGPU_CONSOLE_MAX_LINE 4096u

/* Boot marker (MMIO): an 8-byte write records "guest reached stage <value>"
 * with a host timestamp. The runtime writes stage 1 as its first instruction. */
#define KVMGPU_MARKER_GPA (KVMGPU_MMIO_BASE + 0x1000ull)
#define KVMGPU_MARKER_SIZE 0x1000ull
#define KVMGPU_MARKER_STAGE_ENTRY 1u
#define KVMGPU_MARKER_STAGE_MAIN 2u

/* CPU control (MMIO): what a guest running in ring 3 cannot do itself.
 * - LOAD_CR3: an 8-byte write of a page-table root (4 KiB aligned, in RAM)
 *   makes the VMM load it into CR3 before the guest's next instruction,
 *   which also flushes the TLB: write it after building new tables and
 *   after changing or clearing an entry that was present.
 * - CALIBRATE: an 8-byte write of N opens the calibration window (the guest
 *   then runs a loop of N dec/jnz iterations), a write of 0 closes it. The
 *   VMM counts the instructions KVM emulated inside the window, which says
 *   whether guest code runs natively or through KVM's instruction emulator. */
#define KVMGPU_CPU_CONTROL_GPA (KVMGPU_MMIO_BASE + 0x2000ull)
#define KVMGPU_CPU_CONTROL_SIZE 0x1000ull
#define KVMGPU_CPU_CONTROL_REG_LOAD_CR3 0x0u
#define KVMGPU_CPU_CONTROL_REG_CALIBRATE 0x8u
#define KVMGPU_CALIBRATION_LOOPS 1000000ull

/* Privilege: guests run in 64-bit ring 3 (CS 0x33, SS/DS 0x2b, RFLAGS.IOPL
 * 3 so port I/O is allowed at CPL3), every page-table entry with U=1
 * (Linux-ABI guests: IOPL 0 and the VMM's pages kept from ring 3, linux_abi.h). The
 * VMM's IDT sends every exception to its stubs (fault port), which end the
 * run; the VMM reports the vector, RIP, the faulting access and the
 * instruction at RIP. Guests keep [KVMGPU_GDT_GPA, KVMGPU_BOOT_PML4_GPA)
 * mapped and unwritten. */
#define KVMGPU_USER_CODE_SELECTOR 0x33u
#define KVMGPU_USER_DATA_SELECTOR 0x2bu

/* vGPU register block (see vgpu_abi.h); doorbell on its own page so it can
 * be an ioeventfd without catching other register writes. */
#define KVMGPU_VGPU_GPA (KVMGPU_MMIO_BASE + 0x10000ull)
#define KVMGPU_VGPU_SIZE 0x2000ull

/* Exit device (port I/O): a 4-byte write ends the run with that code.
 * 0 means the guest's own checks passed. */
#define KVMGPU_EXIT_PORT 0x500u
#define KVMGPU_EXIT_PORT_SIZE 4u
#define KVMGPU_EXIT_PASS 0u

/* Fault port (port I/O): the VMM's own exception stubs write the vector
 * here from ring 0; the VMM then reads the exception frame and ends the run
 * with a one-line reason (or, for a Linux-ABI guest with a handler for the
 * signal, delivers it). Not for guest code. Each stub first pushes RAX and
 * then RDX (the registers it uses), so RSP points at the saved RDX, RAX
 * above it, then the CPU's frame ([error code,] RIP, CS, RFLAGS, RSP, SS). */
#define KVMGPU_FAULT_PORT 0x504u
#define KVMGPU_FAULT_PORT_SIZE 4u
#define KVMGPU_FAULT_SAVED_BYTES 16u

#define KVMGPU_BOOT_MAGIC 0x4B564D47u /* "KVMG" */
#define KVMGPU_HELLO_MEMORY_MAGIC 0x48454C4C4F21ull /* hello leaves this in boot_info */
#define KVMGPU_HELLO_RBX_MAGIC 0xC0FFEE0DDBA11ull   /* ... and this in rbx at exit */

/* Boot info: written by the VMM at KVMGPU_BOOT_INFO_GPA; rdi points to it at
 * entry. The guest may write only the guest_* fields. */
struct kvmgpu_boot_info {
    uint32_t magic;           /* KVMGPU_BOOT_MAGIC */
    uint32_t abi_version;     /* KVMGPU_PLATFORM_ABI_VERSION */
    uint64_t ram_size;        /* bytes of RAM from GPA 0 */
    uint64_t image_end;       /* first free GPA after the image, 2 MiB aligned */
    uint64_t host_page_size;  /* backing page size of guest RAM on the host */
    uint64_t tsc_khz;         /* guest TSC frequency, 0 if unknown */
    uint64_t seed;            /* random seed for the guest's scatter allocator */
    uint64_t cmdline_gpa;     /* KVMGPU_CMDLINE_GPA */
    uint32_t cmdline_len;     /* bytes before the NUL */
    uint32_t flags;           /* KVMGPU_BOOT_FLAG_* */
    uint64_t guest_result;    /* written by the guest (hello: memory magic) */
    uint64_t reserved[7];
};
#define KVMGPU_BOOT_FLAG_NESTED 0x1u /* the VMM believes KVM itself is nested */

struct kvmgpu_console_buf {
    uint32_t len; /* bytes in data, <= KVMGPU_CONSOLE_MAX_LINE */
    uint32_t reserved;
    char data[];
};

#ifdef __cplusplus
static_assert(sizeof(struct kvmgpu_boot_info) == 128, "boot info is 128 bytes");
static_assert(__builtin_offsetof(struct kvmgpu_boot_info, guest_result) == 64, "offset");
static_assert(sizeof(struct kvmgpu_console_buf) == 8, "console header is 8 bytes");
static_assert(KVMGPU_IMAGE_BASE > KVMGPU_CMDLINE_GPA + KVMGPU_CMDLINE_MAX - 1, "layout");
static_assert(KVMGPU_EXIT_PORT + KVMGPU_EXIT_PORT_SIZE <= KVMGPU_TSS_OPEN_PORTS, "exit port reachable from ring 3");
static_assert(KVMGPU_IDT_GPA + 32 * 16 <= KVMGPU_FAULT_STUBS_GPA && KVMGPU_FAULT_STUBS_GPA + 32 * 16 + 64 <= KVMGPU_FAULT_STACK_TOP &&
                  KVMGPU_FAULT_STACK_TOP <= KVMGPU_BOOT_PML4_GPA, "fault delivery layout");
#else
_Static_assert(sizeof(struct kvmgpu_boot_info) == 128, "boot info is 128 bytes");
#endif

#endif
