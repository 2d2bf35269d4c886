#include "kvmtool-gpu/cli/vgpu_report.h"

namespace kvmgpu::cli {

std::string describe_commands(const VgpuCounters& n, size_t top) {
    std::string s = std::to_string(n.commands) + " commands";
    if (n.waited > 0) {
        s += " (" + std::to_string(n.waited) + " waited for:";
        for (size_t i = 0; i < n.waited_by_command.size() && i < top; ++i)
            s += (i ? ", " : " ") + n.waited_by_command[i].first + " " + std::to_string(n.waited_by_command[i].second);
        if (n.waited_by_command.size() > top) s += ", ...";
        s += ")";
    }
    return s + ", " + std::to_string(n.errors) + " errors";
}

} // namespace kvmgpu::cli
