#include "kvmtool-gpu/devices/vgpu/backends/device_set.h"

#include <algorithm>
#include <stdexcept>

namespace kvmgpu::vgpu {

namespace {
constexpr uint64_t kStagingBytes = 16ull << 20; // one staged piece between devices
} // namespace

DeviceSet::DeviceSet(std::vector<std::unique_ptr<GpuBackend>> devices) : devices_(std::move(devices)) {
    if (devices_.empty()) throw std::invalid_argument("a device set needs at least one device");
    for (const auto& d : devices_) {
        if (!d) throw std::invalid_argument("a device set was given a null backend");
        if (d->id() != devices_.front()->id()) throw std::invalid_argument("a device set mixes backend kinds");
    }
}

std::string DeviceSet::describe() const {
    std::string out = std::to_string(devices_.size()) + " devices:";
    for (size_t i = 0; i < devices_.size(); ++i) out += " [" + std::to_string(i) + "] " + devices_[i]->describe();
    return out;
}

void DeviceSet::bind_thread() {
    for (auto& d : devices_) d->bind_thread();
    cur().bind_thread(); // the selected device's context stays current (CUDA)
}

Status DeviceSet::register_guest_ram(void* host, uint64_t bytes) {
    Status first_error = VGPU_SUCCESS;
    for (auto& d : devices_) {
        const Status s = d->register_guest_ram(host, bytes);
        if (first_error == VGPU_SUCCESS) first_error = s;
    }
    cur().bind_thread();
    return first_error;
}

uint64_t DeviceSet::register_ns() const {
    uint64_t ns = 0;
    for (const auto& d : devices_) ns += d->register_ns();
    return ns;
}

Status DeviceSet::device_count(int* out) {
    *out = static_cast<int>(devices_.size());
    return VGPU_SUCCESS;
}

Status DeviceSet::select_device(int ordinal) {
    if (ordinal < 0 || static_cast<size_t>(ordinal) >= devices_.size()) return VGPU_ERROR_INVALID_DEVICE;
    if (selected_ != static_cast<size_t>(ordinal)) {
        selected_ = static_cast<size_t>(ordinal);
        cur().bind_thread();
    }
    return VGPU_SUCCESS;
}

Status DeviceSet::device_attribute(int attribute, int ordinal, int* out) {
    if (ordinal < 0 || static_cast<size_t>(ordinal) >= devices_.size()) return VGPU_ERROR_INVALID_DEVICE;
    return devices_[ordinal]->device_attribute(attribute, 0, out);
}

Status DeviceSet::device_name(int ordinal, char* buf, size_t len) {
    if (ordinal < 0 || static_cast<size_t>(ordinal) >= devices_.size()) return VGPU_ERROR_INVALID_DEVICE;
    return devices_[ordinal]->device_name(0, buf, len);
}

Status DeviceSet::device_total_mem(int ordinal, uint64_t* out) {
    if (ordinal < 0 || static_cast<size_t>(ordinal) >= devices_.size()) return VGPU_ERROR_INVALID_DEVICE;
    return devices_[ordinal]->device_total_mem(0, out);
}

const char* DeviceSet::peer_path(int dst_device, int src_device) const {
    return dst_device == src_device ? "same device" : "staged";
}

// Between devices: staged through VMM memory, piece by piece, and
// synchronous (the source device's queued work first, as the copy is
// ordered after it). Within one device: the device's own copy.
Status DeviceSet::memcpy_peer(int dst_device, uint64_t dst, int src_device, uint64_t src, uint64_t bytes,
                              BackendStream s, bool async) {
    const int n = static_cast<int>(devices_.size());
    if (dst_device < 0 || dst_device >= n || src_device < 0 || src_device >= n) return VGPU_ERROR_INVALID_DEVICE;
    if (dst_device == src_device && static_cast<size_t>(dst_device) == selected_)
        return cur().memcpy_dtod(dst, src, bytes, s, async);
    const size_t was = selected_;
    if (dst_device == src_device) { // another device's own copy, synchronous
        Status st = cur().stream_synchronize(s);
        devices_[dst_device]->bind_thread();
        if (st == VGPU_SUCCESS) st = devices_[dst_device]->memcpy_dtod(dst, src, bytes, 0, false);
        cur().bind_thread();
        return st;
    }
    GpuBackend& from = *devices_[src_device];
    GpuBackend& to = *devices_[dst_device];
    auto on = [&](GpuBackend& d) { d.bind_thread(); };
    if (staging_.empty()) staging_.resize(kStagingBytes);
    Status st = cur().stream_synchronize(s); // what the stream queued before the copy
    on(from);
    if (st == VGPU_SUCCESS) st = from.ctx_synchronize();
    for (uint64_t done = 0; st == VGPU_SUCCESS && done < bytes;) {
        const uint64_t piece = std::min<uint64_t>(kStagingBytes, bytes - done);
        on(from);
        st = from.memcpy_dtoh(staging_.data(), src + done, piece, 0, false);
        if (st != VGPU_SUCCESS) break;
        on(to);
        st = to.memcpy_htod(dst + done, staging_.data(), piece, 0, false);
        done += piece;
    }
    selected_ = was;
    cur().bind_thread();
    return st;
}

void DeviceSet::cancel_call_in_flight() {
    for (auto& d : devices_) d->cancel_call_in_flight();
}

} // namespace kvmgpu::vgpu
