// One fuzz input as a hostile guest's session with a whole VgpuDevice (its
// registers through BusDevice::write/read, its executor thread, the host
// backend), while a second VM's device holds data the first must never
// reach. No KVM: the harness plays the vCPU.
//
// The input is a little program, read from the front (missing bytes read as
// zero), one operation after another:
//   command   write a descriptor (+ payload) into a ring slot
//   publish   move the producer (by a few, or to any value), ring, settle
//   poke      write bytes anywhere in guest RAM (the ring included)
//   sg list   write scatter-gather entries into guest RAM
//   reg write any offset, width 1..8, any value (ENABLE/RESET included)
//   reg read  any offset, width 1..8
//   reset     RESET, then ENABLE a ring (mostly the default one)
//   burst     a run of cheap commands, published at once
// Values (args, addresses, lengths) come from a chooser: raw 64-bit words,
// handles and device addresses this VM was given (by the prologue or by its
// own earlier commands), the OTHER VM's handles and device addresses,
// addresses inside / at the edge of / outside guest RAM, host pointers,
// and edge constants.
//
// Oracles, checked on every input (a failure calls __builtin_trap()):
//   - the settle after a doorbell finishes within 10 s (no hang);
//   - a register read writes only the bytes asked for;
//   - the other VM's device memory and guest RAM are unchanged;
//   - after RESET this VM holds no backend allocation, and a fresh ring
//     runs a NOP and reports the whole quota free (the device carries on).
// Sanitizers (ASan, UBSan, LSan) catch the rest.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kvmtool-gpu/devices/vgpu/vgpu_counters.h"

namespace kvmgpu::vgpu::fuzz {

// `seen`, if given, receives what the attacked device counted for the
// input's own operations (the harness's prologue excluded), so replays of
// the corpus can check that seeds get past validation.
void run_device_input(const uint8_t* data, size_t size, VgpuCounterSnapshot* seen = nullptr);

} // namespace kvmgpu::vgpu::fuzz
