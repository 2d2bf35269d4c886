// Turns --guest NAME into an image path: an existing file as given, else
// NAME.elf in the guest directory beside the binary or the build's.
#pragma once

#include <string>

namespace kvmgpu {

// Throws std::runtime_error listing where it looked.
std::string locate_guest(const std::string& name_or_path);

} // namespace kvmgpu
