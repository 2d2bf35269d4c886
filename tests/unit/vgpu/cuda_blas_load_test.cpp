// CudaBlas's search for the host's libcublas (cuda_blas.h), with no GPU
// needed: where the library is found it is loaded and its version read;
// where it is not (or --cublas names a file that is not there) every call
// answers NOT_INITIALIZED. Each case runs in a child process: the library
// is looked for once per process.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>

#include "kvmtool-gpu/devices/vgpu/blas/cuda_blas.h"

namespace kvmgpu::vgpu {
namespace {

// No driver entry point is called before cublasCreate succeeds.
const CudaDriverApi kNoDriver{};

TEST(CudaBlasLoad, AMissingLibraryIsNotInitialized) {
    EXPECT_EXIT(
        {
            set_cublas_path("/nonexistent/libcublas.so.13");
            CudaBlas blas(kNoDriver);
            int v = 0;
            BackendBlas h = 0;
            const bool ok = blas.version(&v) == VGPU_ERROR_NOT_INITIALIZED && blas.create(&h) == VGPU_ERROR_NOT_INITIALIZED;
            std::exit(ok ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "cuBLAS: no libcublas.so.13 \\(tried /nonexistent/libcublas.so.13");
}

TEST(CudaBlasLoad, TheToolkitsLibraryIsFoundAndNamed) {
    if (access("/usr/local/cuda/lib64/libcublas.so.13", R_OK) != 0)
        GTEST_SKIP() << "no libcublas.so.13 in /usr/local/cuda/lib64";
    EXPECT_EXIT(
        {
            CudaBlas blas(kNoDriver);
            int v = 0;
            std::exit(blas.version(&v) == VGPU_SUCCESS && v >= 130000 ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "cuBLAS: libcublas 13\\.[0-9]+\\.[0-9]+ from /");
}

} // namespace
} // namespace kvmgpu::vgpu
