// The host backend's arrays: host memory, rows packed (pitch = a row's
// bytes), which HostBackend::memcpy_3d copies to and from row by row.
// Texture and surface objects are numbers kept with nothing behind them:
// no CPU kernel samples a texture (a program's own kernels stop at launch).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>

#include "kvmtool-gpu/devices/vgpu/backends/array_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/host_device_memory.h"

namespace kvmgpu::vgpu {

class HostArrays final : public ArrayBackend {
public:
    // `memory`: the device's budget and object numbers; it outlives this.
    explicit HostArrays(HostDeviceMemory& memory) : memory_(memory) {}
    HostArrays(const HostArrays&) = delete;
    HostArrays& operator=(const HostArrays&) = delete;

    Status array_create(const ArrayShape& shape, BackendArray* out) override;
    Status array_destroy(BackendArray a) override;
    Status sampled_object_create(const TextureSpec& spec, bool surface, uint64_t* out) override;
    Status sampled_object_destroy(uint64_t object, bool surface) override;

    // Array a's bytes and shape, or nullptr for no array of this backend's.
    uint8_t* bytes_of(BackendArray a, const ArrayShape** shape) const;
    uint64_t live() const { return arrays_.size(); } // for tests
    // Everything goes (a recovered context: the device gives back all its budget).
    void clear();

private:
    struct FreeBytes {
        void operator()(uint8_t* p) const { std::free(p); }
    };
    struct HostArray {
        ArrayShape shape;
        std::unique_ptr<uint8_t, FreeBytes> bytes; // calloc'ed
    };
    HostDeviceMemory& memory_;
    std::map<BackendArray, HostArray> arrays_;
    std::map<uint64_t, bool> sampled_objects_; // texture or surface object -> is a surface
};

} // namespace kvmgpu::vgpu
