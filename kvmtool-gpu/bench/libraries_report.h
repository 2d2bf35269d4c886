// bench libraries' results: cublasBench's BLAS lines (guest-stub/samples/
// cublasBench.cu) from the native twin and the guest (forwarded cuBLAS, and
// with --nvidia-guest the twin itself as a guest: NVIDIA's cuBLAS), their rates (TFLOP/s
// by the GPU's events for the gemms, calls per second by the program's own
// clock for the small batches), the guest's share of native's, and the
// targets: 99% of native from n = 4096 for the gemms, 90% for the batches.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <tuple>

#include "kvmtool-gpu/bench/bench_line.h"
#include "kvmtool-gpu/bench/bench_report.h"

namespace kvmgpu::bench {

struct LibraryResult {
    std::string source; // "native", "guest" (forwarded cuBLAS) or kNvidiaGuestSource
    std::string metric; // sgemm, gemmex_fp16, gemmex_bf16, batched_strided, batched_pointers
    uint64_t n = 0, reps = 0;
    double flop = 0;
    uint64_t event_ns = 0, wall_ns = 0;
    std::string status; // "ok" or why not
    auto wire() { return std::tie(source, metric, n, reps, flop, event_ns, wall_ns, status); }

    bool ok() const { return status == "ok" && event_ns > 0 && wall_ns > 0; }
    bool is_call_rate() const { return metric.rfind("batched", 0) == 0; }
    // TFLOP/s (gemms) or calls per second (batches).
    double rate() const;
    const char* unit() const { return is_call_rate() ? "calls/s" : "TFLOP/s"; }
};

// The source of the rows of NVIDIA's own libcublas in the guest (the native
// twin run as a Linux-ABI guest over the guest libcuda.so.1).
inline constexpr const char* kNvidiaGuestSource = "guest_nvidia";

// nullopt for a line that is not a well-formed BLAS line.
std::optional<LibraryResult> library_result_from(const BenchLine& line, const std::string& source);

// The guest's rate over native's for the same metric and n; nullopt without both.
std::optional<double> library_ratio(const std::vector<LibraryResult>& all, const LibraryResult& guest);
// The share of native the guest must reach, nullopt where none is set (gemms below n = 4096).
std::optional<double> library_target(const LibraryResult& r);

std::string libraries_csv(const std::vector<LibraryResult>& all);
std::string libraries_json(const std::vector<LibraryResult>& all, const BenchMeta& meta);
std::string libraries_markdown(const std::vector<LibraryResult>& all, const BenchMeta& meta);

} // namespace kvmgpu::bench
