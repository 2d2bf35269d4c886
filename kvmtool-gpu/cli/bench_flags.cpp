#include "kvmtool-gpu/cli/bench_flags.h"

namespace kvmgpu::cli {

void set_plan_common(const ArgParser& p, const std::vector<std::string>& args, const VgpuConfig& vgpu,
                     bench::BenchPlan* plan) {
    plan->args = args;
    plan->vgpu = vgpu;
    plan->native = !p.has("no-native");
    plan->out_dir = p.get_or("out", "bench-results");
    plan->plot_script = p.get_or("plot-script", "");
}

} // namespace kvmgpu::cli
