#include "kvmtool-gpu/util/close_descriptors.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

namespace kvmgpu {

void close_descriptors_but(std::span<const int> keep) {
    std::vector<int> sorted(keep.begin(), keep.end());
    std::sort(sorted.begin(), sorted.end());
    unsigned next = 3; // the lowest descriptor not yet closed or kept
    for (const int fd : sorted) {
        if (fd < 3 || static_cast<unsigned>(fd) < next) continue; // a standard one, or kept twice
        if (static_cast<unsigned>(fd) > next) close_range(next, static_cast<unsigned>(fd) - 1, 0);
        next = static_cast<unsigned>(fd) + 1;
    }
    close_range(next, ~0u, 0);
}

} // namespace kvmgpu
