#include "kvmtool-gpu/util/syscall_names.h"

namespace kvmgpu {

namespace {
struct NamedCall {
    uint64_t nr;
    const char* name;
};
// Generated at configure time from the build host's <asm/unistd_64.h>
// (empty when it was absent: numbers are printed).
constexpr NamedCall kNames[] = {
#include "kvmgpu_syscall_names.inc"
    {~uint64_t{0}, nullptr},
};
} // namespace

const char* known_syscall_name(uint64_t nr) {
    for (const auto& n : kNames)
        if (n.nr == nr) return n.name;
    return nullptr;
}

std::string syscall_name(uint64_t nr) {
    const char* n = known_syscall_name(nr);
    return n ? n : "syscall " + std::to_string(nr);
}

} // namespace kvmgpu
