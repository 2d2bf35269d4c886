/* Guest entry point. The VMM enters here in 64-bit long mode at ring 3 with
 * paging on, RDI = boot info GPA, RSP = 0 and interrupts off. We announce
 * ourselves on the boot marker first (so a later hang is told apart from a failed load),
 * take a stack in .bss, zero .bss, run the C++ runtime (which calls
 * guest_main) and write its return value to the exit port. */
#include "guest-stub/runtime/entry_defs.h"

    .section .text.entry, "ax", @progbits
    .globl _start
    .type _start, @function
_start:
    movabs  $GUEST_ENTRY_MARKER_GPA, %rax
    movq    $GUEST_ENTRY_MARKER_STAGE, (%rax)

    leaq    guest_stack_top(%rip), %rsp
    movq    %rdi, %r12                  /* boot info, callee-saved */

    /* .bss, stack included, to zero: nothing lives on the stack yet. */
    leaq    __bss_start(%rip), %rdi
    leaq    __bss_end(%rip), %rcx
    subq    %rdi, %rcx
    xorl    %eax, %eax
    cld
    rep stosb

    movq    %r12, %rdi
    andq    $-16, %rsp                  /* ABI: 16-byte aligned at the call */
    xorl    %ebp, %ebp
    call    kvmgpu_runtime_start        /* returns guest_main's exit code */

    movl    %eax, %edi
    xorl    %esi, %esi
    jmp     kvmgpu_exit_with_rbx
    .size _start, . - _start

/* [[noreturn]] void kvmgpu_exit_with_rbx(uint32_t code, uint64_t rbx)
 * Loads rbx, writes code to the exit port, then spins for good. Written in
 * assembly so nothing between the rbx load and the port write clobbers it
 * (the hello test asserts rbx). */
    .text
    .globl kvmgpu_exit_with_rbx
    .type kvmgpu_exit_with_rbx, @function
kvmgpu_exit_with_rbx:
    movq    %rsi, %rbx
    movl    %edi, %eax
    movw    $GUEST_ENTRY_EXIT_PORT, %dx
    outl    %eax, %dx
1:  pause                               /* ring 3 may not HLT; the VMM never */
    jmp     1b                          /* resumes a guest after its exit write */
    .size kvmgpu_exit_with_rbx, . - kvmgpu_exit_with_rbx

    .section .bss.guest_stack, "aw", @nobits
    .balign 4096
    .globl guest_stack_bottom
guest_stack_bottom:
    .skip GUEST_STACK_BYTES
    .globl guest_stack_top
guest_stack_top:

    .section .note.GNU-stack, "", @progbits
