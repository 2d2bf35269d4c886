// cuFFT's basic plans for the device model: a plan's shape and the bytes
// its input and output span (checked against the VM's allocations before
// an exec), and what a backend offers through GpuBackend::fft(): the CUDA
// backend the host's libcufft (cuda_fft.h), the host backend a naive DFT
// (host_fft.h).
#pragma once

#include <cstdint>
#include <optional>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"

namespace kvmgpu::vgpu {

using BackendFft = uintptr_t; // a cufftHandle, or the reference's id

// cufftType values.
enum class FftType : uint32_t { R2C = 0x2a, C2R = 0x2c, C2C = 0x29, D2Z = 0x6a, Z2D = 0x6c, Z2Z = 0x69 };

// The largest transform the VMM plans: elements of one batch member, and
// of all of them (cuFFT's own limits are in this range; a bound on the
// host backend's work).
constexpr uint64_t kFftMaxElements = 0x7fffffff; // also: every size fits cuFFT's int

struct FftShape {
    uint32_t rank = 1;
    uint64_t n[3] = {1, 1, 1}; // nx, ny, nz (row-major: the last of rank varies fastest)
    FftType type = FftType::C2C;
    uint64_t batch = 1;
    // cuFFT's advanced data layout (cufftPlanMany with embeds): element
    // (b, x0..x[rank-1]) of a side is at b * dist + stride * (x[rank-1] +
    // embed[rank-1] * (x[rank-2] + embed[rank-2] * ...)); embed[0] unused.
    // Off: the basic layout, each side dense.
    struct Layout {
        uint64_t embed[3] = {1, 1, 1};
        uint64_t stride = 1, dist = 1;
    };
    bool advanced = false;
    Layout in, out;

    // Checks guest values: rank 1..3, each size >= 1, a known type, batch
    // >= 1, and no product past kFftMaxElements. nullopt when refused.
    static std::optional<FftShape> from(uint64_t rank, const uint64_t n[3], uint64_t type, uint64_t batch);
    // The same, and with an advanced layout (`advanced`): strides >= 1,
    // distances >= 0, embed[k] >= the side's logical size for k >= 1, every
    // value within int64 (as cufftMakePlanMany64's), and no side's span
    // overflowing. nullopt when refused.
    static std::optional<FftShape> many(const uint64_t n[3], uint64_t rank, uint64_t type, uint64_t batch,
                                        bool advanced, const Layout& in, const Layout& out);
    // Logical complex-or-real elements of one side along dimension d (the
    // last: n/2 + 1 on the complex side of R2C and C2R).
    uint64_t side_size(bool input, uint32_t d) const;
    // Index (in elements) of the side's last element + 1: the elements its span holds.
    uint64_t side_span(bool input) const;
    uint64_t side_element_bytes(bool input) const;
    uint64_t last() const { return n[rank - 1]; }
    uint64_t elements() const; // of one batch member
    bool real_input() const { return type == FftType::R2C || type == FftType::D2Z; }
    bool real_output() const { return type == FftType::C2R || type == FftType::Z2D; }
    bool double_precision() const { return type == FftType::D2Z || type == FftType::Z2D || type == FftType::Z2Z; }
    // Bytes the input and output span for the whole batch (no overflow:
    // the sizes are bounded by from(), the layouts by many()).
    uint64_t input_bytes() const;
    uint64_t output_bytes() const;
};

class FftLibrary {
public:
    virtual ~FftLibrary() = default;
    // The backend's context went and took every plan with it.
    virtual void forget_all() = 0;
    // *work: the plan's work area, which the device model charges to the VM
    // when the library allocates it (auto_allocation; else the program
    // gives one with set_work_area before an exec).
    virtual Status plan(const FftShape& shape, bool auto_allocation, BackendFft* out, uint64_t* work) = 0;
    // The device model checked [dptr, + work) is one of the VM's allocations.
    virtual Status set_work_area(BackendFft p, uint64_t dptr) = 0;
    virtual Status destroy(BackendFft p) = 0;
    virtual Status set_stream(BackendFft p, BackendStream s) = 0;
    // The device model checked [in, + input_bytes) and [out, + output_bytes).
    virtual Status exec(BackendFft p, const FftShape& shape, uint64_t in, uint64_t out, int direction) = 0;
};

} // namespace kvmgpu::vgpu
