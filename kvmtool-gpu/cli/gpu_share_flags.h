// --gpu-share and the MPS flags, shared by every command that boots guests
// with a vGPU (merged into the vGPU flags: vgpu_flags.h).
#pragma once

#include <set>
#include <string>

#include "kvmtool-gpu/util/arg_parser.h"
#include "kvmtool-gpu/vmm/gpu_share.h"

namespace kvmgpu::cli {

const std::set<std::string>& gpu_share_option_names();
const char* gpu_share_options_help();
// Throws UsageError for a bad or out-of-range value, or an MPS flag
// without --gpu-share mps. Starts nothing.
GpuShareOptions parse_gpu_share_flags(const ArgParser& p);

} // namespace kvmgpu::cli
