// The guest's devices, one backend each (`--gpus LIST`: each with its own
// context, on its own or a shared GPU), and what only the set of them can
// do. The device model picks the backend a call goes to (current(), after
// select() by a context's device, or at() by an ordinal) and calls it
// directly; nothing here forwards a device's own operations.
//
// What is the set's: the ordinals (count, the check), which device's
// context is current on the thread, guest RAM registration (every device
// gets guest RAM, so each can DMA from it), and copies and peer access
// between two devices. A copy between devices goes as the devices allow:
// the backend's own peer copy when both are one backend's kind and it has
// one (CUDA: cuMemcpyPeerAsync, over the bus where peer access allows,
// staged by the driver where not), else staged through the VMM's memory
// (device to host, then host to device); the log says which on the first
// copy between each pair of devices.
#pragma once

#include <concepts>
#include <memory>
#include <string>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"

namespace kvmgpu::vgpu {

class DeviceBackends {
public:
    // None: what a factory returns when it cannot make a backend (false).
    DeviceBackends() = default;
    // One device; a null backend makes none.
    template <std::derived_from<GpuBackend> B>
    DeviceBackends(std::unique_ptr<B> one) { // NOLINT(google-explicit-constructor): a backend is a set of one
        if (one) devices_.push_back(std::move(one));
    }
    // Several (device i is devices[i]). Throws std::invalid_argument for an
    // empty list, a null backend, or backends of different kinds.
    explicit DeviceBackends(std::vector<std::unique_ptr<GpuBackend>> devices);
    DeviceBackends(DeviceBackends&&) noexcept = default;
    DeviceBackends& operator=(DeviceBackends&&) noexcept = default;

    explicit operator bool() const { return !devices_.empty(); }
    int count() const { return static_cast<int>(devices_.size()); }
    bool valid(int device) const { return device >= 0 && device < count(); }
    GpuBackend& at(int device) const { return *devices_[static_cast<size_t>(device)]; } // valid(device)
    GpuBackend& current() const { return *devices_[selected_]; }
    int selected() const { return static_cast<int>(selected_); }
    // Device `device`'s backend becomes current (its context current on
    // this thread); INVALID_DEVICE for an ordinal the guest does not have.
    Status select(int device);

    uint32_t id() const { return devices_.front()->id(); }
    // The device's own line for one device; every device's for several.
    std::string describe() const;
    bool real_kernels() const { return devices_.front()->real_kernels(); }
    // Every device's bind_thread, then the current one's again (CUDA: its
    // context stays current).
    void bind_thread();

    // Guest RAM on every device. One device may register it lazily
    // (add_guest_ram); several register it at once, since a kernel on one
    // device may reach RAM that only another device's copies prepared.
    Status register_guest_ram(void* host, uint64_t bytes);
    Status add_guest_ram(void* host, uint64_t bytes);
    Status prepare_guest_ram(const void* host, uint64_t bytes);
    Status prepare_guest_ram_in_one(const void* host, uint64_t bytes);
    Status unregister_guest_ram(void* host);
    uint64_t register_ns() const;      // summed over the devices
    uint64_t registered_bytes() const; // summed over the devices

    // cuMemcpyPeer: [src, src + bytes) of device src_device to dst of
    // dst_device, on stream s of the current device. Within the current
    // device: its own copy. Between two: the backend's peer copy where it
    // has one (queued on s when the current device is one of the two), else
    // staged (synchronous, after what s and the source device queued).
    Status memcpy_peer(int dst_device, uint64_t dst, int src_device, uint64_t src, uint64_t bytes, BackendStream s,
                       bool async);
    // cuDeviceCanAccessPeer (a device is not its own peer).
    Status can_access_peer(int device, int peer_device, int* out);
    // cuDeviceGetP2PAttribute between two distinct devices: the pair's
    // backends answer where they can (CUDA: two GPUs), else
    // ACCESS_SUPPORTED is can_access_peer and every other attribute 0.
    Status p2p_attribute(int attribute, int device, int peer_device, int* out);
    // cuCtxEnablePeerAccess / Disable: device maps peer_device's memory.
    Status set_peer_access(int device, int peer_device, bool enable);

private:
    Status staged_copy(GpuBackend& from, GpuBackend& to, uint64_t dst, uint64_t src, uint64_t bytes);
    // True once per (source, destination) pair: the first copy logs its path.
    bool first_copy_between(int dst_device, int src_device);
    static void say_path(int dst_device, int src_device, const char* path);

    std::vector<std::unique_ptr<GpuBackend>> devices_;
    size_t selected_ = 0;
    std::vector<uint8_t> staging_; // a copy between devices, made on first use
    std::vector<bool> path_said_;  // by src * count() + dst
};

} // namespace kvmgpu::vgpu
