#include "kvmtool-gpu/vmm/guest_locator.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace kvmgpu {

namespace fs = std::filesystem;

std::string locate_guest(const std::string& name_or_path) {
    if (fs::is_regular_file(name_or_path)) return name_or_path;
    std::vector<fs::path> dirs;
    if (const char* env = std::getenv("KVMGPU_GUEST_DIR")) dirs.emplace_back(env);
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        dirs.push_back(exe.parent_path() / "guests");
        dirs.push_back(exe.parent_path().parent_path() / "guests");
    }
#ifdef KVMGPU_DEFAULT_GUEST_DIR
    dirs.emplace_back(KVMGPU_DEFAULT_GUEST_DIR);
#endif
    std::string looked;
    std::vector<fs::path> seen;
    for (const auto& d : dirs) {
        if (std::find(seen.begin(), seen.end(), d.lexically_normal()) != seen.end()) continue;
        seen.push_back(d.lexically_normal());
        const fs::path p = d / (name_or_path + ".elf");
        if (fs::is_regular_file(p)) return p.string();
        looked += (looked.empty() ? "" : ", ") + p.string();
    }
    throw std::runtime_error("guest '" + name_or_path + "' not found (looked for a file, then " + looked + ")");
}

} // namespace kvmgpu
