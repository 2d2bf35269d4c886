#include "kvmtool-gpu/bench/bench_table.h"

namespace kvmgpu::bench {

namespace {

constexpr BenchEntry kBenches[] = {
    {"boot", "",
     "  bench boot  time VM creation to the guest's first instruction and exit\n",
     "", "boot_exit, --reps times (+1 cold)", "a table on stdout; --csv FILE"},
    {"bandwidth", "",
     "  bench bandwidth  host<->device copy bandwidth in guests against native, one run\n",
     "pageable, registered and pinned copies per size and direction (NativeCuda)",
     "bandwidth, one VM per host backing x guest page size",
     "DIR/bandwidth.{csv,json,md,png}, rewritten as results come in"},
    {"calls", "",
     "  bench calls  cost of a virtual CUDA call per doorbell, batching off/on, against native\n",
     "launches, copies, round trips, graphs, stream-ordered and managed memory (NativeCuda)",
     "calls, one VM per doorbell, batching off and on in each",
     "DIR/calls.{csv,json,md,png}, rewritten as results come in"},
    {"libraries", "cublas",
     "  bench libraries  cuBLAS through the vGPU: sgemm and fp16/bf16 GemmEx TFLOP/s, small\n"
     "               batched gemms per second, against native (also: bench cublas)\n",
     "cublasBench's native twin (NVIDIA's runtime and libcublas)", "cublasBench, one VM",
     "the table on stdout; DIR/libraries.{csv,json,md}"},
    {"multigpu", "",
     "  bench multigpu  A*B+C*D on four devices: peer copies vs staging through the host, against native\n",
     "the same work on the same GPUs, a context per device", "multigpu, one VM per order",
     "DIR/multigpu.{csv,json,md,png}"},
    {"p2p", "",
     "  bench p2p   copies between a VM's devices (p2pBandwidthLatencyTest's matrix), against native\n",
     "the same copies on the same GPUs, a context per device", "p2p, one VM",
     "the matrices on stdout; DIR/p2p.{csv,json,md}"},
    {"share", "",
     "  bench share  N VMs on one GPU at once: throughput, fairness, latency, against N native processes\n",
     "N processes at once, each with its own context, over one common window",
     "share, N VMs at once per N (one may misbehave: --intruder)", "DIR/share.{csv,json,md,png}"},
    {"tlb", "",
     "  bench tlb   4 KiB vs 2 MiB pages: pointer chase natively and in guests, VMM translation\n",
     "pointer chase per backing page size, in this process (no CUDA)",
     "pointer_chase per guest pages x host backing", "markdown on stdout; --csv, --json, --plot"},
};

} // namespace

std::span<const BenchEntry> bench_table() { return kBenches; }

const BenchEntry* find_bench(std::string_view name) {
    for (const BenchEntry& b : kBenches)
        if (b.name == name || (!b.alias.empty() && b.alias == name)) return &b;
    return nullptr;
}

std::string bench_names_text() {
    std::string s;
    const size_t n = std::size(kBenches);
    for (size_t i = 0; i < n; ++i) {
        if (i > 0) s += i + 1 == n ? " or " : ", ";
        s += kBenches[i].name;
    }
    return s;
}

} // namespace kvmgpu::bench
