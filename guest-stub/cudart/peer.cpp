// Peer access and peer copies between the devices the VMM gives the VM
// (--gpus), through each device's primary context, as the runtime does.
#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cudart;

namespace {

CUdeviceptr dptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

} // namespace

extern "C" {

cudaError_t cudaDeviceCanAccessPeer(int* can_access, int dev, int peer)
{
    GUEST_API_LOCK();
    if (can_access == nullptr)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = sticky_error())
        return e;
    if (CUresult r = cuInit(0))
        return record(r);
    return record(cuDeviceCanAccessPeer(can_access, dev, peer));
}

// Maps peer's memory for the current device's context.
cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned flags)
{
    GUEST_API_LOCK();
    CUcontext ctx;
    if (cudaError_t e = primary_context(peer, &ctx))
        return record(e);
    return record(cuCtxEnablePeerAccess(ctx, flags));
}

cudaError_t cudaDeviceDisablePeerAccess(int peer)
{
    GUEST_API_LOCK();
    CUcontext ctx;
    if (cudaError_t e = primary_context(peer, &ctx))
        return record(e);
    return record(cuCtxDisablePeerAccess(ctx));
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_dev, const void* src, int src_dev, size_t bytes,
                                cudaStream_t stream)
{
    GUEST_API_LOCK();
    CUcontext dst_ctx, src_ctx;
    if (cudaError_t e = primary_context(dst_dev, &dst_ctx))
        return record(e);
    if (cudaError_t e = primary_context(src_dev, &src_ctx))
        return record(e);
    return record(cuMemcpyPeerAsync(dptr(dst), dst_ctx, dptr(src), src_ctx, bytes, stream));
}

cudaError_t cudaMemcpyPeer(void* dst, int dst_dev, const void* src, int src_dev, size_t bytes)
{
    GUEST_API_LOCK();
    CUcontext dst_ctx, src_ctx;
    if (cudaError_t e = primary_context(dst_dev, &dst_ctx))
        return record(e);
    if (cudaError_t e = primary_context(src_dev, &src_ctx))
        return record(e);
    return record(cuMemcpyPeer(dptr(dst), dst_ctx, dptr(src), src_ctx, bytes));
}

} // extern "C"
