// `run --vms N --share DIR`: which directory each VM's guest gets. A
// writable share gives VM i its own subdirectory DIR/vm<i> (made when
// missing), so no guest reads or overwrites another's files; a read-only
// share (DIR:ro) is the same root for every VM. One VM gets DIR itself.
#pragma once

#include <string>

namespace kvmgpu::cli {

// Throws std::runtime_error (naming the path and errno) when DIR/vm<i>
// cannot be made or is not a directory.
std::string share_dir_for_vm(const std::string& dir, bool read_only, unsigned vm, unsigned vms);

} // namespace kvmgpu::cli
