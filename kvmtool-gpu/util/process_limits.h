// The VMM process's own limits and settings, made at start-up (cli/main.cpp) and shared
// by every VM it runs: a share write past `ulimit -f` fails with EFBIG
// instead of SIGXFSZ ending the process (and every VM in it), and the open
// file limit is raised to its hard limit, then divided among the VMs of a
// run so that each guest's descriptor table and each VM's vCPU threads and
// GPU worker fit.
#pragma once

#include <cstdint>

namespace kvmgpu {

// SIGXFSZ ignored: a write past RLIMIT_FSIZE returns EFBIG.
void ignore_file_size_signal();

// Not dumpable: another process of the same user (a GPU worker that a guest
// took over) needs CAP_SYS_PTRACE to read this process's memory through
// /proc/PID/mem, where every VM it runs is mapped. Costs core dumps.
void keep_memory_from_other_processes();

// RLIMIT_NOFILE's soft limit raised to its hard limit (where they differ).
void raise_open_file_limit();
// RLIMIT_NOFILE's soft limit (RLIM_INFINITY as UINT64_MAX).
uint64_t open_file_limit();
// Descriptors this process holds now (entries of /proc/self/fd; 0 if unreadable).
uint64_t open_descriptor_count();

// What the split keeps back: for the process (KVM, log and CUDA
// descriptors opened later), for each VM (its VM and vCPU-0 descriptors,
// statistics, guest RAM, its GPU worker's sockets and shared memory), and
// for each of a VM's vCPU threads.
constexpr uint64_t kProcessDescriptorReserve = 64;
constexpr uint64_t kVmDescriptorReserve = 32;
constexpr uint64_t kDescriptorsPerThread = 2;

// How many descriptors each guest of `vms` VMs may open, at most `most`:
// (limit - in_use - process reserve) / vms, less the VM's reserve and its
// threads'. 0 when nothing is left (the guest keeps only stdin, stdout and
// stderr, which hold no host descriptor).
uint64_t guest_descriptor_limit(uint64_t limit, uint64_t in_use, uint64_t vms, uint64_t max_threads, uint64_t most);

} // namespace kvmgpu
