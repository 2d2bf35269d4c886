// One fuzz input through the vGPU's guest-facing surface, with no VM and no
// threads: the input becomes the command ring (descriptors, payloads,
// producer steps) and the guest RAM its commands point into; the ring is
// run against the command dispatch on the host backend. Anything but a
// clean return (crash, sanitizer report, hang) is a bug.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kvmtool-gpu/devices/vgpu/vgpu_counters.h"

namespace kvmgpu::vgpu::fuzz {

// Handles and device addresses exist only at run time, so the harness makes
// a few before the ring runs and substitutes them for magic values an input
// may use, in descriptor args and in payload words:
//   kMagic | kind << 8 | k  with kind 0: an allocation's dptr + 64 k,
//   1 a stream, 2 a module, 3 a function (vector_add), 4 an event,
//   5 the zero-copy device address of guest data + 64 k, 6 a cuBLAS handle,
//   7 a cuRAND generator, 8 a cuFFT plan (1-D C2C of 64 points).
inline constexpr uint64_t kMagic = 0xD0D0'0000'0000'0000ull;

// `seen`, if given, receives what the dispatch counted for this input (for
// checking that generated inputs get past validation).
void run_one(const uint8_t* data, size_t size, VgpuCounterSnapshot* seen = nullptr);

} // namespace kvmgpu::vgpu::fuzz
