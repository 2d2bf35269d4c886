// The Linux-ABI system-call server under fuzzing: one SyscallServer over a
// small guest RAM and a read-only share of a scratch directory; the input
// is a sequence of calls (numbers biased towards the served ones, pointer
// arguments biased towards guest RAM, its edges and its unmapped pages;
// pipes, eventfds, poll, epoll and self-sent signals among them: with the
// server stopping, a wait is one look and never blocks).
// Checks after every call: serve() returned, the result is a value or an
// errno in -4095..-1, the allocator's free RAM never exceeds its range, and
// the descriptor table stays within its limit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kvmgpu::fuzz {

void run_linux_syscall_input(const uint8_t* data, size_t size);

} // namespace kvmgpu::fuzz
