// Call thunks for the export-table entries cuda_trace.c wraps (x86-64 SysV).
// Thunk i loads i into r11 and enters trace_thunk_common, which logs the
// six integer and eight vector argument registers and the caller's return
// address (cuda_trace_enter), calls
// the original entry with them and with a copy of the caller's first eight
// stack arguments, logs the return value (cuda_trace_leave) and returns it.
// The signature is unknown, so everything an argument could be in is kept.

    .set TRACE_THUNKS, 2048 // cuda_trace.c's kThunks
    .set STACK_ARGS, 64     // caller stack arguments copied (8 qwords)
    .set SAVE, STACK_ARGS   // the save area, above the copied stack arguments
    .set FRAME, 256

    .text
    .globl trace_thunk_base
    .hidden trace_thunk_base
    .balign 16
trace_thunk_base:
    .set i, 0
    .rept TRACE_THUNKS
    movl $i, %r11d
    jmp trace_thunk_common
    .balign 16
    .set i, i + 1
    .endr

    .type trace_thunk_common, @function
trace_thunk_common:
    push %rbp
    mov %rsp, %rbp
    push %rbx
    push %r12
    sub $FRAME, %rsp // 16-byte aligned here: entry (8) + rbp, rbx, r12 (24) + FRAME
    // save area: 0 rdi, 8 rsi, 16 rdx, 24 rcx, 32 r8, 40 r9, 48 rax, 56 slot, 64.. xmm0-7
    mov %rdi, SAVE+0(%rsp)
    mov %rsi, SAVE+8(%rsp)
    mov %rdx, SAVE+16(%rsp)
    mov %rcx, SAVE+24(%rsp)
    mov %r8, SAVE+32(%rsp)
    mov %r9, SAVE+40(%rsp)
    mov %rax, SAVE+48(%rsp)
    mov %r11, SAVE+56(%rsp)
    movdqu %xmm0, SAVE+64(%rsp)
    movdqu %xmm1, SAVE+80(%rsp)
    movdqu %xmm2, SAVE+96(%rsp)
    movdqu %xmm3, SAVE+112(%rsp)
    movdqu %xmm4, SAVE+128(%rsp)
    movdqu %xmm5, SAVE+144(%rsp)
    movdqu %xmm6, SAVE+160(%rsp)
    movdqu %xmm7, SAVE+176(%rsp)
    // The caller's stack arguments (above our return address), copied to
    // where the original entry will look for them.
    xor %ecx, %ecx
1:  mov 16(%rbp,%rcx,8), %rax
    mov %rax, (%rsp,%rcx,8)
    inc %ecx
    cmp $8, %ecx
    jne 1b
    mov %r11, %rdi
    lea SAVE(%rsp), %rsi
    mov 8(%rbp), %rdx // the caller's return address
    call cuda_trace_enter // -> the original entry
    mov %rax, %rbx
    mov SAVE+0(%rsp), %rdi
    mov SAVE+8(%rsp), %rsi
    mov SAVE+16(%rsp), %rdx
    mov SAVE+24(%rsp), %rcx
    mov SAVE+32(%rsp), %r8
    mov SAVE+40(%rsp), %r9
    mov SAVE+48(%rsp), %rax
    movdqu SAVE+64(%rsp), %xmm0
    movdqu SAVE+80(%rsp), %xmm1
    movdqu SAVE+96(%rsp), %xmm2
    movdqu SAVE+112(%rsp), %xmm3
    movdqu SAVE+128(%rsp), %xmm4
    movdqu SAVE+144(%rsp), %xmm5
    movdqu SAVE+160(%rsp), %xmm6
    movdqu SAVE+176(%rsp), %xmm7
    call *%rbx
    mov %rax, %r12
    mov %rdx, SAVE+16(%rsp)
    movdqu %xmm0, SAVE+64(%rsp)
    mov SAVE+56(%rsp), %rdi
    mov %rax, %rsi
    call cuda_trace_leave
    mov %r12, %rax
    mov SAVE+16(%rsp), %rdx
    movdqu SAVE+64(%rsp), %xmm0
    add $FRAME, %rsp
    pop %r12
    pop %rbx
    pop %rbp
    ret
    .size trace_thunk_common, . - trace_thunk_common

    .section .note.GNU-stack, "", @progbits
