// run's vGPU line: what the guest's commands were and which it waited for.
#pragma once

#include <cstddef>
#include <string>

#include "kvmgpu/kvmgpu.hpp"

namespace kvmgpu::cli {

// "N commands (W waited for: NAME n, ...), E errors": the commands the guest
// waited on, the `top` most frequent by name (the round trips it paid).
std::string describe_commands(const VgpuCounters& n, size_t top = 6);

} // namespace kvmgpu::cli
