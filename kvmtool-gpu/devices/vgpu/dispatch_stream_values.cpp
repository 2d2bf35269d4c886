// Stream memory operations (cuStreamWriteValue32/64, cuStreamWaitValue32/64):
// a 4- or 8-byte word of this VM's device memory written, or waited for, in
// stream order. A wait that is never met holds that stream of this VM only,
// as a kernel that never ends does.
#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

namespace {
// cuda.h's CUstreamWriteValue_flags and CUstreamWaitValue_flags.
constexpr uint64_t kWriteNoMemoryBarrier = 0x1;
constexpr uint64_t kWaitConditions = 0x3; // GEQ 0, EQ 1, AND 2, NOR 3
constexpr uint64_t kWaitFlush = 1ull << 30;
} // namespace

// A word of `bytes` (4 or 8) at dptr, on a stream.
CommandResult CommandDispatch::stream_value(GuestCommand& c) {
    const bool write = c.desc.opcode == VGPU_OP_STREAM_WRITE_VALUE;
    const auto [stream, dptr, value, flags, bytes] = args_of<VGPU_OP_STREAM_WRITE_VALUE, VGPU_OP_STREAM_WAIT_VALUE>(c);
    BackendStream s;
    if (!stream_of(stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (bytes != 4 && bytes != 8) return fail(VGPU_ERROR_INVALID_VALUE, "stream value width not 4 or 8");
    if (bytes == 4 && value > UINT32_MAX) return fail(VGPU_ERROR_INVALID_VALUE, "stream value too wide");
    if (flags & ~(write ? kWriteNoMemoryBarrier : kWaitConditions | kWaitFlush))
        return fail(VGPU_ERROR_INVALID_VALUE, "unknown stream value flags");
    if (dptr % bytes != 0) return fail(VGPU_ERROR_INVALID_VALUE, "stream value address not aligned");
    if (!allocs_.contains(dptr, bytes)) return fail(VGPU_ERROR_INVALID_VALUE, "device range not this VM's");
    // In stream order on this context's device only: waiting on the device
    // that holds the word from another device's stream is not offered.
    if (device_of(allocs_.owner_containing(dptr)) != selected_device_)
        return fail(VGPU_ERROR_NOT_SUPPORTED, "stream value in another device's memory");
    const auto width = static_cast<uint32_t>(bytes);
    const auto f = static_cast<uint32_t>(flags);
    return done(backend_result(write ? backend().stream_write_value(s, dptr, value, width, f, is_async(c))
                                     : backend().stream_wait_value(s, dptr, value, width, f, is_async(c))));
}

CommandResult CommandDispatch::op_STREAM_WRITE_VALUE(GuestCommand& c) { return stream_value(c); }
CommandResult CommandDispatch::op_STREAM_WAIT_VALUE(GuestCommand& c) { return stream_value(c); }

} // namespace kvmgpu::vgpu
