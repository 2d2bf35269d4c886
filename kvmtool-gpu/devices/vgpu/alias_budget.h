// The memory mappings of one process that host aliases (host_alias.h) may
// take. A process may hold vm.max_map_count mappings in all; when the VMs
// of one process (inline engines, the host backend) alias guest buffers
// there, one VM must not take the mappings the others, the VMM and the
// CUDA driver need. So each VM's device model reserves its allowance when
// it starts and gives it back when it ends: what one VM does inside its
// allowance never reaches another's. A GPU worker process is one VM's alone.
#pragma once

#include <cstdint>
#include <mutex>

namespace kvmgpu::vgpu {

class AliasBudget {
public:
    // Mappings kept out of every allowance: the VMM's own, the CUDA
    // driver's and the libraries' growth after start-up.
    static constexpr uint64_t kHeadroom = 16384;

    // This process's: vm.max_map_count (65530 if unreadable) less the
    // mappings it had when first asked, less kHeadroom.
    static AliasBudget& process();
    explicit AliasBudget(uint64_t capacity) : capacity_(capacity) {}

    // The most VMs a VMM runs in one process (run --vms, bench share): each
    // gets capacity / kMostVms unless the VMM says how many share it.
    static constexpr uint64_t kMostVms = 16;
    // A VMM that starts `vms` VMs in this process says so first, so each
    // gets an equal share (capacity / vms) however many it asks for.
    void set_vms_sharing(uint64_t vms);
    // In a GPU worker just forked: this process serves one VM; what the
    // VMM's process had reserved or shared is not this one's.
    void serve_one_vm();
    // An allowance of at most `want` mappings (less when the share or what
    // is left is smaller; 0 when nothing is left).
    uint64_t reserve(uint64_t want);
    void release(uint64_t granted);

    uint64_t capacity() const { return capacity_; }
    uint64_t left() const;

private:
    mutable std::mutex mu_;
    uint64_t capacity_;
    uint64_t reserved_ = 0;
    uint64_t vms_ = kMostVms;
};

} // namespace kvmgpu::vgpu
