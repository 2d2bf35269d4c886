// The worker zygote: a small process forked from the VMM before any VM,
// thread or CUDA state exists, from which every GPU worker is started (the
// first of each VM and every replacement). A worker forked from the VMM
// itself would hold a copy of all the VMM held at that moment (the other
// VMs' bookkeeping, a console line in flight); one started from the zygote
// holds the program as it was before any VM, plus what its recipe hands it
// over SCM_RIGHTS (worker_recipe.h): its own VM's memory and kick eventfd.
//
// The zygote clones each worker with CLONE_PARENT, so a worker is the VMM's
// child: the VMM waits for it, kills it and sees it end as it would a child
// it forked, and the worker sees the VMM as its parent. The zygote takes
// requests from its parent only (a socketpair made at its fork), one at a
// time, holds no descriptor but that socket, and ends when the VMM does.
#pragma once

#include <sys/types.h>

#include <string>

#include "kvmtool-gpu/devices/vgpu_worker/worker_recipe.h"

namespace kvmgpu::vgpu {

// Starts this process's zygote unless it has one. A program calls it at the
// top of main, before any thread or VM (the CLI does); otherwise the first
// GPU worker starts it, and the zygote then holds a copy of the process as
// it was at that point (guest RAM, channels, counters and kvm_run pages
// excepted: no fork inherits them). A forked child of the process gets a
// zygote of its own. Throws std::system_error.
void start_worker_zygote();

// The zygote's pid, or -1 if this process has none.
pid_t worker_zygote_pid();

// Starts a worker from `recipe`: its pid (a child of this process), or -1
// with *why in one line. Safe from any thread.
pid_t spawn_gpu_worker(const WorkerRecipe& recipe, std::string* why);

} // namespace kvmgpu::vgpu
