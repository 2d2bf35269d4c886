#include "kvmtool-gpu/vmm/vgpu_attach.h"

#include <set>
#include <stdexcept>

#include "kvmtool-gpu/abi/platform_abi.h"

namespace kvmgpu {

AttachedVgpu attach_vgpu(VirtualMachine& vm, const VgpuConfig& cfg) {
    std::string why;
    std::unique_ptr<vgpu::CommandEngine> engine;
    if (cfg.remote) {
        engine = remote::make_remote_engine(vm.memory(), cfg.options, *cfg.remote, &why);
        if (!engine) throw std::runtime_error("vGPU remote: " + why);
        why = "remote GPU server at " + cfg.remote->address;
    } else {
        engine = vgpu::make_engine(vm.memory(), cfg.options, cfg.backend, cfg.worker, &why, cfg.gpus,
                                   cfg.share ? cfg.share->group() : nullptr);
        if (!engine) throw std::runtime_error("vGPU backend '" + std::string(vgpu::to_string(cfg.backend)) + "': " + why);
    }
    AttachedVgpu out;
    out.backend_note = why;
    if (std::set<int>(cfg.gpus.begin(), cfg.gpus.end()).size() < cfg.gpus.size())
        out.backend_note += "; several devices share a GPU (each has its own context, but no bus lies between them)";
    out.device = std::make_shared<vgpu::VgpuDevice>(vm.memory(), std::move(engine));
    vm.mmio_bus().claim(KVMGPU_VGPU_GPA, KVMGPU_VGPU_SIZE, out.device);
    if (vgpu::uses_ioeventfd(cfg.options.doorbell))
        vm.vm_fd().add_ioeventfd(KVMGPU_VGPU_GPA + VGPU_DOORBELL_OFFSET, 4, out.device->doorbell_eventfd(), true);
    out.device->start();
    return out;
}

} // namespace kvmgpu
