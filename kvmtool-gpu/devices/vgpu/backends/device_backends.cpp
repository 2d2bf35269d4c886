#include "kvmtool-gpu/devices/vgpu/backends/device_backends.h"

#include <algorithm>
#include <stdexcept>

#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::vgpu {

namespace {
constexpr uint64_t kStagingBytes = 16ull << 20; // one staged piece between devices
} // namespace

DeviceBackends::DeviceBackends(std::vector<std::unique_ptr<GpuBackend>> devices) : devices_(std::move(devices)) {
    if (devices_.empty()) throw std::invalid_argument("a device set needs at least one device");
    for (const auto& d : devices_) {
        if (!d) throw std::invalid_argument("a device set was given a null backend");
        if (d->id() != devices_.front()->id()) throw std::invalid_argument("a device set mixes backend kinds");
    }
}

std::string DeviceBackends::describe() const {
    if (devices_.size() == 1) return devices_.front()->describe();
    std::string out = std::to_string(devices_.size()) + " devices:";
    for (size_t i = 0; i < devices_.size(); ++i) out += " [" + std::to_string(i) + "] " + devices_[i]->describe();
    return out;
}

void DeviceBackends::bind_thread() {
    for (auto& d : devices_) d->bind_thread();
    current().bind_thread(); // the selected device's context stays current (CUDA)
}

Status DeviceBackends::register_guest_ram(void* host, uint64_t bytes) {
    Status first_error = VGPU_SUCCESS;
    for (auto& d : devices_) {
        const Status s = d->register_guest_ram(host, bytes);
        if (first_error == VGPU_SUCCESS) first_error = s;
    }
    current().bind_thread();
    return first_error;
}

Status DeviceBackends::unregister_guest_ram(void* host) {
    Status first_error = VGPU_SUCCESS;
    for (auto& d : devices_) {
        const Status s = d->unregister_guest_ram(host);
        if (first_error == VGPU_SUCCESS) first_error = s;
    }
    current().bind_thread();
    return first_error;
}

Status DeviceBackends::add_guest_ram(void* host, uint64_t bytes) {
    if (devices_.size() == 1) return current().add_guest_ram(host, bytes);
    return register_guest_ram(host, bytes);
}

Status DeviceBackends::prepare_guest_ram(const void* host, uint64_t bytes) {
    if (devices_.size() == 1) return current().prepare_guest_ram(host, bytes);
    return VGPU_SUCCESS; // registered at once (add_guest_ram)
}

Status DeviceBackends::prepare_guest_ram_in_one(const void* host, uint64_t bytes) {
    if (devices_.size() == 1) return current().prepare_guest_ram_in_one(host, bytes);
    return VGPU_SUCCESS; // registered at once (add_guest_ram)
}

uint64_t DeviceBackends::register_ns() const {
    uint64_t ns = 0;
    for (const auto& d : devices_) ns += d->register_ns();
    return ns;
}

uint64_t DeviceBackends::registered_bytes() const {
    uint64_t n = 0;
    for (const auto& d : devices_) n += d->registered_bytes();
    return n;
}

Status DeviceBackends::select(int device) {
    if (!valid(device)) return VGPU_ERROR_INVALID_DEVICE;
    if (selected_ != static_cast<size_t>(device)) {
        selected_ = static_cast<size_t>(device);
        current().bind_thread();
    }
    return VGPU_SUCCESS;
}

bool DeviceBackends::first_copy_between(int dst_device, int src_device) {
    if (path_said_.empty()) path_said_.assign(devices_.size() * devices_.size(), false);
    const size_t pair = static_cast<size_t>(src_device) * devices_.size() + static_cast<size_t>(dst_device);
    if (path_said_[pair]) return false;
    path_said_[pair] = true;
    return true;
}

void DeviceBackends::say_path(int dst_device, int src_device, const char* path) {
    log_info("vgpu: copies from device %d to device %d: %s", src_device, dst_device, path);
}

Status DeviceBackends::can_access_peer(int device, int peer_device, int* out) {
    if (!valid(device) || !valid(peer_device)) return VGPU_ERROR_INVALID_DEVICE;
    if (device == peer_device) {
        *out = 0; // a device is not its own peer, as the driver says
        return VGPU_SUCCESS;
    }
    const Status s = devices_[device]->peer_can_access(*devices_[peer_device], out);
    if (s == VGPU_ERROR_NOT_SUPPORTED) *out = 0;
    return s == VGPU_ERROR_NOT_SUPPORTED ? VGPU_SUCCESS : s;
}

Status DeviceBackends::p2p_attribute(int attribute, int device, int peer_device, int* out) {
    if (!valid(device) || !valid(peer_device) || device == peer_device) return VGPU_ERROR_INVALID_DEVICE;
    const Status s = devices_[device]->peer_attribute(*devices_[peer_device], attribute, out);
    if (s != VGPU_ERROR_NOT_SUPPORTED) return s;
    int can = 0;
    const Status c = can_access_peer(device, peer_device, &can);
    if (c != VGPU_SUCCESS) return c;
    *out = attribute == 2 /* CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED */ ? can : 0;
    return VGPU_SUCCESS;
}

Status DeviceBackends::set_peer_access(int device, int peer_device, bool enable) {
    if (!valid(device) || !valid(peer_device)) return VGPU_ERROR_INVALID_DEVICE;
    if (device == peer_device) return VGPU_ERROR_PEER_ACCESS_UNSUPPORTED;
    devices_[device]->bind_thread();
    Status s = devices_[device]->peer_set_access(*devices_[peer_device], enable);
    if (s == VGPU_ERROR_NOT_SUPPORTED) s = VGPU_ERROR_PEER_ACCESS_UNSUPPORTED;
    current().bind_thread();
    return s;
}

// Piece by piece through VMM memory, synchronous.
Status DeviceBackends::staged_copy(GpuBackend& from, GpuBackend& to, uint64_t dst, uint64_t src, uint64_t bytes) {
    if (staging_.empty()) staging_.resize(kStagingBytes);
    Status st = VGPU_SUCCESS;
    for (uint64_t done = 0; st == VGPU_SUCCESS && done < bytes;) {
        const uint64_t piece = std::min<uint64_t>(kStagingBytes, bytes - done);
        from.bind_thread();
        st = from.memcpy_dtoh(staging_.data(), src + done, piece, 0, false);
        if (st != VGPU_SUCCESS) break;
        to.bind_thread();
        st = to.memcpy_htod(dst + done, staging_.data(), piece, 0, false);
        done += piece;
    }
    return st;
}

Status DeviceBackends::memcpy_peer(int dst_device, uint64_t dst, int src_device, uint64_t src, uint64_t bytes,
                              BackendStream s, bool async) {
    if (!valid(dst_device) || !valid(src_device)) return VGPU_ERROR_INVALID_DEVICE;
    const int here = static_cast<int>(selected_);
    if (dst_device == src_device && dst_device == here) return current().memcpy_dtod(dst, src, bytes, s, async);
    GpuBackend& from = *devices_[src_device];
    GpuBackend& to = *devices_[dst_device];
    if (dst_device != src_device && (here == src_device || here == dst_device)) {
        GpuBackend& other = here == src_device ? to : from;
        const Status st = current().memcpy_with_peer(other, here == src_device, dst, src, bytes, s, async);
        if (st != VGPU_ERROR_NOT_SUPPORTED) {
            if (first_copy_between(dst_device, src_device)) { // asks the driver once per pair, not per copy
                int can = 0;
                from.peer_can_access(to, &can);
                say_path(dst_device, src_device,
                         can ? "the backend's peer copy, peer access possible (CUDA: cuMemcpyPeerAsync over the bus)"
                             : "the backend's peer copy without peer access (CUDA: cuMemcpyPeerAsync, staged by "
                               "the driver, or within the GPU when both devices are on one)");
            }
            return st;
        }
    }
    Status st = current().stream_synchronize(s);
    if (st == VGPU_SUCCESS) {
        from.bind_thread();
        st = from.ctx_synchronize();
    }
    if (st == VGPU_SUCCESS && dst_device == src_device) {
        st = from.memcpy_dtod(dst, src, bytes, 0, false);
    } else if (st == VGPU_SUCCESS) {
        if (first_copy_between(dst_device, src_device)) say_path(dst_device, src_device, "staged through the VMM");
        st = staged_copy(from, to, dst, src, bytes);
    }
    current().bind_thread();
    return st;
}

} // namespace kvmgpu::vgpu
