// The CUDA backend's BLAS: the host's libcublas, found with dlopen at the
// first cuBLAS call (nothing links against it), every entry point typed by
// NVIDIA's cublas_v2.h. Where it looks: the path given to
// set_cublas_path() (`--cublas PATH`) alone, else libcublas.so.13 on the
// loader's path, then the CUDA toolkit's lib64 ($CUDA_HOME, $CUDA_PATH,
// /usr/local/cuda, /usr/local/cuda-13*). Where it was found is logged;
// a missing library is one error line, and every create() then answers
// VGPU_ERROR_NOT_INITIALIZED (the guest's CUBLAS_STATUS_NOT_INITIALIZED).
//
// Each handle works in the backend's context (current on the calling
// thread). GEMM_POINTERS' checked pointer lists go to a device buffer of
// the handle's own, uploaded on its stream, so the library never reads the
// guest's arrays. Not thread-safe: the backend's thread only.
#pragma once

#include <cuda.h>

#include <map>
#include <memory>
#include <string>

#include "kvmtool-gpu/devices/vgpu/backends/cuda_driver_api.h"
#include "kvmtool-gpu/devices/vgpu/backends/blas_library.h"

namespace kvmgpu::vgpu {

// The library to load instead of searching (`--cublas PATH`); set before
// the GPU worker is forked. Empty: search.
void set_cublas_path(std::string path);

struct CublasApi; // the resolved entry points (cuda_blas.cpp)

class CudaBlas final : public BlasLibrary {
public:
    explicit CudaBlas(const CudaDriverApi& driver);
    ~CudaBlas() override;

    std::string describe() const override;
    Status create(BackendBlas* out) override;
    Status destroy(BackendBlas h) override;
    Status set_stream(BackendBlas h, BackendStream s) override;
    Status set_math_mode(BackendBlas h, uint32_t mode) override;
    Status set_workspace(BackendBlas h, uint64_t dptr, uint64_t bytes) override;
    Status version(int* out) override;
    Status level1(BackendBlas h, const vgpu_blas_level1& c, BlasResult* host_result) override;
    Status level2(BackendBlas h, const vgpu_blas_level2& c) override;
    Status gemm(BackendBlas h, const vgpu_blas_gemm& c, const BlasPointers& pointers) override;
    Status level3(BackendBlas h, const vgpu_blas_level3& c) override;

    // The context is gone (a sticky error): its handles and buffers with it.
    void forget_all() override;

private:
    struct Handle; // cuda_blas.cpp
    const CublasApi* api(); // loads on first use; nullptr when missing
    Handle* find(BackendBlas h);
    // The handle's pointer mode for this call's scalars.
    Status scalars(Handle& h, const vgpu_blas_head& head);
    Status upload_pointers(Handle& h, const BlasPointers& p, CUdeviceptr* out);

    const CudaDriverApi& driver_;
    const CublasApi* api_ = nullptr;
    bool tried_ = false;
    std::map<BackendBlas, std::unique_ptr<Handle>> handles_;
};

} // namespace kvmgpu::vgpu
