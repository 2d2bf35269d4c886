#include "guest-stub/cudart/array_formats.h"

namespace guest::cudart {

namespace {
struct Format {
    CUarray_format format;
    cudaChannelFormatKind kind;
    int bits;
};
constexpr Format kFormats[] = {
    {CU_AD_FORMAT_UNSIGNED_INT8, cudaChannelFormatKindUnsigned, 8},
    {CU_AD_FORMAT_UNSIGNED_INT16, cudaChannelFormatKindUnsigned, 16},
    {CU_AD_FORMAT_UNSIGNED_INT32, cudaChannelFormatKindUnsigned, 32},
    {CU_AD_FORMAT_SIGNED_INT8, cudaChannelFormatKindSigned, 8},
    {CU_AD_FORMAT_SIGNED_INT16, cudaChannelFormatKindSigned, 16},
    {CU_AD_FORMAT_SIGNED_INT32, cudaChannelFormatKindSigned, 32},
    {CU_AD_FORMAT_HALF, cudaChannelFormatKindFloat, 16},
    {CU_AD_FORMAT_FLOAT, cudaChannelFormatKindFloat, 32},
};
} // namespace

bool format_of(const cudaChannelFormatDesc& d, CUarray_format* format, unsigned* channels)
{
    const int bits[4] = {d.x, d.y, d.z, d.w};
    unsigned n = 0;
    while (n < 4 && bits[n] != 0)
        ++n;
    for (unsigned i = n; i < 4; ++i)
        if (bits[i] != 0)
            return false; // a gap
    for (unsigned i = 1; i < n; ++i)
        if (bits[i] != bits[0])
            return false;
    if (n != 1 && n != 2 && n != 4)
        return false;
    for (const Format& f : kFormats)
        if (f.kind == d.f && f.bits == bits[0]) {
            *format = f.format;
            *channels = n;
            return true;
        }
    return false;
}

cudaChannelFormatDesc channel_desc_of(CUarray_format format, unsigned channels)
{
    cudaChannelFormatDesc d{0, 0, 0, 0, cudaChannelFormatKindNone};
    for (const Format& f : kFormats)
        if (f.format == format) {
            d.f = f.kind;
            d.x = f.bits;
            d.y = channels > 1 ? f.bits : 0;
            d.z = d.w = channels > 2 ? f.bits : 0;
        }
    return d;
}

size_t element_bytes(CUarray_format format, unsigned channels)
{
    for (const Format& f : kFormats)
        if (f.format == format)
            return static_cast<size_t>(f.bits / 8) * channels;
    return 0;
}

} // namespace guest::cudart
