// Small helpers shared by the CUDA guest programs: start-up and banner, host
// buffers (pinned or pageable, chosen on the cmdline), random inputs
// (integers, or floats for the float kernels), timings and rates as text.
#pragma once

#include "guest-stub/cuda/cuda_check.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/kernels/kernels_image.h"
#include "guest-stub/runtime/runtime.h"

namespace guest {

// Prints device name, memory, backend and doorbell mode; exits on error.
inline void print_device_banner(const char* program)
{
    CUdevice dev;
    CU_CHECK(cuCtxGetDevice(&dev));
    char name[128];
    CU_CHECK(cuDeviceGetName(name, sizeof name, dev));
    size_t total = 0;
    CU_CHECK(cuDeviceTotalMem(&total, dev));
    VgpuGuestInfo vi;
    CU_CHECK(vgpuGetInfo(&vi));
    static const char* const kDoorbell[] = {"trap", "ioeventfd", "poll"};
    printf("%s: device \"%s\", %lu MiB, backend %s, doorbell %s, ring %u entries%s\n", program, name,
           (uint64_t)total >> 20, vgpuBackendName(vi.backend),
           vi.doorbell_mode < 3 ? kDoorbell[vi.doorbell_mode] : "?", vi.ring_entries,
           vi.deferred ? ", deferred submission" : "");
}

// cuInit, a context of its own on device 0 (current from here on), and the
// banner: how every program starts. Exits on error.
inline void open_device(const char* program)
{
    CU_CHECK(cuInit(0));
    CUdevice dev;
    CU_CHECK(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CU_CHECK(cuCtxCreate(&ctx, nullptr, 0, dev));
    print_device_banner(program);
}

// Host buffer of bytes: cmdline host_mem=pinned (default) or pageable.
inline void* host_alloc(size_t bytes, bool pageable)
{
    return pageable ? pageable_alloc(bytes) : pinned_alloc(bytes);
}

inline bool want_pageable_host_memory()
{
    char buf[16];
    const char* mode = cmdline().get_str("host_mem", buf, sizeof buf, "pinned");
    if (strcmp(mode, "pinned") == 0)
        return false;
    if (strcmp(mode, "pageable") == 0)
        return true;
    printf("host_mem must be pinned or pageable, not \"%s\"\n", mode);
    exit(kExitBadCmdline);
}

// Uniform integers in [lo, hi]. The same seed gives the same sequence, so a
// program can regenerate its inputs for the check instead of keeping copies.
class RandomInts {
public:
    RandomInts(uint64_t seed, int32_t lo, int32_t hi)
        : rng_(seed), lo_(lo), span_((uint64_t)((int64_t)hi - lo + 1))
    {
    }
    int32_t next() { return (int32_t)((int64_t)lo_ + (int64_t)rng_.below(span_)); }

private:
    XorShift64 rng_;
    int32_t lo_;
    uint64_t span_;
};

// Floats uniform in [-1, 1), each a multiple of 2^-23 (so any of them is an
// exact binary32), from a seed: a program regenerates its inputs to check.
class RandomFloats {
public:
    explicit RandomFloats(uint64_t seed) : rng_(seed) {}
    float next() { return (float)((int32_t)(rng_.next() >> 40) - (1 << 23)) * (1.0f / (1 << 23)); }

private:
    XorShift64 rng_;
};

// Time and rate texts for printf's %s: milliseconds with 3 decimals from ns;
// a count per ns = billions per second (GB/s from bytes, GFLOP/s from flops).
inline DecimalText ms_text(uint64_t ns) { return decimal_ratio(ns, 1000000, 3); }
inline DecimalText giga_per_s_text(uint64_t count, uint64_t ns) { return decimal_ratio(count, ns, 2); }

// Loads the embedded kernels fatbin and looks up one kernel; exits on error.
inline CUfunction load_kernel(const char* program, const char* name, CUmodule* module)
{
    if (kvmgpu_kernels_is_placeholder)
        printf("%s: kernel image is a placeholder (built without nvcc)\n", program);
    CU_CHECK(cuModuleLoadData(module, kvmgpu_kernels_image));
    CUfunction f;
    CU_CHECK(cuModuleGetFunction(&f, *module, name));
    return f;
}

// Device buffer holding a copy of host[0, bytes); exits on error.
inline CUdeviceptr device_copy_of(const void* host, size_t bytes)
{
    CUdeviceptr d;
    CU_CHECK(cuMemAlloc(&d, bytes));
    CU_CHECK(cuMemcpyHtoD(d, host, bytes));
    return d;
}

} // namespace guest
