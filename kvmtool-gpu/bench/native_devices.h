// The native side of the benches that give a VM several devices (bench
// multigpu, bench p2p): none with --no-native or --vgpu host (meta says
// why), else the measurement in a child process (native_child.h), with
// the GPU's name and the driver version in meta and the measurement's
// verdict as "native_baseline".
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kvmtool-gpu/bench/native_child.h"

namespace kvmgpu::bench {

// How long a native side of these benches may take.
inline constexpr double kNativeDevicesBoundS = 1800;

// True (meta says why) when there is no native side to run.
bool native_on_gpus_skipped(BenchMeta* meta, bool no_native, bool host_forced);
// In the child: the GPU's name and the driver version into meta, or why
// there is no driver.
std::string describe_native_gpu(int ordinal, BenchMeta* meta);
// In the child: "native_baseline" from the measurement's "" or why not.
void set_native_verdict(BenchMeta* meta, const std::string& why);

// measure() runs in the child, appends its rows and returns "" or why not
// everything was measured. Returns the rows.
template <class Row>
std::vector<Row> run_native_on_gpus(BenchMeta* meta, bool no_native, bool host_forced, int first_gpu,
                                    const std::function<std::string(std::vector<Row>*)>& measure) {
    if (native_on_gpus_skipped(meta, no_native, host_forced)) return {};
    return native_rows_in_child<Row>(meta, kNativeDevicesBoundS, [&](BenchMeta* m) {
        std::vector<Row> rows;
        std::string why = describe_native_gpu(first_gpu, m);
        if (why.empty()) why = measure(&rows);
        set_native_verdict(m, why);
        return rows;
    });
}

// "0,1,1,1"
std::string gpu_list_text(const std::vector<int>& gpus);

} // namespace kvmgpu::bench
