// The seccomp-BPF filter that confines a vCPU thread once it starts running
// guest code (as Firecracker confines its vCPU threads): a hand-written
// allow list of what the run loop needs, everything else ends the process
// with SIGSYS after one line on stderr naming the call and its first
// arguments (the call itself never runs). It applies to the CALLING THREAD ONLY (no
// SECCOMP_FILTER_FLAG_TSYNC): the executor thread, the watchdog thread and
// the CUDA driver's own threads stay as they are. Threads the confined one
// creates later would inherit it (it creates none).
//
// Allowed (x86-64 native syscalls only; i386 and x32 numbers are killed):
//   ioctl         only on the vCPU fd, only KVM_RUN / KVM_GET_REGS / KVM_GET_SREGS
//   read write writev          device emulation, console, log lines, eventfd kicks
//   futex sched_yield nanosleep clock_nanosleep   mutexes, condition variables
//   clock_gettime gettimeofday time               timestamps (vDSO fallback)
//   mmap mprotect              only without PROT_EXEC (the allocator)
//   munmap mremap madvise brk  the allocator, thread exit
//   newfstatat                 only fstat(fd) (flags == AT_EMPTY_PATH; stdio)
//   rt_sigreturn rt_sigprocmask restart_syscall   the watchdog's SIGUSR1
//   sigaltstack                this thread's signal stack (ASan resets it at thread exit)
//   exit exit_group
// A Linux-ABI guest's vCPU (linux_guest) also has, because the system-call
// server runs on it: KVM_SET_REGS (the return to ring 3 after each call);
// KVM_GET_FPU and KVM_SET_FPU (a signal frame's FPU state, guest_signals.h);
// KVM_SET_USER_MEMORY_REGION on the VM fd `vm_fd` alone (the file window's
// slots, vmm/linux/file_window.h), and mmap only private when of a
// descriptor (the window's host mappings of the guest's files);
// openat2 (the only way guest paths are opened: share_fs.cpp always passes
// RESOLVE_IN_ROOT under the share, which BPF cannot see through the pointer,
// and reopens what it found through /proc/self/fd), close, lseek,
// getdents64, pwrite64, readlinkat (a link's target; /proc/self/fd/N, the
// host path of the guest's cwd, guest_cwd.h) and fstatfs (the pseudo file
// system check, pseudo_fs.h) on the descriptors it opened; memfd_create for the
// text files the VMM makes up (/sys/devices/system/cpu/online);
// getrandom (the guest's own getrandom without --seed); and pipe2,
// eventfd2 and ppoll for the guest's pipes, eventfds, poll and epoll. The
// guest's paths are opened nowhere else; openat only read-only (glibc opens
// files of its own on this thread; it reaches nothing openat2 does not).
// Sanitizer builds (KVMGPU_SANITIZE) also allow pipe2, close, gettid, getpid
// and sched_getaffinity, which the ASan runtime uses on any thread.
// Not allowed, among others: open, openat that writes or creates, socket, connect, execve, fork/clone,
// ptrace, process_vm_*, kill/tgkill, ioctl on any other fd (KVM_SET_*,
// KVM_SET_USER_MEMORY_REGION but a Linux-ABI guest's on its VM fd, the GPU
// driver's nodes), mmap/mprotect with PROT_EXEC.
#pragma once

#include <linux/filter.h>

#include <vector>

namespace kvmgpu {

// The filter program for a vCPU whose fd is `vcpu_fd` (for tests and docs).
// `linux_guest`: the vCPU also serves a Linux-ABI guest's system calls,
// which needs KVM_SET_REGS and what the share's files need (below).
std::vector<sock_filter> vcpu_seccomp_program(int vcpu_fd, bool linux_guest = false, int vm_fd = -1);

// PR_SET_NO_NEW_PRIVS, then seccomp(SECCOMP_SET_MODE_FILTER, 0, program) on
// the calling thread. Throws std::system_error naming the call and errno
// when the kernel refuses (no seccomp, or forbidden by an outer sandbox).
// Irreversible for the thread: call it on the vCPU thread only.
void confine_vcpu_thread(int vcpu_fd, bool linux_guest = false, int vm_fd = -1);

} // namespace kvmgpu
