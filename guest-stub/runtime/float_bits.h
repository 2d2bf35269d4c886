// IEEE-754 binary32 values built and read with integer code only. Guest code
// is compiled with -mgeneral-regs-only (under kvm-pvm the guest runs through
// KVM's instruction emulator, which has no SSE/x87 arithmetic), yet the GPU
// kernels take and return floats: guests hand them integer-valued floats
// encoded here and decode the results back to integers. Every integer of
// magnitude <= 2^24 is exact in binary32, so with small enough inputs a
// guest can check GPU results for exact equality.
// Pure code: also compiled on the host for the unit tests.
#pragma once

#include <stdint.h>

namespace guest {

// Largest magnitude below which every integer is exactly a binary32.
constexpr int32_t kF32ExactIntLimit = 1 << 24;

// The bits of (float)v, rounded to nearest, ties to even, as the CPU does.
uint32_t f32_bits_from_int(int32_t v);

// If bits encode a finite float with an integral value in int32 range,
// stores that value (-0 gives 0) and returns true; else returns false (NaN,
// infinity, a fraction, or out of range).
bool f32_bits_to_int(uint32_t bits, int32_t* v);

} // namespace guest
