// The parameter shapes of param_echo (kernels/param_echo.cu), shared by the
// kernel and the guest program that launches it (programs/params.cpp):
// structs by value of several alignments, and more bytes than one ring slot.
#pragma once

#include <stdint.h>

struct EchoVec3 { // 12 bytes, 4-byte aligned
    float x, y, z;
};
struct alignas(16) EchoQuad { // 16 bytes, 16-byte aligned
    double lo, hi;
};
struct EchoBig { // 520 bytes: past VGPU_PAYLOAD_BYTES on its own
    uint64_t words[65];
};
// param_echo(uint8_t* out, char c, EchoVec3 v, EchoQuad q, EchoBig big, short s):
// the C ABI puts them at 0, 8, 12, 32, 48 and 568, 570 bytes in all; the
// kernel writes c, v, q, big, s to out back to back (551 bytes).
inline constexpr unsigned kEchoParams = 6;
inline constexpr unsigned kEchoBufferBytes = 570;
inline constexpr uint16_t kEchoOffsets[kEchoParams] = {0, 8, 12, 32, 48, 568};
inline constexpr uint16_t kEchoSizes[kEchoParams] = {8, 1, 12, 16, 520, 2};
inline constexpr unsigned kEchoOutBytes = 1 + 12 + 16 + 520 + 2;
