// The runtime's channel descriptors (cudaChannelFormatDesc) and the Driver
// API's array formats (CUarray_format + channel count), both ways.
#pragma once

#include <cuda_runtime_api.h>

#include "guest-stub/cuda/guest_cuda.h"

namespace guest::cudart {

// false for a descriptor no array format matches: 3 channels, channels of
// unequal widths, a gap (y without x), a kind other than signed, unsigned
// or float of 8, 16 or 32 bits (float: 16 or 32).
bool format_of(const cudaChannelFormatDesc& d, CUarray_format* format, unsigned* channels);
cudaChannelFormatDesc channel_desc_of(CUarray_format format, unsigned channels);
// Bytes of one element (every channel); 0 for a format not offered.
size_t element_bytes(CUarray_format format, unsigned channels);

} // namespace guest::cudart
