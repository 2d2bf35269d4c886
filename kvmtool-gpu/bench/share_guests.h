// Several `share` guests on one GPU at once, each a VM with its own vGPU
// (GPU worker, context, quotas, doorbell), measured over one common window:
// once every guest has said SHARE-READY (set-up done, one unit of work
// run), the VMM waits `settle_s`, reads each vGPU's counters, waits
// `window_s` and reads them again. A guest's rate is what its counters grew
// by in the window (bytes copied, or kernels launched) per second, so every
// rate covers the same wall-clock span with every guest working. A guest
// that stops working before the window ends, fails its checks or never
// gets ready fails the measurement (the row's status says why).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kvmtool-gpu/bench/bench_line.h"
#include "kvmtool-gpu/kvm/kvm_system.h"
#include "kvmtool-gpu/vmm/run_result.h"
#include "kvmtool-gpu/vmm/vgpu_attach.h"
#include "kvmtool-gpu/vmm/virtual_machine.h"

namespace kvmgpu::bench {

struct ShareWindow {
    double settle_s = 0.5;
    double window_s = 2.0;
    double ready_timeout_s = 120; // for every guest to get ready
};

// The window itself, once every member is ready: waits settle_s, takes a
// sample, waits window_s, takes another; both, and the seconds between.
template <class Sample>
struct WindowReading {
    Sample before, after;
    double seconds = 0;
};
template <class Take>
auto read_window(const ShareWindow& w, Take take) -> WindowReading<decltype(take())> {
    std::this_thread::sleep_for(std::chrono::duration<double>(w.settle_s));
    WindowReading<decltype(take())> r;
    r.before = take();
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(w.window_s));
    r.after = take();
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

// What one guest did.
struct SharedGuest {
    RunResult result;
    std::optional<BenchLine> report;  // its SHARE: line
    double bytes_per_s = 0, launches_per_s = 0; // in the window
    std::string status = "ok";        // else why its figures are not to be used
    std::vector<std::string> tail;    // its last console lines
};

// A SHARE-READY line's word to set when the window ends (" stop=0xGPA");
// nullopt for another line, or one that names none (such a member works to
// its time bound).
std::optional<uint64_t> share_ready_stop_word(std::string_view line);

// Boots one guest per entry of `cmdlines` from `base` (seeds base.seed + i)
// and runs them at once. window: nullopt runs them to the end without
// measuring (the isolation tests judge each guest's own result). Throws what
// VirtualMachine and attach_vgpu throw for set-up failures.
std::vector<SharedGuest> run_shared_guests(const KvmSystem& kvm, const VmOptions& base, const VgpuConfig& vgpu,
                                           const std::vector<std::string>& cmdlines,
                                           const std::optional<ShareWindow>& window);

} // namespace kvmgpu::bench
