#include "kvmtool-gpu/cli/share_flag.h"

#include "kvmtool-gpu/util/arg_parser.h"

namespace kvmgpu::cli {

linux_abi::ShareSpec parse_share_flag(const std::string& value) {
    linux_abi::ShareSpec s;
    std::string dir = value;
    if (dir.size() > 3 && dir.ends_with(":ro")) {
        s.read_only = true;
        dir.resize(dir.size() - 3);
    } else if (dir.size() > 3 && dir.ends_with(":rw")) {
        dir.resize(dir.size() - 3);
    }
    const auto colon = dir.rfind(":/");
    if (colon != std::string::npos && colon > 0) {
        s.guest_path = dir.substr(colon + 1);
        dir.resize(colon);
    }
    if (dir.empty()) throw UsageError("--share needs a directory");
    s.dir = dir;
    return s;
}

} // namespace kvmgpu::cli
