#include "kvmtool-gpu/api/process_setup.h"

#include <atomic>
#include <mutex>

#include "kvmgpu/kvmgpu.hpp"
#include "kvmtool-gpu/devices/vgpu/alias_budget.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_zygote.h"
#include "kvmtool-gpu/kvm/open_kvm.h"
#include "kvmtool-gpu/util/process_limits.h"

namespace kvmgpu {

namespace {
std::atomic<unsigned> vms_sharing{1};
} // namespace

void prepare_process() {
    ignore_file_size_signal();
    raise_open_file_limit();
    keep_memory_from_other_processes();
    // If it cannot start, the first GPU worker says why.
    try {
        vgpu::start_worker_zygote();
    } catch (const std::exception&) {
    }
}

void set_vms_in_process(unsigned vms) {
    const unsigned n = vms == 0 ? 1 : vms;
    vms_sharing.store(n);
    vgpu::AliasBudget::process().set_vms_sharing(n);
}

namespace api {

unsigned vms_in_process() { return vms_sharing.load(); }

std::shared_ptr<const KvmSystem> shared_kvm() {
    static std::mutex mu;
    static std::shared_ptr<const KvmSystem> kvm;
    std::lock_guard lock(mu);
    if (!kvm) kvm = std::make_shared<const KvmSystem>(open_kvm());
    return kvm;
}

} // namespace api

} // namespace kvmgpu
