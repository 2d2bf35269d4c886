/* boot_exit: the smallest guest. It marks its entry and writes exit code 0,
 * nothing else, so `kvmtool-gpu bench boot` times VM creation -> first
 * instruction -> exit without the runtime's start-up. The constants are checked against the
 * ABI in runtime/start.cpp. */
#include "guest-stub/runtime/entry_defs.h"

    .section .text.entry, "ax"
    .globl  _start
    .code64
_start:
    movabs  $GUEST_ENTRY_MARKER_GPA, %rax
    movq    $GUEST_ENTRY_MARKER_STAGE, (%rax)
    xorl    %eax, %eax
    movw    $GUEST_ENTRY_EXIT_PORT, %dx
    outl    %eax, %dx
1:  pause                   /* ring 3: no HLT; the exit write ends the run */
    jmp     1b
