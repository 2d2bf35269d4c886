// conformance: every entry point of the guest Driver API, success and error
// paths, with the statuses the CUDA driver gives (docs/driver-api.md). The
// same checks run on the host backend (CI) and on CUDA (the GPU machine);
// each failure is printed with what came back and what was wanted.
#include "guest-stub/programs/conformance.h"

using namespace guest;

namespace {
unsigned g_checks = 0, g_failed = 0;
} // namespace

void expect(const char* what, CUresult got, CUresult want)
{
    ++g_checks;
    if (got == want)
        return;
    ++g_failed;
    const char *g = "?", *w = "?";
    cuGetErrorName(got, &g);
    cuGetErrorName(want, &w);
    printf("conformance: FAIL %s: %s (%u), want %s (%u)\n", what, g ? g : "?", got, w ? w : "?", want);
}

void expect_true(const char* what, bool ok)
{
    ++g_checks;
    if (!ok) {
        ++g_failed;
        printf("conformance: FAIL %s\n", what);
    }
}

namespace {
enum class QuotaAnswer { NotAsked, Below, Whole };
QuotaAnswer g_quota = QuotaAnswer::NotAsked; // the VM's quota is fixed for its run: asked once, noted once
} // namespace

bool quota_below_device()
{
    if (g_quota == QuotaAnswer::NotAsked) {
        size_t free_bytes = 0, quota = 0, device = 0;
        if (cuMemGetInfo(&free_bytes, &quota) != CUDA_SUCCESS || cuDeviceTotalMem(&device, 0) != CUDA_SUCCESS)
            return false;
        g_quota = quota < device ? QuotaAnswer::Below : QuotaAnswer::Whole;
        if (g_quota == QuotaAnswer::Whole)
            printf("conformance: the VM may hold all of the GPU's memory: checks of what a quota refuses skipped\n");
    }
    return g_quota == QuotaAnswer::Below;
}

CUfunction bogus(CUfunction f)
{
    return reinterpret_cast<CUfunction>(reinterpret_cast<uintptr_t>(f) ^ (uintptr_t{1} << 32));
}

namespace {

void device_calls()
{
    int n = 0, v = 0;
    CUdevice d = -1;
    char name[64] = {};
    size_t bytes = 0;
    expect("cuInit(flags 1)", cuInit(1), CUDA_ERROR_INVALID_VALUE);
    expect("cuDeviceGetCount", cuDeviceGetCount(&n), CUDA_SUCCESS);
    expect_true("one device", n == 1);
    expect("cuDeviceGetCount(null)", cuDeviceGetCount(nullptr), CUDA_ERROR_INVALID_VALUE);
    expect("cuDeviceGet(0)", cuDeviceGet(&d, 0), CUDA_SUCCESS);
    expect("cuDeviceGet(1)", cuDeviceGet(&d, 1), CUDA_ERROR_INVALID_DEVICE);
    expect("cuDeviceGetAttribute(max threads)", cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0),
           CUDA_SUCCESS);
    expect_true("1024 threads per block", v == 1024);
    expect("cuDeviceGetAttribute(warp size)", cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0), CUDA_SUCCESS);
    expect_true("warp of 32", v == 32);
    // Every attribute guest_cuda.h names is answered.
    const CUdevice_attribute named[] = {
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
        CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, CU_DEVICE_ATTRIBUTE_WARP_SIZE,
        CU_DEVICE_ATTRIBUTE_CLOCK_RATE, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
        CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
        CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR};
    for (CUdevice_attribute a : named)
        expect("cuDeviceGetAttribute(a named attribute)", cuDeviceGetAttribute(&v, a, 0), CUDA_SUCCESS);
    expect("cuDeviceGetAttribute(48 KiB shared)",
           cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 0), CUDA_SUCCESS);
    expect_true("48 KiB of shared memory per block", v == 48 << 10);
    expect("cuDeviceGetAttribute(device 1)", cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 1),
           CUDA_ERROR_INVALID_DEVICE);
    expect("cuDeviceGetName", cuDeviceGetName(name, sizeof name, 0), CUDA_SUCCESS);
    expect_true("a name", name[0] != 0);
    expect("cuDeviceTotalMem", cuDeviceTotalMem(&bytes, 0), CUDA_SUCCESS);
    expect_true("some memory", bytes > 0);
    expect("cuDeviceTotalMem(device 1)", cuDeviceTotalMem(&bytes, 1), CUDA_ERROR_INVALID_DEVICE);
    const char* s = nullptr;
    expect("cuGetErrorName", cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &s), CUDA_SUCCESS);
    expect_true("its name", s != nullptr && strcmp(s, "CUDA_ERROR_INVALID_VALUE") == 0);
    expect("cuGetErrorString", cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s), CUDA_SUCCESS);
    expect("cuGetErrorName(unknown)", cuGetErrorName(static_cast<CUresult>(123456), &s), CUDA_ERROR_INVALID_VALUE);
    // Every status the driver can return has a name and a text.
    expect("cuGetErrorName(LAUNCH_TIMEOUT)", cuGetErrorName(CUDA_ERROR_LAUNCH_TIMEOUT, &s), CUDA_SUCCESS);
    expect_true("its name", s != nullptr && strcmp(s, "CUDA_ERROR_LAUNCH_TIMEOUT") == 0);
    expect("cuGetErrorString(PEER_ACCESS_UNSUPPORTED)", cuGetErrorString(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, &s),
           CUDA_SUCCESS);
    expect_true("its text", s != nullptr && strcmp(s, "peer access unsupported") == 0);
    expect("cuCtxSynchronize", cuCtxSynchronize(), CUDA_SUCCESS);
}

// Before any context, then the stack, primary contexts, and objects that
// belong to the context they were made in. Leaves `main` current.
void context_calls(CUcontext* main)
{
    CUcontext c = reinterpret_cast<CUcontext>(1), other = nullptr, primary = nullptr, popped = nullptr;
    CUdeviceptr d = 0;
    CUdevice dev = -1;
    unsigned flags = 99;
    int active = -1;
    expect("cuCtxGetCurrent (none yet)", cuCtxGetCurrent(&c), CUDA_SUCCESS);
    expect_true("no context after cuInit", c == nullptr);
    expect("cuMemAlloc without a context", cuMemAlloc(&d, 64), CUDA_ERROR_INVALID_CONTEXT);
    expect("cuCtxGetDevice without a context", cuCtxGetDevice(&dev), CUDA_ERROR_INVALID_CONTEXT);
    expect("cuCtxPopCurrent (empty stack)", cuCtxPopCurrent(&popped), CUDA_ERROR_INVALID_CONTEXT);
    expect("cuCtxCreate(device 1)", cuCtxCreate(&c, nullptr, 0, 1), CUDA_ERROR_INVALID_DEVICE);
    expect("cuCtxCreate(unknown flags)", cuCtxCreate(&c, nullptr, 0x400, 0), CUDA_ERROR_INVALID_VALUE);
    expect("cuCtxCreate", cuCtxCreate(main, nullptr, CU_CTX_SCHED_YIELD, 0), CUDA_SUCCESS);
    expect("cuCtxGetCurrent", cuCtxGetCurrent(&c), CUDA_SUCCESS);
    expect_true("the new context is current", c == *main);
    expect("cuCtxGetDevice", cuCtxGetDevice(&dev), CUDA_SUCCESS);
    expect("cuCtxGetFlags", cuCtxGetFlags(&flags), CUDA_SUCCESS);
    expect_true("device 0, flags as given", dev == 0 && flags == CU_CTX_SCHED_YIELD);
    // A second context, made with empty parameters as NVIDIA's samples pass
    // them (no execution affinity, no CIG): its objects are its own.
    CUctxCreateParams empty_params = {};
    expect("cuCtxCreate (second, empty parameters)", cuCtxCreate(&other, &empty_params, 0, 0), CUDA_SUCCESS);
    CUctxCreateParams affinity = {};
    affinity.numExecAffinityParams = 1;
    CUcontext refused = nullptr;
    expect("cuCtxCreate (execution affinity)", cuCtxCreate(&refused, &affinity, 0, 0), CUDA_ERROR_NOT_SUPPORTED);
    CUstream s_other = 0;
    expect("cuStreamCreate in the second", cuStreamCreate(&s_other, 0), CUDA_SUCCESS);
    CUdeviceptr in_other = 0, in_main = 0;
    expect("cuMemAlloc in the second", cuMemAlloc(&in_other, 4096), CUDA_SUCCESS);
    expect("cuCtxPopCurrent", cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    expect_true("popped the second, the first current again", popped == other && cuCtxGetCurrent(&c) == 0 && c == *main);
    expect("cuStreamSynchronize(another context's stream)", cuStreamSynchronize(s_other), CUDA_ERROR_INVALID_HANDLE);
    expect("cuMemAlloc in the first", cuMemAlloc(&in_main, 4096), CUDA_SUCCESS);
    expect("cuMemsetD8 (this context's memory)", cuMemsetD8(in_main, 7, 4096), CUDA_SUCCESS);
    // Peer copies between the two (one device: both share it).
    expect("cuMemcpyPeer", cuMemcpyPeer(in_other, other, in_main, *main, 4096), CUDA_SUCCESS);
    expect("cuMemcpyPeerAsync", cuMemcpyPeerAsync(in_main, *main, in_other, other, 4096, 0), CUDA_SUCCESS);
    expect("cuMemcpyPeer(no context)", cuMemcpyPeer(in_other, nullptr, in_main, *main, 16), CUDA_ERROR_INVALID_CONTEXT);
    expect("cuCtxSynchronize", cuCtxSynchronize(), CUDA_SUCCESS);
    uint8_t back[16] = {};
    expect("cuMemcpyDtoH (peer copied)", cuMemcpyDtoH(back, in_main, sizeof back), CUDA_SUCCESS);
    expect_true("the bytes went there and back", back[0] == 7 && back[15] == 7);
    expect("cuCtxPushCurrent", cuCtxPushCurrent(other), CUDA_SUCCESS);
    expect("cuStreamSynchronize (its own stream again)", cuStreamSynchronize(s_other), CUDA_SUCCESS);
    expect("cuCtxSetCurrent (replaces the top)", cuCtxSetCurrent(*main), CUDA_SUCCESS);
    expect("cuCtxDestroy (frees its stream and memory)", cuCtxDestroy(other), CUDA_SUCCESS);
    expect("cuCtxDestroy again", cuCtxDestroy(other), CUDA_ERROR_INVALID_CONTEXT);
    expect("cuMemcpyPeer(destroyed context)", cuMemcpyPeer(in_main, *main, in_main, other, 16),
           CUDA_ERROR_INVALID_CONTEXT);
    expect("cuMemFree(its memory, freed with it)", cuMemFree(in_other), CUDA_ERROR_INVALID_VALUE);
    expect("cuCtxPushCurrent(destroyed)", cuCtxPushCurrent(other), CUDA_ERROR_INVALID_CONTEXT);
    expect_true("the first is current", cuCtxGetCurrent(&c) == 0 && c == *main);
    // The primary context: retained, used, released.
    expect("cuDevicePrimaryCtxGetState", cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
    expect_true("not active yet", active == 0);
    expect("cuDevicePrimaryCtxSetFlags", cuDevicePrimaryCtxSetFlags(0, CU_CTX_SCHED_BLOCKING_SYNC), CUDA_SUCCESS);
    expect("cuDevicePrimaryCtxSetFlags(bad)", cuDevicePrimaryCtxSetFlags(0, 3), CUDA_ERROR_INVALID_VALUE);
    expect("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&primary, 0), CUDA_SUCCESS);
    expect("cuDevicePrimaryCtxRetain(device 1)", cuDevicePrimaryCtxRetain(&c, 1), CUDA_ERROR_INVALID_DEVICE);
    expect("cuDevicePrimaryCtxGetState", cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
    expect_true("active, with its flags", active == 1 && flags == CU_CTX_SCHED_BLOCKING_SYNC);
    expect("cuCtxPushCurrent(primary)", cuCtxPushCurrent(primary), CUDA_SUCCESS);
    expect("cuCtxGetFlags(primary)", cuCtxGetFlags(&flags), CUDA_SUCCESS);
    expect_true("the primary's flags", flags == CU_CTX_SCHED_BLOCKING_SYNC);
    CUdeviceptr in_primary = 0;
    expect("cuMemAlloc in the primary", cuMemAlloc(&in_primary, 4096), CUDA_SUCCESS);
    expect("cuCtxDestroy(primary)", cuCtxDestroy(primary), CUDA_ERROR_INVALID_CONTEXT);
    expect("cuCtxPopCurrent", cuCtxPopCurrent(nullptr), CUDA_SUCCESS);
    expect("cuDevicePrimaryCtxGetState (asked again: the same)", cuDevicePrimaryCtxGetState(0, &flags, &active),
           CUDA_SUCCESS);
    expect_true("still active", active == 1);
    expect("cuDevicePrimaryCtxRelease (the last)", cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
    expect("cuDevicePrimaryCtxGetState (released)", cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
    expect_true("inactive once released", active == 0);
    expect("cuDevicePrimaryCtxRelease (not retained)", cuDevicePrimaryCtxRelease(0), CUDA_ERROR_INVALID_CONTEXT);
    expect("cuMemFree(primary memory, freed by the last release)", cuMemFree(in_primary), CUDA_ERROR_INVALID_VALUE);
    expect("cuDevicePrimaryCtxReset", cuDevicePrimaryCtxReset(0), CUDA_SUCCESS);
    expect("cuMemFree", cuMemFree(in_main), CUDA_SUCCESS);
    // The deprecated usage count: an attach adds one, a detach takes one, the last detach destroys.
    CUcontext counted = nullptr, attached = nullptr;
    expect("cuCtxCreate (counted)", cuCtxCreate(&counted, nullptr, 0, 0), CUDA_SUCCESS);
    expect("cuCtxAttach", cuCtxAttach(&attached, 0), CUDA_SUCCESS);
    expect_true("attached to the current context", attached == counted);
    expect("cuCtxAttach(flags)", cuCtxAttach(&attached, 1), CUDA_ERROR_INVALID_VALUE);
    expect("cuCtxDetach(not current)", cuCtxDetach(*main), CUDA_ERROR_INVALID_CONTEXT);
    expect("cuCtxDetach (the attach)", cuCtxDetach(counted), CUDA_SUCCESS);
    expect_true("still current", cuCtxGetCurrent(&c) == 0 && c == counted);
    expect("cuCtxDetach (the last: destroyed)", cuCtxDetach(counted), CUDA_SUCCESS);
    expect("cuCtxPushCurrent(detached)", cuCtxPushCurrent(counted), CUDA_ERROR_INVALID_CONTEXT);
    expect_true("the first is current", cuCtxGetCurrent(&c) == 0 && c == *main);
}

// Page-locked memory: blocks given back and reused, registration.
void host_memory_calls()
{
    void *p1 = nullptr, *p2 = nullptr, *p3 = nullptr;
    expect("cuMemAllocHost", cuMemAllocHost(&p1, 8192), CUDA_SUCCESS);
    expect("cuMemHostAlloc(portable, mapped)",
           cuMemHostAlloc(&p2, 4096, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP), CUDA_SUCCESS);
    expect("cuMemHostAlloc(unknown flags)", cuMemHostAlloc(&p3, 4096, 0x100), CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr dp = 0;
    expect("cuMemHostGetDevicePointer", cuMemHostGetDevicePointer(&dp, p2, 0), CUDA_SUCCESS);
    expect("cuMemsetD8 through it", cuMemsetD8(dp, 0x42, 4096), CUDA_SUCCESS);
    expect_true("the block written by the device", static_cast<uint8_t*>(p2)[4095] == 0x42);
    unsigned flags = 0;
    expect("cuMemHostGetFlags", cuMemHostGetFlags(&flags, static_cast<uint8_t*>(p2) + 100), CUDA_SUCCESS);
    expect_true("the flags it was given", flags == (CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
    expect("cuMemHostGetFlags(not page-locked)", cuMemHostGetFlags(&flags, &flags), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemFreeHost", cuMemFreeHost(p1), CUDA_SUCCESS);
    expect("cuMemFreeHost again", cuMemFreeHost(p1), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemAllocHost (reuses the freed block)", cuMemAllocHost(&p3, 4096), CUDA_SUCCESS);
    expect_true("the same memory", p3 == p1);
    expect("cuMemHostGetDevicePointer(freed)", cuMemHostGetDevicePointer(&dp, static_cast<uint8_t*>(p1) + 4096, 0),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuMemFreeHost", cuMemFreeHost(p2), CUDA_SUCCESS);
    expect("cuMemFreeHost", cuMemFreeHost(p3), CUDA_SUCCESS);
    // Registering a buffer the program already has.
    auto* mine = static_cast<uint8_t*>(pinned_alloc(8192));
    expect("cuMemHostRegister", cuMemHostRegister(mine, 8192, CU_MEMHOSTREGISTER_DEVICEMAP), CUDA_SUCCESS);
    expect("cuMemHostRegister (overlapping)", cuMemHostRegister(mine + 4096, 4096, 0),
           CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    expect("cuMemHostGetDevicePointer(registered)", cuMemHostGetDevicePointer(&dp, mine + 4096, 0), CUDA_SUCCESS);
    expect("cuMemsetD8 through it", cuMemsetD8(dp, 0x24, 16), CUDA_SUCCESS);
    expect_true("the buffer written by the device", mine[4096] == 0x24 && mine[4111] == 0x24);
    expect("cuMemHostUnregister", cuMemHostUnregister(mine), CUDA_SUCCESS);
    expect("cuMemHostUnregister again", cuMemHostUnregister(mine), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    expect("cuMemHostGetDevicePointer(unregistered)", cuMemHostGetDevicePointer(&dp, mine, 0), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemHostRegister(unmapped)", cuMemHostRegister(reinterpret_cast<void*>(0x10), 4096, 0),
           CUDA_ERROR_INVALID_VALUE);
}

// A pageable buffer (scattered frames) registered: a kernel reads it and a
// memset writes it through its one device address. Where guest RAM is on
// huge host pages the vGPU gives no address (CUDA_ERROR_NOT_SUPPORTED).
void registered_pageable_calls(CUfunction add)
{
    const unsigned n = 3000; // 12,000 bytes: four frames, the first and last partly
    auto* buf = static_cast<float*>(pageable_alloc(n * sizeof(float) + 512)) + 100;
    for (unsigned i = 0; i < n; ++i)
        buf[i] = static_cast<float>(i);
    expect("cuMemHostRegister(pageable)", cuMemHostRegister(buf, n * sizeof(float), CU_MEMHOSTREGISTER_DEVICEMAP),
           CUDA_SUCCESS);
    CUdeviceptr dbuf = 0;
    const CUresult got = cuMemHostGetDevicePointer(&dbuf, buf, 0);
    expect_true("cuMemHostGetDevicePointer(registered pageable): an address, or none on huge host pages",
                got == CUDA_SUCCESS || got == CUDA_ERROR_NOT_SUPPORTED);
    printf("conformance: registered pageable buffer: %s\n",
           got == CUDA_SUCCESS ? "one device address (host alias of its frames)" : "no device address (huge host pages)");
    if (got == CUDA_SUCCESS) {
        CUdeviceptr out = 0;
        CU_CHECK(cuMemAlloc(&out, n * sizeof(float)));
        unsigned count = n;
        void* params[] = {&dbuf, &dbuf, &out, &count};
        expect("cuLaunchKernel(reading the registered buffer)",
               cuLaunchKernel(add, (n + 255) / 256, 1, 1, 256, 1, 1, 0, 0, params, nullptr), CUDA_SUCCESS);
        auto* sums = static_cast<float*>(pinned_alloc(n * sizeof(float)));
        expect("cuMemcpyDtoH", cuMemcpyDtoH(sums, out, n * sizeof(float)), CUDA_SUCCESS);
        bool right = true;
        for (unsigned i = 0; i < n; ++i)
            right &= sums[i] == 2.0f * static_cast<float>(i);
        expect_true("the kernel read every element through the alias, in order", right);
        expect("cuMemsetD32 through it", cuMemsetD32(dbuf + 4 * 1000, 0x3f800000u, 1000), CUDA_SUCCESS);
        expect_true("the frames written in place", buf[999] == 999.0f && buf[1000] == 1.0f && buf[1999] == 1.0f &&
                                                       buf[2000] == 2000.0f);
        expect("cuMemsetD8 past its end", cuMemsetD8(dbuf, 0, n * sizeof(float) + 4096), CUDA_ERROR_INVALID_VALUE);
        CU_CHECK(cuMemFree(out));
    }
    // Copies from and to it go as any pageable buffer's.
    CUdeviceptr copy = 0;
    CU_CHECK(cuMemAlloc(&copy, n * sizeof(float)));
    auto* back = static_cast<float*>(pinned_alloc(n * sizeof(float)));
    expect("cuMemcpyHtoD(from the registered buffer)", cuMemcpyHtoD(copy, buf, n * sizeof(float)), CUDA_SUCCESS);
    expect("cuMemcpyDtoH", cuMemcpyDtoH(back, copy, n * sizeof(float)), CUDA_SUCCESS);
    expect_true("the copy holds the buffer", memcmp(back, buf, n * sizeof(float)) == 0);
    CU_CHECK(cuMemFree(copy));
    expect("cuMemHostUnregister(pageable)", cuMemHostUnregister(buf), CUDA_SUCCESS);
    if (got == CUDA_SUCCESS)
        expect("cuMemsetD8 through it once unregistered", cuMemsetD8(dbuf, 0, 16), CUDA_ERROR_INVALID_VALUE);
}

// CUDA's API synchronization rules for pageable memory. With deferred
// submission on, a queued command is not even kicked until something waits,
// so a copy that returned early would show here.
void pageable_async_rules()
{
    VgpuGuestStats st0, st1;
    VgpuGuestInfo info;
    expect("vgpuGetInfo", vgpuGetInfo(&info), CUDA_SUCCESS);
    const bool was_deferred = info.deferred != 0;
    vgpuSetDeferredSubmission(1);
    CUstream st = 0;
    CUdeviceptr d = 0;
    expect("cuStreamCreate", cuStreamCreate(&st, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    expect("cuMemAlloc", cuMemAlloc(&d, 4096), CUDA_SUCCESS);
    auto* src = static_cast<uint8_t*>(pageable_alloc(4096));
    auto* back = static_cast<uint8_t*>(pageable_alloc(4096));
    memset(src, 0x11, 4096);
    memset(back, 0, 4096);
    expect("cuMemcpyHtoDAsync(pageable)", cuMemcpyHtoDAsync(d, src, 4096, st), CUDA_SUCCESS);
    memset(src, 0x22, 4096); // allowed at once: the source has been read
    expect("cuMemcpyDtoHAsync(pageable)", cuMemcpyDtoHAsync(back, d, 4096, st), CUDA_SUCCESS);
    // No synchronize: the data must be there already, and be the first bytes.
    expect_true("pageable HtoDAsync read the source, DtoHAsync wrote the data, before returning",
                back[0] == 0x11 && back[4095] == 0x11);
    // Page-locked memory stays asynchronous: neither call waits.
    void* locked = nullptr;
    expect("cuMemAllocHost", cuMemAllocHost(&locked, 4096), CUDA_SUCCESS);
    vgpuGetStats(&st0);
    expect("cuMemcpyHtoDAsync(page-locked)", cuMemcpyHtoDAsync(d, locked, 4096, st), CUDA_SUCCESS);
    expect("cuMemcpyDtoHAsync(page-locked)", cuMemcpyDtoHAsync(locked, d, 4096, st), CUDA_SUCCESS);
    vgpuGetStats(&st1);
    expect_true("page-locked copies do not wait", st1.waits == st0.waits);
    expect("cuStreamSynchronize", cuStreamSynchronize(st), CUDA_SUCCESS);
    expect("cuMemFreeHost", cuMemFreeHost(locked), CUDA_SUCCESS);
    expect("cuMemFree", cuMemFree(d), CUDA_SUCCESS);
    expect("cuStreamDestroy", cuStreamDestroy(st), CUDA_SUCCESS);
    vgpuSetDeferredSubmission(was_deferred ? 1 : 0);
}

void memory_calls()
{
    size_t free_bytes = 0, total = 0;
    expect("cuMemGetInfo", cuMemGetInfo(&free_bytes, &total), CUDA_SUCCESS);
    expect_true("free <= total", free_bytes <= total && total > 0);
    CUdeviceptr a = 0, b = 0;
    expect("cuMemAlloc(0 bytes)", cuMemAlloc(&a, 0), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemAlloc", cuMemAlloc(&a, 4096), CUDA_SUCCESS);
    expect("cuMemAlloc", cuMemAlloc(&b, 4096), CUDA_SUCCESS);
    auto* host = static_cast<uint8_t*>(pinned_alloc(8192));
    for (unsigned i = 0; i < 4096; ++i)
        host[i] = static_cast<uint8_t>(i * 13 + 1);
    expect("cuMemcpyHtoD", cuMemcpyHtoD(a, host, 4096), CUDA_SUCCESS);
    expect("cuMemcpyDtoD", cuMemcpyDtoD(b, a, 4096), CUDA_SUCCESS);
    expect("cuMemcpyDtoH", cuMemcpyDtoH(host + 4096, b, 4096), CUDA_SUCCESS);
    expect_true("HtoD, DtoD, DtoH round trip", memcmp(host, host + 4096, 4096) == 0);
    // cuMemcpy tells device from guest addresses itself (unified addressing).
    auto* pageable = static_cast<uint8_t*>(pageable_alloc(8192));
    const auto addr = [](const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); };
    expect("cuMemcpy(device <- pinned)", cuMemcpy(b, addr(host), 4096), CUDA_SUCCESS);
    expect("cuMemcpy(pageable <- device)", cuMemcpy(addr(pageable), b, 4096), CUDA_SUCCESS);
    expect("cuMemcpy(device <- device)", cuMemcpy(b, a, 64), CUDA_SUCCESS);
    expect("cuMemcpy(pageable <- pinned)", cuMemcpy(addr(pageable + 4096), addr(host + 4096), 4096), CUDA_SUCCESS);
    expect_true("cuMemcpy moved every byte",
                memcmp(pageable, host, 4096) == 0 && memcmp(pageable + 4096, host + 4096, 4096) == 0);
    expect("cuMemcpyAsync(pageable <- device)", cuMemcpyAsync(addr(pageable), b + 64, 64, 0), CUDA_SUCCESS);
    expect("cuMemcpy(an address that is neither)", cuMemcpy(addr(pageable), 0x10, 16), CUDA_ERROR_INVALID_VALUE);
    expect("cuCtxSynchronize", cuCtxSynchronize(), CUDA_SUCCESS);
    expect("cuMemcpyHtoD past the allocation", cuMemcpyHtoD(a + 2048, host, 4096), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemsetD8", cuMemsetD8(a, 0x5a, 4096), CUDA_SUCCESS);
    expect("cuMemsetD32", cuMemsetD32(b, 0x01020304u, 1024), CUDA_SUCCESS);
    expect("cuMemsetD16", cuMemsetD16(a + 2048, 0xbeefu, 1024), CUDA_SUCCESS);
    expect("cuMemsetD16(odd address)", cuMemsetD16(a + 1, 0, 4), CUDA_ERROR_INVALID_VALUE);
    CUstream st = 0;
    expect("cuStreamCreate", cuStreamCreate(&st, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    expect("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync(host, a, 4096, st), CUDA_SUCCESS);
    expect("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync(host + 4096, b, 4096, st), CUDA_SUCCESS);
    expect("cuStreamSynchronize", cuStreamSynchronize(st), CUDA_SUCCESS);
    expect_true("memsets landed", host[0] == 0x5a && host[2047] == 0x5a && host[2048] == 0xef && host[4095] == 0xbe &&
                                      host[4096] == 4 && host[4099] == 1);
    expect("cuMemsetD8Async", cuMemsetD8Async(a, 1, 4096, st), CUDA_SUCCESS);
    expect("cuMemsetD32Async", cuMemsetD32Async(b, 2, 1024, st), CUDA_SUCCESS);
    expect("cuMemsetD16Async", cuMemsetD16Async(b, 3, 8, st), CUDA_SUCCESS);
    expect("cuMemcpyDtoDAsync", cuMemcpyDtoDAsync(a, b, 16, st), CUDA_SUCCESS);
    expect("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync(b, host, 16, st), CUDA_SUCCESS);
    expect("cuStreamSynchronize", cuStreamSynchronize(st), CUDA_SUCCESS);
    // A queued memset the driver refuses returns its own error at the call;
    // one only the vGPU can judge (an address in none of this guest's
    // allocations) comes at the next synchronization, once.
    expect("cuMemsetD8Async past the allocation", cuMemsetD8Async(a + 4000, 0, 200, st), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemsetD8Async outside every allocation (queued)", cuMemsetD8Async(0x10000, 0, 200, st), CUDA_SUCCESS);
    expect("... reported by cuStreamSynchronize", cuStreamSynchronize(st), CUDA_ERROR_INVALID_VALUE);
    expect("... once", cuStreamSynchronize(st), CUDA_SUCCESS);
    expect("cuStreamDestroy", cuStreamDestroy(st), CUDA_SUCCESS);
    expect("cuStreamDestroy again", cuStreamDestroy(st), CUDA_ERROR_INVALID_HANDLE);
    expect("cuMemFree", cuMemFree(a), CUDA_SUCCESS);
    expect("cuMemFree again", cuMemFree(a), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemFree(inside)", cuMemFree(b + 8), CUDA_ERROR_INVALID_VALUE);
    expect("cuMemFree", cuMemFree(b), CUDA_SUCCESS);
    host_memory_calls();
    pageable_async_rules();
    // Zero copy: the device writes guest RAM in place.
    CUdeviceptr win = 0;
    expect("vgpuGuestRamDevicePtr", vgpuGuestRamDevicePtr(&win, host, 4096), CUDA_SUCCESS);
    expect("cuMemsetD8 through it", cuMemsetD8(win, 0x77, 64), CUDA_SUCCESS);
    expect_true("guest RAM written", host[0] == 0x77 && host[63] == 0x77);
}

void module_and_launch_calls()
{
    CUmodule mod = 0;
    CUfunction add = 0, none = 0;
    expect("cuModuleLoadData", cuModuleLoadData(&mod, kvmgpu_kernels_image), CUDA_SUCCESS);
    expect("cuModuleGetFunction", cuModuleGetFunction(&add, mod, "vector_add"), CUDA_SUCCESS);
    expect("cuModuleGetFunction(unknown)", cuModuleGetFunction(&none, mod, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
    CUmodule again = 0;
    expect("cuModuleLoadFatBinary", cuModuleLoadFatBinary(&again, kvmgpu_kernels_image), CUDA_SUCCESS);
    expect("cuModuleUnload(the fat binary's)", cuModuleUnload(again), CUDA_SUCCESS);
    CUtexref tex = nullptr;
    expect("cuModuleGetTexRef", cuModuleGetTexRef(&tex, mod, "tex"), CUDA_ERROR_NOT_FOUND);
    // What a VM does not offer answers as the driver does without the feature.
    expect("cuTexRefCreate", cuTexRefCreate(&tex), CUDA_ERROR_NOT_SUPPORTED);
    expect("cuTexRefSetFlags(no texture reference)", cuTexRefSetFlags(tex, 0), CUDA_ERROR_INVALID_HANDLE);
    CUipcMemHandle ipc = {};
    expect("cuIpcGetMemHandle", cuIpcGetMemHandle(&ipc, 0), CUDA_ERROR_NOT_SUPPORTED);
    CUgraphicsResource resource = nullptr;
    expect("cuGraphicsMapResources(no resource)", cuGraphicsMapResources(1, &resource, 0), CUDA_ERROR_INVALID_HANDLE);
    unsigned count = 0;
    size_t bytes = 0;
    expect("vgpuFuncGetParamLayout", vgpuFuncGetParamLayout(add, &count, nullptr, nullptr, &bytes), CUDA_SUCCESS);
    expect_true("vector_add: 4 parameters, 28 bytes", count == 4 && bytes == 28);
    const unsigned n = 1000;
    auto* h = static_cast<float*>(pinned_alloc(3 * n * sizeof(float)));
    for (unsigned i = 0; i < n; ++i)
        h[i] = static_cast<float>(i), h[n + i] = 0.5f;
    CUdeviceptr da = device_copy_of(h, n * 4), db = device_copy_of(h + n, n * 4), dc = 0;
    CU_CHECK(cuMemAlloc(&dc, n * 4));
    unsigned nn = n;
    void* params[] = {&da, &db, &dc, &nn};
    CUstream st = 0;
    CUevent e0 = 0, e1 = 0;
    CU_CHECK(cuStreamCreate(&st, 0));
    expect("cuEventCreate", cuEventCreate(&e0, CU_EVENT_DEFAULT), CUDA_SUCCESS);
    expect("cuEventCreate", cuEventCreate(&e1, CU_EVENT_DEFAULT), CUDA_SUCCESS);
    expect("cuEventRecord", cuEventRecord(e0, st), CUDA_SUCCESS);
    expect("cuLaunchKernel", cuLaunchKernel(add, (n + 255) / 256, 1, 1, 256, 1, 1, 0, st, params, nullptr),
           CUDA_SUCCESS);
    expect("cuEventRecord", cuEventRecord(e1, st), CUDA_SUCCESS);
    CUstream waiter = 0;
    CU_CHECK(cuStreamCreate(&waiter, 0));
    expect("cuStreamWaitEvent", cuStreamWaitEvent(waiter, e1, 0), CUDA_SUCCESS);
    expect("cuStreamWaitEvent(flags)", cuStreamWaitEvent(waiter, e1, 7), CUDA_SUCCESS); // queued: reported later
    expect("... the bad flags at cuStreamSynchronize", cuStreamSynchronize(waiter), CUDA_ERROR_INVALID_VALUE);
    expect("cuEventSynchronize", cuEventSynchronize(e1), CUDA_SUCCESS);
    expect("cuEventQuery", cuEventQuery(e1), CUDA_SUCCESS);
    expect("cuStreamQuery", cuStreamQuery(st), CUDA_SUCCESS);
    float ms = -1;
    expect("cuEventElapsedTime", cuEventElapsedTime(&ms, e0, e1), CUDA_SUCCESS);
    expect_true("elapsed >= 0", ms >= 0);
    expect("cuMemcpyDtoH", cuMemcpyDtoH(h + 2 * n, dc, n * 4), CUDA_SUCCESS);
    bool sums = true;
    for (unsigned i = 0; i < n; ++i)
        sums &= h[2 * n + i] == static_cast<float>(i) + 0.5f;
    expect_true("vector_add's sums", sums);
    // The same sums through the launch calls before cuLaunchKernel.
    CU_CHECK(cuMemsetD32(dc, 0, n));
    expect("cuFuncSetBlockShape", cuFuncSetBlockShape(add, 256, 1, 1), CUDA_SUCCESS);
    expect("cuFuncSetSharedSize", cuFuncSetSharedSize(add, 0), CUDA_SUCCESS);
    expect("cuParamSetv(a)", cuParamSetv(add, 0, &da, sizeof da), CUDA_SUCCESS);
    expect("cuParamSetv(b)", cuParamSetv(add, 8, &db, sizeof db), CUDA_SUCCESS);
    expect("cuParamSetv(c)", cuParamSetv(add, 16, &dc, sizeof dc), CUDA_SUCCESS);
    expect("cuParamSeti(n)", cuParamSeti(add, 24, nn), CUDA_SUCCESS);
    expect("cuParamSetSize", cuParamSetSize(add, 28), CUDA_SUCCESS);
    expect("cuParamSeti(past the limit)", cuParamSeti(add, 4094, 1), CUDA_ERROR_INVALID_VALUE);
    expect("cuLaunchGrid", cuLaunchGrid(add, static_cast<int>((n + 255) / 256), 1), CUDA_SUCCESS);
    CU_CHECK(cuMemcpyDtoH(h + 2 * n, dc, n * 4));
    sums = true;
    for (unsigned i = 0; i < n; ++i)
        sums &= h[2 * n + i] == static_cast<float>(i) + 0.5f;
    expect_true("vector_add's sums through cuLaunchGrid", sums);
    // Function attributes: more dynamic shared memory than 48 KiB once asked for.
    int attr = 0;
    expect("cuFuncGetAttribute(max threads)", cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, add),
           CUDA_SUCCESS);
    expect_true("some threads per block", attr > 0 && attr <= 1024);
    expect("cuFuncGetAttribute(unknown function)", cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_NUM_REGS, bogus(add)),
           CUDA_ERROR_INVALID_HANDLE);
    int optin = 0;
    expect("cuDeviceGetAttribute(shared opt-in)",
           cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0), CUDA_SUCCESS);
    expect_true("an opt-in above 64 KiB", optin > (64 << 10));
    int before = -1;
    expect("cuFuncGetAttribute(dynamic shared, before setting it)",
           cuFuncGetAttribute(&before, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, add), CUDA_SUCCESS);
    expect_true("below 64 KiB", before >= 0 && before < (64 << 10));
    expect("cuFuncSetAttribute(64 KiB dynamic shared)",
           cuFuncSetAttribute(add, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 << 10), CUDA_SUCCESS);
    expect("cuFuncGetAttribute(dynamic shared)",
           cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, add), CUDA_SUCCESS);
    expect_true("64 KiB", attr == 64 << 10);
    expect("cuLaunchKernel(64 KiB shared, allowed now)",
           cuLaunchKernel(add, 1, 1, 1, 32, 1, 1, 64 << 10, st, params, nullptr), CUDA_SUCCESS);
    expect("cuFuncSetAttribute(past the opt-in)",
           cuFuncSetAttribute(add, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin + 1), CUDA_ERROR_INVALID_VALUE);
    expect("cuFuncSetAttribute(a read-only attribute)", cuFuncSetAttribute(add, CU_FUNC_ATTRIBUTE_NUM_REGS, 8),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuFuncSetAttribute(48 KiB again)",
           cuFuncSetAttribute(add, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 48 << 10), CUDA_SUCCESS);
    expect("cuCtxSynchronize", cuCtxSynchronize(), CUDA_SUCCESS);
    // Launches the driver refuses, at the call.
    expect("cuLaunchKernel(grid 0)", cuLaunchKernel(add, 0, 1, 1, 256, 1, 1, 0, st, params, nullptr),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuLaunchKernel(block 2048)", cuLaunchKernel(add, 1, 1, 1, 2048, 1, 1, 0, st, params, nullptr),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuLaunchKernel(block 32x32x2)", cuLaunchKernel(add, 1, 1, 1, 32, 32, 2, 0, st, params, nullptr),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuLaunchKernel(grid y 65536)", cuLaunchKernel(add, 1, 65536, 1, 1, 1, 1, 0, st, params, nullptr),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuLaunchKernel(64 KiB shared)", cuLaunchKernel(add, 1, 1, 1, 1, 1, 1, 64 << 10, st, params, nullptr),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuCtxSynchronize after refused launches", cuCtxSynchronize(), CUDA_SUCCESS);
    expect("cuLaunchKernel(no parameters)", cuLaunchKernel(add, 1, 1, 1, 1, 1, 1, 0, st, nullptr, nullptr),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuLaunchKernel(unknown function)", cuLaunchKernel(bogus(add), 1, 1, 1, 1, 1, 1, 0, st, params, nullptr),
           CUDA_ERROR_INVALID_HANDLE);
    expect("cuEventDestroy", cuEventDestroy(e0), CUDA_SUCCESS);
    expect("cuEventDestroy again", cuEventDestroy(e0), CUDA_ERROR_INVALID_HANDLE);
    expect("cuEventQuery(destroyed)", cuEventQuery(e0), CUDA_ERROR_INVALID_HANDLE);
    expect("cuEventDestroy", cuEventDestroy(e1), CUDA_SUCCESS);
    expect("cuStreamDestroy", cuStreamDestroy(waiter), CUDA_SUCCESS);
    expect("cuStreamDestroy", cuStreamDestroy(st), CUDA_SUCCESS);
    expect("cuStreamDestroy(default stream)", cuStreamDestroy(0), CUDA_ERROR_INVALID_HANDLE);
    expect("cuStreamDestroy(CU_STREAM_LEGACY)", cuStreamDestroy(CU_STREAM_LEGACY), CUDA_ERROR_INVALID_HANDLE);
    // The special streams work wherever a stream goes.
    expect("cuMemsetD8Async(CU_STREAM_PER_THREAD)", cuMemsetD8Async(dc, 0, 16, CU_STREAM_PER_THREAD), CUDA_SUCCESS);
    expect("cuLaunchKernel(CU_STREAM_LEGACY)",
           cuLaunchKernel(add, (n + 255) / 256, 1, 1, 256, 1, 1, 0, CU_STREAM_LEGACY, params, nullptr), CUDA_SUCCESS);
    expect("cuStreamSynchronize(CU_STREAM_PER_THREAD)", cuStreamSynchronize(CU_STREAM_PER_THREAD), CUDA_SUCCESS);
    expect("cuStreamQuery(CU_STREAM_LEGACY)", cuStreamQuery(CU_STREAM_LEGACY), CUDA_SUCCESS);
    registered_pageable_calls(add);
    occupancy_and_limit_calls(add, params);
    stream_ordered_calls();
    made_pools();
    cross_context_event_wait();
    array_and_texture_calls();
    entry_point_calls();
    older_form_calls();
    graph_calls(add);
    graph_shape_and_stream_attribute_calls(add);
    graph_node_calls(add);
    graph_memory_calls(add);
    graph_conditional_calls(add);
    vmm_and_managed_calls(add);
    library_support_calls(add);
    // Cooperative launches and cuLaunchKernelEx.
    expect("cuLaunchCooperativeKernel", cuLaunchCooperativeKernel(add, 1, 1, 1, 256, 1, 1, 0, 0, params), CUDA_SUCCESS);
    CUlaunchAttribute attrs[2] = {};
    attrs[0].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attrs[0].value.cooperative = 1;
    attrs[1].id = CU_LAUNCH_ATTRIBUTE_IGNORE;
    CUlaunchConfig config = {(n + 255) / 256, 1, 1, 256, 1, 1, 0, 0, attrs, 2};
    expect("cuLaunchKernelEx(cooperative)", cuLaunchKernelEx(&config, add, params, nullptr), CUDA_SUCCESS);
    config.numAttrs = 0;
    expect("cuLaunchKernelEx", cuLaunchKernelEx(&config, add, params, nullptr), CUDA_SUCCESS);
    // Thread-block clusters: a cluster of two over an even grid runs; one of
    // three that does not tile the grid, or of zero, is refused.
    const unsigned grid = config.gridDimX;
    config.gridDimX = (grid + 5) / 6 * 6; // past n: the kernel checks its bound
    attrs[0] = CUlaunchAttribute{};
    attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[0].value.clusterDim.x = 2, attrs[0].value.clusterDim.y = 1, attrs[0].value.clusterDim.z = 1;
    config.numAttrs = 1;
    expect("cuLaunchKernelEx(cluster of 2)", cuLaunchKernelEx(&config, add, params, nullptr), CUDA_SUCCESS);
    config.gridDimX += 2; // no longer a multiple of three
    attrs[0].value.clusterDim.x = 3;
    expect("cuLaunchKernelEx(cluster of 3 not tiling the grid)", cuLaunchKernelEx(&config, add, params, nullptr),
           CUDA_ERROR_INVALID_CLUSTER_SIZE);
    attrs[0].value.clusterDim.x = 0;
    expect("cuLaunchKernelEx(cluster of 0)", cuLaunchKernelEx(&config, add, params, nullptr),
           CUDA_ERROR_INVALID_CLUSTER_SIZE);
    config.gridDimX = grid;
    config.blockDimX = 0;
    config.numAttrs = 0;
    expect("cuLaunchKernelEx(block 0)", cuLaunchKernelEx(&config, add, params, nullptr), CUDA_ERROR_INVALID_VALUE);
    expect("cuCtxSynchronize", cuCtxSynchronize(), CUDA_SUCCESS);
    // __device__ variables: the host backend's C++ kernels have none.
    CUdeviceptr global = 0;
    size_t global_bytes = 0;
    VgpuGuestInfo vi;
    CU_CHECK(vgpuGetInfo(&vi));
    if (vi.backend == VGPU_BACKEND_HOST) {
        expect("cuModuleGetGlobal (host backend: none)", cuModuleGetGlobal(&global, &global_bytes, mod, "kvmgpu_scale"),
               CUDA_ERROR_NOT_FOUND);
    } else {
        expect("cuModuleGetGlobal", cuModuleGetGlobal(&global, &global_bytes, mod, "kvmgpu_scale"), CUDA_SUCCESS);
        expect_true("an int", global_bytes == sizeof(int));
        int scale = 0;
        expect("cuMemcpyDtoH(the global)", cuMemcpyDtoH(&scale, global, sizeof scale), CUDA_SUCCESS);
        expect_true("its initial value, 3", scale == 3);
        scale = 5;
        expect("cuMemcpyHtoD(the global)", cuMemcpyHtoD(global, &scale, sizeof scale), CUDA_SUCCESS);
        CUfunction scale_fn = 0;
        expect("cuModuleGetFunction(scale_by_global)", cuModuleGetFunction(&scale_fn, mod, "scale_by_global"),
               CUDA_SUCCESS);
        int* vals = static_cast<int*>(pinned_alloc(64 * sizeof(int)));
        for (int i = 0; i < 64; ++i)
            vals[i] = i;
        CUdeviceptr dv = device_copy_of(vals, 64 * sizeof(int));
        unsigned count64 = 64;
        void* sp[] = {&dv, &count64};
        expect("cuLaunchKernel(scale_by_global)", cuLaunchKernel(scale_fn, 1, 1, 1, 64, 1, 1, 0, 0, sp, nullptr),
               CUDA_SUCCESS);
        expect("cuMemcpyDtoH", cuMemcpyDtoH(vals, dv, 64 * sizeof(int)), CUDA_SUCCESS);
        expect_true("scaled by the global's new value", vals[0] == 0 && vals[1] == 5 && vals[63] == 315);
        CU_CHECK(cuMemFree(dv));
    }
    expect("cuModuleGetGlobal(unknown)", cuModuleGetGlobal(&global, &global_bytes, mod, "no_such_variable"),
           CUDA_ERROR_NOT_FOUND);
    expect("cuModuleUnload", cuModuleUnload(mod), CUDA_SUCCESS);
    expect("cuModuleGetGlobal(unloaded module)", cuModuleGetGlobal(&global, &global_bytes, mod, "kvmgpu_scale"),
           CUDA_ERROR_INVALID_HANDLE);
    expect("cuModuleGetFunction(unloaded module)", cuModuleGetFunction(&none, mod, "vector_add"),
           CUDA_ERROR_INVALID_HANDLE);
    expect("cuLaunchKernel(function of an unloaded module)",
           cuLaunchKernel(add, 1, 1, 1, 1, 1, 1, 0, 0, params, nullptr), CUDA_ERROR_INVALID_HANDLE);
    expect("cuCtxSynchronize", cuCtxSynchronize(), CUDA_SUCCESS);
}

} // namespace

int guest_main(const kvmgpu_boot_info*)
{
    CU_CHECK(cuInit(0));
    CUcontext main_context = nullptr;
    context_calls(&main_context);
    print_device_banner("conformance");
    device_calls();
    memory_calls();
    module_and_launch_calls();
    printf("conformance: %u checks, %u failed: %s\n", g_checks, g_failed, g_failed ? "FAIL" : "PASS");
    return g_failed ? kExitCheckFailed : kExitPass;
}
