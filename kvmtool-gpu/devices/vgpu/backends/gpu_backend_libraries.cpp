// The libraries a backend offers: made at their first use by the makers it
// was given, dropped before the context they live in.
#include "kvmtool-gpu/devices/vgpu/backends/blas_library.h"
#include "kvmtool-gpu/devices/vgpu/backends/fft_library.h"
#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/rand_library.h"

namespace kvmgpu::vgpu {

namespace {

template <class Library>
Library* made(std::unique_ptr<Library>& held, const std::function<std::unique_ptr<Library>()>& make) {
    if (!held && make) held = make();
    return held.get();
}

} // namespace

GpuBackend::GpuBackend() = default; // here, where the libraries are complete types
GpuBackend::~GpuBackend() = default;

BlasLibrary* GpuBackend::blas() { return made(blas_, makers_.blas); }
RandLibrary* GpuBackend::rand() { return made(rand_, makers_.rand); }
FftLibrary* GpuBackend::fft() { return made(fft_, makers_.fft); }

void GpuBackend::drop_libraries() {
    blas_.reset();
    rand_.reset();
    fft_.reset();
}

void GpuBackend::libraries_lost_context() {
    if (blas_) blas_->forget_all();
    if (rand_) rand_->forget_all();
    if (fft_) fft_->forget_all();
}

} // namespace kvmgpu::vgpu
