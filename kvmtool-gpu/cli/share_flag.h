// `--share DIR[:GUEST_PATH][:ro]`, one flag's value (run may take several,
// each mounted at its own guest path: vmm/linux/root_fs.h).
#pragma once

#include <string>

#include "kvmtool-gpu/vmm/linux/linux_process.h"

namespace kvmgpu::cli {

// ":ro" (or ":rw") at the end sets the mode; ":GUEST_PATH" before it is
// taken when it is absolute (a ':' in DIR itself is kept when no '/'
// follows it). Throws UsageError (arg_parser.h) for an empty DIR.
linux_abi::ShareSpec parse_share_flag(const std::string& value);

} // namespace kvmgpu::cli
