// The native baselines of the benchmarks, measured with the same CUDA
// Driver API entry points the vGPU's CUDA backend uses (CudaDriverApi:
// dlopen + cuGetProcAddress, one loader), in an own context, timed the way
// the guests time themselves: CUDA events on the stream around the work,
// plus the host's wall clock. The benches run them in a child process
// (native_child.h), first in the same run. Without a CUDA build or a
// GPU, open() says why and returns nullptr.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kvmtool-gpu/bench/bench_report.h"

namespace kvmgpu::bench {

struct NativeTiming {
    uint64_t event_ns = 0; // between the two events on the stream
    uint64_t wall_ns = 0;  // host steady clock around submission + synchronization
    std::string status = "ok"; // else "error:<CUresult name>"
    bool ok() const { return status == "ok"; }
};

class NativeCuda {
public:
    static std::unique_ptr<NativeCuda> open(std::string* why);
    ~NativeCuda();
    NativeCuda(const NativeCuda&) = delete;
    NativeCuda& operator=(const NativeCuda&) = delete;

    std::string gpu_name() const;
    int driver_version() const; // e.g. 13000

    // Copies: host buffers of up to max_bytes, pageable (malloc'd, touched;
    // as `registered` after cuMemHostRegister) and pinned (cuMemHostAlloc),
    // and one device buffer.
    bool prepare_copies(uint64_t max_bytes, std::string* why);
    // What cuMemHostRegister took on the pageable buffer (registered once
    // in prepare_copies, then unregistered), per GiB; 0 if it failed.
    double register_ms_per_gib() const;
    // One warm-up copy, then `trials` timings of `reps` copies between the
    // events (as the bandwidth guest does: all trials equally warm). A
    // failed warm-up gives every trial its status.
    // kind: "pinned", "pageable" or "registered" (the pageable buffer,
    // registered for these copies and unregistered after them).
    std::vector<NativeTiming> copy(bool htod, const std::string& kind, uint64_t bytes, uint64_t reps, unsigned trials);

    // Calls: the empty kernel (the same empty.cu the guests launch when nvcc
    // was found at build time, else equivalent PTX), 8-byte copies from
    // pinned memory.
    bool prepare_calls(std::string* why);
    // n asynchronous empty launches (with_copy: each after an async copy of
    // copy_bytes), events around them, then one synchronize.
    NativeTiming launches(uint64_t n, bool with_copy, uint64_t copy_bytes);
    // iters round trips: launch + stream synchronize.
    NativeTiming sync_launches(uint64_t iters);
    // iters round trips: copy of `bytes` + stream synchronize.
    NativeTiming sync_copies(uint64_t iters, bool htod, uint64_t bytes);
    // wakes round trips (event, launch, event, synchronize), each after
    // sleeping pause_ms; the times of the round trips alone, summed.
    NativeTiming wake_launches(uint64_t wakes, uint64_t pause_ms);
    // n launches of one graph: `chain` empty kernels captured from the
    // stream once (the first call), then one synchronize.
    NativeTiming graph_launches(uint64_t n, unsigned chain);
    // iters x (cuMemAllocAsync of `bytes`, cuMemFreeAsync, cuStreamSynchronize).
    NativeTiming alloc_async_round_trips(uint64_t iters, uint64_t bytes);
    // iters x (launch + synchronize) while the context holds `bytes` of
    // managed memory, written by the CPU first.
    NativeTiming managed_launches(uint64_t iters, uint64_t bytes);

private:
    struct Impl;
    explicit NativeCuda(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// The native baseline of `bench`, opened and prepared; nullptr when
// host_forced (--vgpu host: the guests run on the host backend, so a GPU
// baseline would compare unlike things), or CUDA or prepare() fails. meta
// gets "native_baseline" (what it is, or why there is none), "gpu" and
// "driver"; a line on stdout says the same.
std::unique_ptr<NativeCuda> open_native_baseline(const std::string& bench, bool host_forced,
                                                 const std::string& host_forced_reason,
                                                 const std::function<bool(NativeCuda&, std::string*)>& prepare,
                                                 const std::string& description, BenchMeta* meta);

} // namespace kvmgpu::bench
