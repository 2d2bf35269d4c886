#include "kvmtool-gpu/util/process_limits.h"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <algorithm>

namespace kvmgpu {

void ignore_file_size_signal() { ::signal(SIGXFSZ, SIG_IGN); }

void keep_memory_from_other_processes() { ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

void raise_open_file_limit() {
    rlimit r{};
    if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == r.rlim_max) return;
    r.rlim_cur = r.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &r); // a failure leaves the soft limit, which open_file_limit() reports
}

uint64_t open_file_limit() {
    rlimit r{};
    if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return 0;
    return r.rlim_cur == RLIM_INFINITY ? UINT64_MAX : r.rlim_cur;
}

uint64_t open_descriptor_count() {
    DIR* d = ::opendir("/proc/self/fd");
    if (!d) return 0;
    uint64_t n = 0;
    while (const dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') ++n;
    ::closedir(d);
    return n > 0 ? n - 1 : 0; // not counting opendir's own
}

uint64_t guest_descriptor_limit(uint64_t limit, uint64_t in_use, uint64_t vms, uint64_t max_threads, uint64_t most) {
    const uint64_t taken = in_use + kProcessDescriptorReserve;
    if (vms == 0 || limit <= taken) return 0;
    const uint64_t per_vm = (limit - taken) / vms;
    const uint64_t reserve = kVmDescriptorReserve + max_threads * kDescriptorsPerThread;
    return per_vm > reserve ? std::min(per_vm - reserve, most) : 0;
}

} // namespace kvmgpu
