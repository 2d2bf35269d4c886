// The vGPU's command-line flags, shared by every command that boots a guest
// with one: --vgpu, --gpu-worker, --doorbell, and the per-VM limits.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kvmgpu/kvmgpu.hpp"
#include "kvmtool-gpu/util/arg_parser.h"
#include "kvmtool-gpu/vmm/vgpu_attach.h"

namespace kvmgpu::cli {

// Names of the valued options below, to merge into a command's ArgParser.
const std::set<std::string>& vgpu_option_names();
const char* vgpu_options_help();
// --gpus: at most this many devices, on ordinals below kMaxGpuOrdinal.
inline constexpr size_t kMaxGuestDevices = 16;
inline constexpr int kMaxGpuOrdinal = 64;
// "0,0,1" -> {0, 0, 1}. Throws UsageError.
std::vector<int> parse_gpu_list(const std::string& text);

// nullopt for --vgpu none. Throws UsageError for bad values. With
// --gpu-share mps it starts (or attaches to) the MPS control daemon, held by
// the spec's `sharing` until its last copy goes; kvmgpu::Error (one line)
// when MPS cannot be had and --mps-fallback is stop. device_mem_quota is
// unset (the API's default) unless --gpu-mem-quota is given.
std::optional<VgpuSpec> parse_vgpu_spec(const ArgParser& p);
// The same for the benches, which build VMs themselves: the spec as the
// VMM's VgpuConfig (api/vgpu_spec.h), each guest with VgpuOptions' own
// quota unless --gpu-mem-quota says.
std::optional<VgpuConfig> parse_vgpu_flags(const ArgParser& p);

} // namespace kvmgpu::cli
