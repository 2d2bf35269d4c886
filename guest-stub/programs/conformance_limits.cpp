// conformance, continued: occupancy, context limits, device identity, P2P
// attributes, stream extras and cooperative launches too large, with the
// statuses the CUDA driver gives. `add` is vector_add (256-thread blocks
// fit every device the vGPU offers).
#include "guest-stub/programs/conformance.h"

using namespace guest;

namespace {
size_t shared_for(int block) { return static_cast<size_t>(block) * 16; }
int g_host_fn_calls = 0;
void count_call(void* p) { ++*static_cast<int*>(p); }
void stream_callback(CUstream, CUresult status, void* p) { *static_cast<int*>(p) = status == CUDA_SUCCESS ? 1 : -1; }
} // namespace

void occupancy_and_limit_calls(CUfunction add, void** params)
{
    int blocks = -1;
    expect("cuOccupancyMaxActiveBlocksPerMultiprocessor",
           cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add, 256, 0), CUDA_SUCCESS);
    expect_true("at least one 256-thread block per multiprocessor", blocks >= 1);
    int flagged = -1;
    expect("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
           cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&flagged, add, 256, 0,
                                                                CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE),
           CUDA_SUCCESS);
    expect("cuOccupancy...(block 0)", cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add, 0, 0),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuOccupancy...(bogus function)", cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, bogus(add), 256, 0),
           CUDA_ERROR_INVALID_HANDLE);
    expect("cuOccupancy...(unknown flags)",
           cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, add, 256, 0, 0x80), CUDA_ERROR_INVALID_VALUE);
    size_t one = 0, eight = 0;
    VgpuGuestInfo vi;
    CU_CHECK(vgpuGetInfo(&vi));
    if (vi.backend == VGPU_BACKEND_HOST) {
        expect("cuOccupancyAvailableDynamicSMemPerBlock (host backend: not offered)",
               cuOccupancyAvailableDynamicSMemPerBlock(&one, add, 1, 256), CUDA_ERROR_NOT_SUPPORTED);
    } else {
        expect("cuOccupancyAvailableDynamicSMemPerBlock(1 x 256)",
               cuOccupancyAvailableDynamicSMemPerBlock(&one, add, 1, 256), CUDA_SUCCESS);
        expect("cuOccupancyAvailableDynamicSMemPerBlock(8 x 256)",
               cuOccupancyAvailableDynamicSMemPerBlock(&eight, add, 8, 256), CUDA_SUCCESS);
        CUdevice d = 0;
        int optin = 0;
        CU_CHECK(cuCtxGetDevice(&d));
        CU_CHECK(cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, d));
        expect_true("one block may have more than eight, and no more than the opt-in maximum",
                    one > eight && one <= static_cast<size_t>(optin));
    }
    expect("cuOccupancyAvailableDynamicSMemPerBlock(nullptr)", cuOccupancyAvailableDynamicSMemPerBlock(nullptr, add, 1, 256),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuOccupancyAvailableDynamicSMemPerBlock(bogus function)",
           cuOccupancyAvailableDynamicSMemPerBlock(&one, bogus(add), 1, 256), CUDA_ERROR_INVALID_HANDLE);
    int min_grid = 0, block = 0;
    expect("cuOccupancyMaxPotentialBlockSize",
           cuOccupancyMaxPotentialBlockSize(&min_grid, &block, add, nullptr, 0, 0), CUDA_SUCCESS);
    expect_true("a block size within the kernel's limit, a grid filling the device",
                block >= 32 && block <= 1024 && min_grid >= 1);
    expect("cuOccupancyMaxPotentialBlockSize(limit 100, callback)",
           cuOccupancyMaxPotentialBlockSize(&min_grid, &block, add, shared_for, 0, 100), CUDA_SUCCESS);
    expect_true("the block limit holds", block >= 1 && block <= 100);
    expect("cuOccupancyMaxPotentialBlockSizeWithFlags(nullptr)",
           cuOccupancyMaxPotentialBlockSizeWithFlags(nullptr, &block, add, nullptr, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);

    // A cooperative grid larger than the device holds at once: refused at the call.
    CUdevice dev = 0;
    int sms = 0;
    CU_CHECK(cuCtxGetDevice(&dev));
    CU_CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    CU_CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add, 256, 0));
    const unsigned too_many = static_cast<unsigned>(blocks * sms + 1);
    expect("cuLaunchCooperativeKernel(grid too large)",
           cuLaunchCooperativeKernel(add, too_many, 1, 1, 256, 1, 1, 0, 0, params),
           CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);

    // Limits: a set value reads back; memory past the quota is refused.
    size_t v = 0;
    expect("cuCtxGetLimit(heap)", cuCtxGetLimit(&v, CU_LIMIT_MALLOC_HEAP_SIZE), CUDA_SUCCESS);
    const size_t heap = v;
    expect("cuCtxSetLimit(heap 16 MiB)", cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 16 << 20), CUDA_SUCCESS);
    expect("cuCtxGetLimit(heap)", cuCtxGetLimit(&v, CU_LIMIT_MALLOC_HEAP_SIZE), CUDA_SUCCESS);
    expect_true("the heap limit reads back", v >= (16u << 20));
    if (quota_below_device()) // the driver itself takes a 1 PiB heap limit
        expect("cuCtxSetLimit(heap past the quota)", cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, size_t{1} << 50),
               CUDA_ERROR_OUT_OF_MEMORY);
    expect("cuCtxSetLimit(heap back)", cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, heap), CUDA_SUCCESS);
    expect("cuCtxSetLimit(persisting L2, a hint)", cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0), CUDA_SUCCESS);
    // Dynamic parallelism's pending launches (cdpAdvancedQuicksort asks for 4096), charged to the quota.
    expect("cuCtxGetLimit(pending launches)", cuCtxGetLimit(&v, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT), CUDA_SUCCESS);
    const size_t pending = v;
    expect("cuCtxSetLimit(pending launches)", cuCtxSetLimit(CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 4096),
           CUDA_SUCCESS);
    expect("cuCtxGetLimit(pending launches)", cuCtxGetLimit(&v, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT), CUDA_SUCCESS);
    expect_true("at least what was asked", v >= 4096);
    expect("cuCtxSetLimit(pending launches back)", cuCtxSetLimit(CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, pending),
           CUDA_SUCCESS);
    // Not a CUDA-in-graphics context (cuBLASLt reads the shared memory limit
    // at its start; the driver's value for the context comes back: 0 in a
    // primary context, not 0 in the vGPU's own, which is not one).
    expect("cuCtxGetLimit(CIG shared memory)", cuCtxGetLimit(&v, CU_LIMIT_SHMEM_SIZE), CUDA_SUCCESS);
    v = 1;
    expect("cuCtxGetLimit(CIG enabled)", cuCtxGetLimit(&v, CU_LIMIT_CIG_ENABLED), CUDA_SUCCESS);
    expect_true("not a CIG context", v == 0);
    expect("cuCtxSetLimit(CIG enabled)", cuCtxSetLimit(CU_LIMIT_CIG_ENABLED, 1), CUDA_ERROR_UNSUPPORTED_LIMIT);
    expect("cuCtxGetLimit(unknown)", cuCtxGetLimit(&v, static_cast<CUlimit>(99)), CUDA_ERROR_UNSUPPORTED_LIMIT);
    expect("cuCtxGetLimit(nullptr)", cuCtxGetLimit(nullptr, CU_LIMIT_STACK_SIZE), CUDA_ERROR_INVALID_VALUE);

    // Device identity and pairs.
    int major = -1, minor = -1;
    expect("cuDeviceComputeCapability", cuDeviceComputeCapability(&major, &minor, dev), CUDA_SUCCESS);
    char bus[16] = {};
    expect("cuDeviceGetPCIBusId", cuDeviceGetPCIBusId(bus, sizeof bus, dev), CUDA_SUCCESS);
    expect_true("dddd:bb:dd.0", bus[4] == ':' && bus[7] == ':' && bus[10] == '.' && bus[12] == '\0');
    expect("cuDeviceGetPCIBusId(short buffer)", cuDeviceGetPCIBusId(bus, 12, dev), CUDA_ERROR_INVALID_VALUE);
    CUuuid uuid;
    expect("cuDeviceGetUuid", cuDeviceGetUuid(&uuid, dev), CUDA_SUCCESS);
    expect("cuDeviceGetUuid(no such device)", cuDeviceGetUuid(&uuid, 99), CUDA_ERROR_INVALID_DEVICE);
    int p2p = -1, count = 0;
    CU_CHECK(cuDeviceGetCount(&count));
    expect("cuDeviceGetP2PAttribute(same device)",
           cuDeviceGetP2PAttribute(&p2p, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 0), CUDA_ERROR_INVALID_DEVICE);
    expect("cuDeviceGetP2PAttribute(no such device)",
           cuDeviceGetP2PAttribute(&p2p, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, count), CUDA_ERROR_INVALID_DEVICE);
    if (count > 1)
        expect("cuDeviceGetP2PAttribute(0, 1)",
               cuDeviceGetP2PAttribute(&p2p, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1), CUDA_SUCCESS);

    // Streams: priorities (range [0, 0]), host functions and callbacks, event record flags.
    int least = -1, greatest = -1, priority = -1;
    expect("cuCtxGetStreamPriorityRange", cuCtxGetStreamPriorityRange(&least, &greatest), CUDA_SUCCESS);
    CUstream s = nullptr;
    expect("cuStreamCreateWithPriority", cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, -5), CUDA_SUCCESS);
    expect("cuStreamGetPriority", cuStreamGetPriority(s, &priority), CUDA_SUCCESS);
    expect_true("clamped into the range", priority >= greatest && priority <= least);
    expect("cuLaunchHostFunc", cuLaunchHostFunc(s, count_call, &g_host_fn_calls), CUDA_SUCCESS);
    expect_true("the host function ran", g_host_fn_calls == 1);
    int cb = 0;
    expect("cuStreamAddCallback", cuStreamAddCallback(s, stream_callback, &cb, 0), CUDA_SUCCESS);
    expect_true("the callback saw success", cb == 1);
    expect("cuStreamAddCallback(flags)", cuStreamAddCallback(s, stream_callback, &cb, 1), CUDA_ERROR_INVALID_VALUE);
    CUevent ev = nullptr;
    CU_CHECK(cuEventCreate(&ev, 0));
    expect("cuEventRecordWithFlags", cuEventRecordWithFlags(ev, s, CU_EVENT_RECORD_DEFAULT), CUDA_SUCCESS);
    expect("cuEventRecordWithFlags(external)", cuEventRecordWithFlags(ev, s, CU_EVENT_RECORD_EXTERNAL),
           CUDA_ERROR_NOT_SUPPORTED);
    expect("cuEventSynchronize", cuEventSynchronize(ev), CUDA_SUCCESS);
    CU_CHECK(cuEventDestroy(ev));
    CU_CHECK(cuStreamDestroy(s));
    expect("cuStreamGetPriority(destroyed)", cuStreamGetPriority(s, &priority), CUDA_ERROR_INVALID_HANDLE);
    expect("cuFuncSetCacheConfig", cuFuncSetCacheConfig(add, CU_FUNC_CACHE_PREFER_L1), CUDA_SUCCESS);
    expect("cuFuncSetCacheConfig(unknown)", cuFuncSetCacheConfig(add, static_cast<CUfunc_cache>(7)),
           CUDA_ERROR_INVALID_VALUE);
}

// Stream-ordered allocation: every byte through the VMM's quota; the pool's
// figures follow what is in use.
void stream_ordered_calls()
{
    CUdevice dev = 0;
    CU_CHECK(cuCtxGetDevice(&dev));
    CUmemoryPool pool = nullptr, same = nullptr;
    expect("cuDeviceGetDefaultMemPool", cuDeviceGetDefaultMemPool(&pool, dev), CUDA_SUCCESS);
    expect("cuDeviceGetMemPool", cuDeviceGetMemPool(&same, dev), CUDA_SUCCESS);
    expect_true("the current pool is the default one", pool == same);
    expect("cuDeviceGetDefaultMemPool(no such device)", cuDeviceGetDefaultMemPool(&same, 99),
           CUDA_ERROR_INVALID_DEVICE);
    cuuint64_t threshold = ~0ull;
    expect("cuMemPoolSetAttribute(release threshold)",
           cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold), CUDA_SUCCESS);
    cuuint64_t got = 0;
    expect("cuMemPoolGetAttribute(release threshold)",
           cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &got), CUDA_SUCCESS);
    expect_true("the threshold reads back", got == threshold);
    expect("cuMemPoolSetAttribute(used high, not 0)", cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &got),
           CUDA_ERROR_INVALID_VALUE);
    CUstream s = nullptr;
    CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr a = 0, b = 0;
    expect("cuMemAllocAsync", cuMemAllocAsync(&a, 1 << 20, s), CUDA_SUCCESS);
    expect("cuMemsetD32Async(the allocation)", cuMemsetD32Async(a, 7, (1 << 20) / 4, s), CUDA_SUCCESS);
    expect("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync(&b, 4096, pool, s), CUDA_SUCCESS);
    expect("cuMemPoolGetAttribute(used)", cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &got),
           CUDA_SUCCESS);
    expect_true("used: both allocations", got == (1 << 20) + 4096);
    unsigned* word = static_cast<unsigned*>(pinned_alloc(sizeof(unsigned)));
    *word = 0;
    expect("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync(word, a + 4096, sizeof *word, s), CUDA_SUCCESS);
    expect("cuMemFreeAsync", cuMemFreeAsync(a, s), CUDA_SUCCESS);
    expect_true("the free came after the stream's work", *word == 7);
    expect("cuMemFreeAsync(freed)", cuMemFreeAsync(a, s), CUDA_ERROR_INVALID_VALUE);
    // A queued memset the driver refuses returns its own error, at the call.
    expect("cuMemsetD32Async(misaligned)", cuMemsetD32Async(b + 2, 0, 4, s), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemsetD16Async(misaligned)", cuMemsetD16Async(b + 1, 0, 4, s), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemsetD8Async(past the allocation)", cuMemsetD8Async(b, 0, 4097, s), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemsetD32Async(size wraps)", cuMemsetD32Async(b, 0, ~size_t{0} / 2, s), CUDA_ERROR_INVALID_VALUE);
    expect("cuStreamSynchronize (nothing held)", cuStreamSynchronize(s), CUDA_SUCCESS);
    expect("cuMemFreeAsync", cuMemFreeAsync(b, 0), CUDA_SUCCESS);
    expect("cuMemAllocAsync(past the quota)", cuMemAllocAsync(&a, size_t{1} << 50, s), CUDA_ERROR_OUT_OF_MEMORY);
    expect("cuMemAllocAsync(0 bytes)", cuMemAllocAsync(&a, 0, s), CUDA_ERROR_INVALID_VALUE);
    CU_CHECK(cuStreamDestroy(s));
    expect("cuMemAllocAsync(destroyed stream)", cuMemAllocAsync(&a, 4096, s), CUDA_ERROR_INVALID_HANDLE);
    expect("cuMemPoolGetAttribute(used high)", cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &got),
           CUDA_SUCCESS);
    expect_true("the high mark", got == (1 << 20) + 4096);
    CUmemLocation here = {CU_MEM_LOCATION_TYPE_DEVICE, dev};
    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    expect("cuMemPoolGetAccess(own device)", cuMemPoolGetAccess(&flags, pool, &here), CUDA_SUCCESS);
    expect_true("read-write", flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUmemAccessDesc none = {here, CU_MEM_ACCESS_FLAGS_PROT_NONE};
    expect("cuMemPoolSetAccess(own device, none)", cuMemPoolSetAccess(pool, &none, 1), CUDA_ERROR_INVALID_DEVICE);
    expect("cuMemPoolSetAttribute(bogus pool)",
           cuMemPoolSetAttribute(reinterpret_cast<CUmemoryPool>(&threshold), CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                 &threshold),
           CUDA_ERROR_INVALID_VALUE);
}

// A pool the program makes: current for its device, allocated from,
// destroyed with an allocation still out (valid until freed).
void made_pools()
{
    CUdevice dev = 0;
    CU_CHECK(cuCtxGetDevice(&dev));
    CUmemPoolProps props = {};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location = {CU_MEM_LOCATION_TYPE_DEVICE, dev};
    CUmemoryPool made = nullptr, current = nullptr, fallback = nullptr;
    expect("cuMemPoolCreate", cuMemPoolCreate(&made, &props), CUDA_SUCCESS);
    expect("cuDeviceSetMemPool", cuDeviceSetMemPool(dev, made), CUDA_SUCCESS);
    expect("cuDeviceGetMemPool(after a set)", cuDeviceGetMemPool(&current, dev), CUDA_SUCCESS);
    expect_true("the made pool is current", current == made);
    CUmemLocation here = {CU_MEM_LOCATION_TYPE_DEVICE, dev};
    expect("cuMemGetMemPool", cuMemGetMemPool(&current, &here, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_SUCCESS);
    expect_true("the same, by location", current == made);
    CUdeviceptr a = 0;
    expect("cuMemAllocAsync(the current pool)", cuMemAllocAsync(&a, 8192, 0), CUDA_SUCCESS);
    cuuint64_t used = 0;
    CU_CHECK(cuMemPoolGetAttribute(made, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
    expect_true("counted in the made pool", used == 8192);
    expect("cuMemPoolDestroy", cuMemPoolDestroy(made), CUDA_SUCCESS);
    expect("cuDeviceGetMemPool(after the destroy)", cuDeviceGetMemPool(&current, dev), CUDA_SUCCESS);
    CU_CHECK(cuDeviceGetDefaultMemPool(&fallback, dev));
    expect_true("the default pool is current again", current == fallback);
    expect("cuMemsetD32(an allocation of the destroyed pool)", cuMemsetD32(a, 1, 2048), CUDA_SUCCESS);
    expect("cuMemFreeAsync(an allocation of the destroyed pool)", cuMemFreeAsync(a, 0), CUDA_SUCCESS);
    expect("cuMemPoolDestroy(again)", cuMemPoolDestroy(made), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemPoolDestroy(a default pool)", cuMemPoolDestroy(fallback), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemGetDefaultMemPool", cuMemGetDefaultMemPool(&current, &here, CU_MEM_ALLOCATION_TYPE_PINNED),
           CUDA_SUCCESS);
    expect_true("the device's default pool", current == fallback);
    props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    expect("cuMemPoolCreate(exportable)", cuMemPoolCreate(&made, &props), CUDA_ERROR_NOT_SUPPORTED);
    props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    props.location.id = 99;
    expect("cuMemPoolCreate(no such device)", cuMemPoolCreate(&made, &props), CUDA_ERROR_INVALID_DEVICE);
}

// A stream waits for an event of another context (the driver allows it
// across contexts and devices): the guest waits for the event there.
void cross_context_event_wait()
{
    CUcontext home = nullptr, other = nullptr;
    CU_CHECK(cuCtxGetCurrent(&home));
    CUdevice dev = 0;
    CU_CHECK(cuCtxGetDevice(&dev));
    CU_CHECK(cuCtxCreate(&other, nullptr, 0, dev));
    CUevent e = nullptr;
    CU_CHECK(cuEventCreate(&e, 0));
    CU_CHECK(cuEventRecord(e, 0));
    CU_CHECK(cuCtxSetCurrent(home));
    expect("cuStreamWaitEvent(an event of another context)", cuStreamWaitEvent(0, e, 0), CUDA_SUCCESS);
    expect("cuStreamSynchronize after it", cuStreamSynchronize(0), CUDA_SUCCESS);
    CUcontext now = nullptr;
    CU_CHECK(cuCtxGetCurrent(&now));
    expect_true("the current context is unchanged", now == home);
    CU_CHECK(cuCtxSetCurrent(other));
    CU_CHECK(cuEventDestroy(e));
    CU_CHECK(cuCtxDestroy(other));
    CU_CHECK(cuCtxSetCurrent(home));
}
