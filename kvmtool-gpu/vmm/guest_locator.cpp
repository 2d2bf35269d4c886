#include "kvmtool-gpu/vmm/guest_locator.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace kvmgpu {

namespace fs = std::filesystem;

std::vector<std::string> guest_dirs() {
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
    std::vector<std::string> out;
    for (const auto& d : dirs) {
        const std::string n = d.lexically_normal().string();
        if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
    return out;
}

std::string locate_guest(const std::string& name_or_path) {
    if (fs::is_regular_file(name_or_path)) return name_or_path;
    std::string looked;
    for (const auto& d : guest_dirs()) {
        const fs::path p = fs::path(d) / (name_or_path + ".elf");
        if (fs::is_regular_file(p)) return p.string();
        looked += (looked.empty() ? "" : ", ") + p.string();
    }
    throw std::runtime_error("guest '" + name_or_path + "' not found (looked for a file, then " + looked + ")");
}

std::optional<std::string> locate_guest_library(const std::string& file) {
    for (const auto& d : guest_dirs()) {
        const fs::path p = fs::path(d) / "lib" / file;
        std::error_code ec;
        if (fs::is_regular_file(p, ec)) return p.string();
    }
    return std::nullopt;
}

} // namespace kvmgpu
