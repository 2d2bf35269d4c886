// Turns --guest NAME into an image path: an existing file as given, else
// NAME.elf in the guest directory beside the binary or the build's. The
// same directories hold the guest libraries the VMM itself lends a guest
// (lib/libcuda.so.1): found from the VMM's own location, never the guest's.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kvmgpu {

// Throws std::runtime_error listing where it looked.
std::string locate_guest(const std::string& name_or_path);

// The guest directories in the order searched: $KVMGPU_GUEST_DIR, then
// guests/ beside the binary and one level up (/proc/self/exe), then the
// build's; duplicates dropped.
std::vector<std::string> guest_dirs();

// DIR/lib/FILE in the first guest directory that has it as a regular file;
// nullopt when none does.
std::optional<std::string> locate_guest_library(const std::string& file);

} // namespace kvmgpu
