// Device memory, copies (contiguous, scattered, zero-copy) and memsets.
// A host buffer that is physically contiguous (identity-mapped RAM: pinned
// memory, .bss, the stack) goes as one GPA; anything else (the pageable
// heap) as scatter-gather lists built from the page tables.
#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/graph_host_steps.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/platform.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

enum class Dir { kHtoD, kDtoH };

// One command (or several, for lists larger than the pool) moving
// [host, host+bytes) <-> [dptr, dptr+bytes) by SG lists.
CUresult copy_scattered(Dir dir, CUdeviceptr dptr, const void* host, size_t bytes, CUstream stream,
                        unsigned strategy, bool async)
{
    if (strategy >= VGPU_SG_STRATEGY_COUNT_)
        return CUDA_ERROR_INVALID_VALUE;
    if (capture_of(stream) != 0)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; // a list's staging would not outlive the call
    const uint8_t* p = static_cast<const uint8_t*>(host);
    size_t done = 0;
    while (done < bytes) {
        vgpu_sg_entry* list;
        uint64_t capacity;
        if (CUresult r = sg_acquire(&list, &capacity))
            return r;
        if (capacity > VGPU_MAX_SG_ENTRIES)
            capacity = VGPU_MAX_SG_ENTRIES;
        uint64_t count = 0;
        guest::SgResult sr = guest::platform::build_sg(p + done, bytes - done, list, capacity, &count);
        if (sr != guest::SgResult::kOk && sr != guest::SgResult::kTooMany)
            return CUDA_ERROR_INVALID_VALUE; // unmapped guest memory
        uint64_t covered = 0;
        for (uint64_t i = 0; i < count; ++i)
            covered += list[i].len;
        Call c;
        c.op = dir == Dir::kHtoD ? VGPU_OP_MEMCPY_HTOD_SG : VGPU_OP_MEMCPY_DTOH_SG;
        c.set_args(vgpu_args_memcpy_sg{.dptr = dptr + done,
                                       .sg_gpa = reinterpret_cast<uintptr_t>(list), // pinned: GPA == VA
                                       .count = count,
                                       .stream = stream_arg(stream),
                                       .strategy = strategy,
                                       .total = covered}); // lets the VMM (or the GPU, for DEVICE_WALK) check the sum
        CUresult r = async ? call_async(c) : call_sync(c);
        if (r == CUDA_SUCCESS || async)
            sg_commit(count); // submitted: the device will read the list
        if (r != CUDA_SUCCESS)
            return r;
        done += covered;
    }
    return CUDA_SUCCESS;
}

// The common shape of copies and memsets: arg0..2, arg3 = stream; queued
// (async) or waited for as a synchronization point.
template <uint16_t Op>
CUresult stream_op(uint64_t a0, uint64_t a1, uint64_t a2, CUstream stream, bool async)
{
    const Call c = command<Op>({a0, a1, a2, stream_arg(stream)});
    capture_note_work(stream);
    return async ? call_async(c) : sync_point(call_sync(c));
}

// Checks shared by host copies: *proceed is false when the call ends here
// with the returned status (not initialised, nothing to copy, no buffer).
CUresult preflight(const void* host, size_t bytes, bool* proceed)
{
    *proceed = false;
    if (CUresult r = ready())
        return r;
    if (bytes == 0)
        return CUDA_SUCCESS;
    if (host == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    *proceed = true;
    return CUDA_SUCCESS;
}

// A copy or memset naming managed memory works on the guest's bytes, which
// are the truth between calls (cuda_managed.cpp), after the stream's
// earlier work, as a synchronous copy would be ordered.
CUresult managed_move(void* dst, const void* src, size_t bytes, CUstream stream)
{
    if (CUresult r = cuStreamSynchronize(stream))
        return r;
    memmove(dst, src, bytes);
    return CUDA_SUCCESS;
}

// A host side outside guest RAM: on Linux, a file the VMM maps in its file
// window (a library's read-only data, kvmtool-gpu/vmm/linux/file_window.h),
// which the vGPU never reads (it takes RAM only). The bytes go through a
// page-locked bounce buffer, a chunk at a time, each copy waited for.
CUresult bounced_copy(Dir dir, CUdeviceptr dptr, const void* host, size_t bytes, CUstream stream)
{
    if (capture_of(stream) != 0)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; // the bounce would not outlive the call
    constexpr size_t kChunk = 4u << 20;
    const size_t size = bytes < kChunk ? bytes : kChunk;
    void* bounce = nullptr;
    if (CUresult r = cuMemAllocHost(&bounce, size))
        return r;
    uint64_t gpa = 0;
    CUresult r = guest::platform::phys_contiguous(bounce, size, &gpa) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    for (size_t done = 0; r == CUDA_SUCCESS && done < bytes; done += size) {
        const size_t n = bytes - done < size ? bytes - done : size;
        if (dir == Dir::kHtoD) {
            memcpy(bounce, static_cast<const uint8_t*>(host) + done, n);
            r = stream_op<VGPU_OP_MEMCPY_HTOD>(dptr + done, gpa, n, stream, false);
        } else {
            r = stream_op<VGPU_OP_MEMCPY_DTOH>(gpa, dptr + done, n, stream, false);
            if (r == CUDA_SUCCESS)
                memcpy(static_cast<uint8_t*>(const_cast<void*>(host)) + done, bounce, n);
        }
    }
    cuMemFreeHost(bounce);
    return r;
}

CUresult copy(Dir dir, CUdeviceptr dptr, const void* host, size_t bytes, CUstream stream, bool async)
{
    bool proceed;
    if (CUresult r = preflight(host, bytes, &proceed); !proceed)
        return r;
    if (void* m = managed_host_view(dptr, bytes); m && capture_of(stream) == 0)
        return dir == Dir::kHtoD ? managed_move(m, host, bytes, stream)
                                 : managed_move(const_cast<void*>(host), m, bytes, stream);
    // CUDA's API synchronization rules: an asynchronous copy from pageable
    // memory returns once the source has been read (the caller may rewrite
    // it at once), one to pageable memory once the data is there. So they
    // wait (a waited copy completes after its stream's work, source read and
    // data written); page-locked memory stays asynchronous.
    // Captured, the copy is a node of the graph that reads or writes the
    // memory when the graph runs, whatever the memory.
    if (async && !page_locked(host, bytes) && capture_of(stream) == 0)
        async = false;
    uint64_t gpa;
    CUdeviceptr registered;
    if (registered_device_address(host, bytes, &registered)) // the copy engine, through the buffer's host alias
        return dir == Dir::kHtoD ? stream_op<VGPU_OP_MEMCPY_DTOD>(dptr, registered, bytes, stream, async)
                                 : stream_op<VGPU_OP_MEMCPY_DTOD>(registered, dptr, bytes, stream, async);
    if (!guest::platform::phys_contiguous(host, bytes, &gpa)) {
        if (!guest::platform::virt_to_phys(host, &gpa)) // not RAM at all (no range spans RAM and what is not)
            return bounced_copy(dir, dptr, host, bytes, stream);
        CUresult r = copy_scattered(dir, dptr, host, bytes, stream, VGPU_SG_AUTO, async);
        return async ? r : sync_point(r);
    }
    if (dir == Dir::kHtoD)
        return stream_op<VGPU_OP_MEMCPY_HTOD>(dptr, gpa, bytes, stream, async);
    return stream_op<VGPU_OP_MEMCPY_DTOH>(gpa, dptr, bytes, stream, async);
}

// The vgpuMemcpy*Scattered entry points: always SG lists, always queued.
CUresult scattered_entry(Dir dir, CUdeviceptr dptr, const void* host, size_t bytes, CUstream stream,
                         unsigned strategy)
{
    bool proceed;
    if (CUresult r = preflight(host, bytes, &proceed); !proceed)
        return r;
    return copy_scattered(dir, dptr, host, bytes, stream, strategy, true);
}

CUresult copy_dtod(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream, bool async)
{
    if (bytes == 0)
        return ready();
    void* dst_m = managed_host_view(dst, bytes);
    void* src_m = managed_host_view(src, bytes);
    if ((dst_m || src_m) && capture_of(stream) == 0) {
        if (dst_m && src_m)
            return managed_move(dst_m, src_m, bytes, stream);
        return dst_m ? copy(Dir::kDtoH, src, dst_m, bytes, stream, async)
                     : copy(Dir::kHtoD, dst, src_m, bytes, stream, async);
    }
    return stream_op<VGPU_OP_MEMCPY_DTOD>(dst, src, bytes, stream, async);
}

} // namespace

extern "C" CUresult cuMemAlloc(CUdeviceptr* dptr, size_t bytes)
{
    GUEST_API_LOCK();
    if (dptr == nullptr || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    Call c = command<VGPU_OP_MEM_ALLOC>({bytes});
    CUresult r = call_result(c, dptr);
    if (r == CUDA_SUCCESS)
        allocation_add(*dptr, bytes);
    return r;
}

extern "C" CUresult cuMemFree(CUdeviceptr dptr)
{
    GUEST_API_LOCK();
    if (dptr == 0)
        return ready(); // nothing to free, as the driver answers (cuBLAS's cublasCreate frees 0)
    if (CUresult r = managed_free(dptr); r != CUDA_ERROR_NOT_FOUND)
        return r;
    Call c = command<VGPU_OP_MEM_FREE>({dptr});
    CUresult r = call_sync(c);
    if (r == CUDA_SUCCESS && !graph_allocation(dptr))
        allocation_remove(dptr);
    return r;
}

namespace {
// Unified addressing: an address inside one of this guest's device
// allocations is the device's, any other a guest address (checked where it
// is used, as for cuMemcpyHtoD/DtoH).
CUresult copy_any(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream, bool async)
{
    const bool dst_dev = allocation_contains(dst, bytes), src_dev = allocation_contains(src, bytes);
    void* dst_host = reinterpret_cast<void*>(static_cast<uintptr_t>(dst));
    const void* src_host = reinterpret_cast<const void*>(static_cast<uintptr_t>(src));
    if (dst_dev && src_dev)
        return copy_dtod(dst, src, bytes, stream, async);
    if (dst_dev)
        return copy(Dir::kHtoD, dst, src_host, bytes, stream, async);
    if (src_dev)
        return copy(Dir::kDtoH, src, dst_host, bytes, stream, async);
    // Guest to guest: the driver copies host memory too (after the stream's
    // earlier work, which a synchronous copy waits for).
    if (bytes == 0)
        return ready();
    uint64_t gpa;
    if (!guest::platform::virt_to_phys(dst_host, &gpa) || !guest::platform::virt_to_phys(src_host, &gpa))
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = cuStreamSynchronize(stream))
        return r;
    memmove(dst_host, src_host, bytes);
    return CUDA_SUCCESS;
}
} // namespace

KVMGPU_DRIVER_ENTRY(cuMemcpy, 4000);
extern "C" CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes)
{
    GUEST_API_LOCK();
    return copy_any(dst, src, bytes, 0, false);
}

KVMGPU_DRIVER_ENTRY(cuMemcpyAsync, 4000);
extern "C" CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
    GUEST_API_LOCK();
    return copy_any(dst, src, bytes, stream, true);
}

extern "C" CUresult cuMemGetInfo(size_t* free, size_t* total)
{
    GUEST_API_LOCK();
    if (free == nullptr || total == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    Call c = command<VGPU_OP_MEM_GET_INFO>();
    uint64_t res[2];
    CUresult r = call_sync(c, res);
    if (r == CUDA_SUCCESS) {
        *free = res[0];
        *total = res[1];
    }
    return r;
}

extern "C" CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t bytes)
{
    GUEST_API_LOCK();
    return copy(Dir::kHtoD, dst, src, bytes, 0, false);
}

extern "C" CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t bytes)
{
    GUEST_API_LOCK();
    return copy(Dir::kDtoH, src, dst, bytes, 0, false);
}

extern "C" CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream)
{
    GUEST_API_LOCK();
    return copy(Dir::kHtoD, dst, src, bytes, stream, true);
}

extern "C" CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
    GUEST_API_LOCK();
    return copy(Dir::kDtoH, src, dst, bytes, stream, true);
}

extern "C" CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t bytes)
{
    GUEST_API_LOCK();
    return copy_dtod(dst, src, bytes, 0, false);
}

extern "C" CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
    GUEST_API_LOCK();
    return copy_dtod(dst, src, bytes, stream, true);
}

namespace {

// The vGPU checks both contexts and both ranges, and copies on the device.
CUresult copy_peer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t bytes,
                   CUstream stream, bool async)
{
    if (dst_ctx == nullptr || src_ctx == nullptr)
        return CUDA_ERROR_INVALID_CONTEXT;
    Call c = command<VGPU_OP_MEMCPY_PEER>(vgpu_args_memcpy_peer{.dst = dst,
                                     .dst_context = handle_bits(dst_ctx),
                                     .src = src,
                                     .src_context = handle_bits(src_ctx),
                                     .bytes = bytes,
                                     .stream = stream_arg(stream)});
    return async ? call_async(c) : sync_point(call_sync(c));
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuMemcpyPeer, 4000);
extern "C" CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t bytes)
{
    GUEST_API_LOCK();
    return copy_peer(dst, dst_ctx, src, src_ctx, bytes, 0, false);
}

KVMGPU_DRIVER_ENTRY(cuMemcpyPeerAsync, 4000);
extern "C" CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                                      size_t bytes, CUstream stream)
{
    GUEST_API_LOCK();
    return copy_peer(dst, dst_ctx, src, src_ctx, bytes, stream, true);
}

namespace {
// A memset the driver refuses at the call, refused here too, so that a
// queued one returns its own error rather than a later synchronization
// point's: a misaligned start, a size that wraps, or a range that starts in
// one of this guest's allocations and runs past its end. (Other addresses,
// a mapped host buffer's or a __device__ variable's, only the vGPU knows.)
template <uint16_t Op>
CUresult memset_op(CUdeviceptr dst, uint64_t value, size_t count, unsigned element, CUstream stream,
                bool async)
{
    uint64_t bytes = 0;
    if (dst % element != 0 || __builtin_mul_overflow(static_cast<uint64_t>(count), element, &bytes))
        return CUDA_ERROR_INVALID_VALUE;
    if (bytes > 0 && allocation_contains(dst, 0) && !allocation_contains(dst, bytes))
        return CUDA_ERROR_INVALID_VALUE;
    if (void* m = managed_host_view(dst, bytes); m && bytes > 0 && capture_of(stream) == 0) {
        if (CUresult r = cuStreamSynchronize(stream))
            return r;
        for (uint64_t i = 0; i < count; ++i) // element by element: the value's width is the element's
            memcpy(static_cast<uint8_t*>(m) + i * element, &value, element); // little-endian: the low bytes
        return CUDA_SUCCESS;
    }
    return stream_op<Op>(dst, value, count, stream, async);
}
} // namespace

extern "C" CUresult cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t count)
{
    GUEST_API_LOCK();
    return memset_op<VGPU_OP_MEMSET_D8>(dst, value, count, 1, 0, false);
}

extern "C" CUresult cuMemsetD32(CUdeviceptr dst, unsigned int value, size_t count)
{
    GUEST_API_LOCK();
    return memset_op<VGPU_OP_MEMSET_D32>(dst, value, count, 4, 0, false);
}

extern "C" CUresult cuMemsetD16(CUdeviceptr dst, unsigned short value, size_t count)
{
    GUEST_API_LOCK();
    return memset_op<VGPU_OP_MEMSET_D16>(dst, value, count, 2, 0, false);
}

KVMGPU_DRIVER_ENTRY(cuMemsetD16Async, 3020);
extern "C" CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count, CUstream stream)
{
    GUEST_API_LOCK();
    return memset_op<VGPU_OP_MEMSET_D16>(dst, value, count, 2, stream, true);
}

KVMGPU_DRIVER_ENTRY(cuMemsetD8Async, 3020);
extern "C" CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream)
{
    GUEST_API_LOCK();
    return memset_op<VGPU_OP_MEMSET_D8>(dst, value, count, 1, stream, true);
}

KVMGPU_DRIVER_ENTRY(cuMemsetD32Async, 3020);
extern "C" CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream)
{
    GUEST_API_LOCK();
    return memset_op<VGPU_OP_MEMSET_D32>(dst, value, count, 4, stream, true);
}

extern "C" CUresult vgpuMemcpyHtoDScattered(CUdeviceptr dst, const void* src, size_t bytes,
                                            CUstream stream, unsigned strategy)
{
    GUEST_API_LOCK();
    return scattered_entry(Dir::kHtoD, dst, src, bytes, stream, strategy);
}

extern "C" CUresult vgpuMemcpyDtoHScattered(void* dst, CUdeviceptr src, size_t bytes, CUstream stream,
                                            unsigned strategy)
{
    GUEST_API_LOCK();
    return scattered_entry(Dir::kDtoH, src, dst, bytes, stream, strategy);
}

extern "C" CUresult vgpuGuestRamDevicePtr(CUdeviceptr* dptr, const void* p, size_t bytes)
{
    GUEST_API_LOCK();
    if (dptr == nullptr || p == nullptr || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t gpa;
    if (!guest::platform::phys_contiguous(p, bytes, &gpa))
        return CUDA_ERROR_INVALID_VALUE; // zero copy needs pinned (contiguous) memory
    Call c = command<VGPU_OP_GUEST_RAM_DEVICE_PTR>({gpa, bytes});
    return call_result(c, dptr);
}

extern "C" CUresult cuMemGetAddressRange(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    uint64_t start = 0, bytes = 0;
    if (!managed_find(dptr, &start, &bytes) && !allocation_containing(dptr, &start, &bytes))
        return CUDA_ERROR_NOT_FOUND;
    if (pbase != nullptr)
        *pbase = start;
    if (psize != nullptr)
        *psize = bytes;
    return CUDA_SUCCESS;
}

extern "C" CUresult cuMemAllocPitch(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height,
                                    unsigned int ElementSizeBytes)
{
    GUEST_API_LOCK();
    constexpr uint64_t kPitchAlign = 512;
    if (dptr == nullptr || pPitch == nullptr || WidthInBytes == 0 || Height == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t pitch = 0, bytes = 0;
    if (__builtin_add_overflow(static_cast<uint64_t>(WidthInBytes), kPitchAlign - 1, &pitch))
        return CUDA_ERROR_INVALID_VALUE;
    pitch &= ~(kPitchAlign - 1);
    if (__builtin_mul_overflow(pitch, static_cast<uint64_t>(Height), &bytes))
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (CUresult r = cuMemAlloc(dptr, bytes))
        return r;
    *pPitch = pitch;
    return CUDA_SUCCESS;
}

namespace {
// A 2-D memset (VGPU_OP_MEMSET_2D_*): Height rows of Width elements, row r at
// dst + r * pitch. Refused here as the driver refuses it at the call: a
// misaligned start or pitch, a pitch below the row, a span that wraps or
// runs past the end of the allocation it starts in. Managed memory is set in
// the guest's bytes, row by row, as a 1-D memset is.
CUresult memset_2d_op(uint16_t op, unsigned element, CUdeviceptr dst, size_t pitch, uint32_t value, size_t width,
                      size_t height, CUstream stream, bool async)
{
    if (CUresult r = ready())
        return r;
    uint64_t row = 0, span = 0;
    if (dst % element != 0 || pitch % element != 0 || __builtin_mul_overflow(static_cast<uint64_t>(width), element, &row))
        return CUDA_ERROR_INVALID_VALUE;
    if (row == 0 || height == 0)
        return CUDA_SUCCESS;
    if (pitch < row || __builtin_mul_overflow(static_cast<uint64_t>(height - 1), static_cast<uint64_t>(pitch), &span) ||
        __builtin_add_overflow(span, row, &span))
        return CUDA_ERROR_INVALID_VALUE;
    if (allocation_contains(dst, 0) && !allocation_contains(dst, span))
        return CUDA_ERROR_INVALID_VALUE;
    if (void* m = managed_host_view(dst, span); m && capture_of(stream) == 0) {
        if (CUresult r = cuStreamSynchronize(stream))
            return r;
        for (uint64_t r = 0; r < height; ++r)
            for (uint64_t i = 0; i < width; ++i)
                memcpy(static_cast<uint8_t*>(m) + r * pitch + i * element, &value, element);
        return CUDA_SUCCESS;
    }
    Call c;
    c.op = op;
    c.set_args(vgpu_args_memset_2d{dst, pitch, value, width, height, stream_arg(stream)});
    capture_note_work(stream);
    return async ? call_async(c) : sync_point(call_sync(c));
}
} // namespace

extern "C" CUresult cuMemsetD2D8(CUdeviceptr dst, size_t dstPitch, unsigned char value, size_t Width, size_t Height)
{
    GUEST_API_LOCK();
    return memset_2d_op(VGPU_OP_MEMSET_2D_D8, 1, dst, dstPitch, value, Width, Height, 0, false);
}

extern "C" CUresult cuMemsetD2D16(CUdeviceptr dst, size_t dstPitch, unsigned short value, size_t Width, size_t Height)
{
    GUEST_API_LOCK();
    return memset_2d_op(VGPU_OP_MEMSET_2D_D16, 2, dst, dstPitch, value, Width, Height, 0, false);
}

extern "C" CUresult cuMemsetD2D32(CUdeviceptr dst, size_t dstPitch, unsigned int value, size_t Width, size_t Height)
{
    GUEST_API_LOCK();
    return memset_2d_op(VGPU_OP_MEMSET_2D_D32, 4, dst, dstPitch, value, Width, Height, 0, false);
}

KVMGPU_DRIVER_ENTRY(cuMemsetD2D8Async, 3020);
extern "C" CUresult cuMemsetD2D8Async(CUdeviceptr dst, size_t dstPitch, unsigned char value, size_t Width,
                                      size_t Height, CUstream stream)
{
    GUEST_API_LOCK();
    return memset_2d_op(VGPU_OP_MEMSET_2D_D8, 1, dst, dstPitch, value, Width, Height, stream, true);
}

KVMGPU_DRIVER_ENTRY(cuMemsetD2D16Async, 3020);
extern "C" CUresult cuMemsetD2D16Async(CUdeviceptr dst, size_t dstPitch, unsigned short value, size_t Width,
                                       size_t Height, CUstream stream)
{
    GUEST_API_LOCK();
    return memset_2d_op(VGPU_OP_MEMSET_2D_D16, 2, dst, dstPitch, value, Width, Height, stream, true);
}

KVMGPU_DRIVER_ENTRY(cuMemsetD2D32Async, 3020);
extern "C" CUresult cuMemsetD2D32Async(CUdeviceptr dst, size_t dstPitch, unsigned int value, size_t Width,
                                       size_t Height, CUstream stream)
{
    GUEST_API_LOCK();
    return memset_2d_op(VGPU_OP_MEMSET_2D_D32, 4, dst, dstPitch, value, Width, Height, stream, true);
}
