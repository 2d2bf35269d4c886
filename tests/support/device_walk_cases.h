// The device walk (VGPU_SG_DEVICE_WALK) through the ring, written once and
// run on every backend that has it: the host backend in-process and in a
// worker (unit), the CUDA backend in-process and in a worker (gpu).
#pragma once

#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {

// Scattered lists with odd offsets and lengths, more entries than one scan
// block (1024), both directions; AUTO with and without the total.
void walk_moves_the_right_bytes(VgpuRig& rig);
// Six asynchronous walks in flight at once, each with its own list, on two
// streams, then one synchronize: each lands where it should (the CUDA
// backend scans one walk's list while the previous one copies).
void walk_many_in_flight(VgpuRig& rig);
// Every way a guest can get a walked list wrong: each is refused (at the
// command, or at the next synchronize when the walk was asynchronous;
// once either way) and the device side is left as it was.
void walk_refuses_bad_lists(VgpuRig& rig);
// An asynchronous walk into [dptr, dptr + 8 KiB) with an empty entry in its
// list: accepted at the command on a GPU, refused at the next synchronize.
// Returns the command's status.
uint32_t post_refused_async_walk(VgpuRig& rig, uint64_t dptr);

} // namespace kvmgpu::vgpu::test
