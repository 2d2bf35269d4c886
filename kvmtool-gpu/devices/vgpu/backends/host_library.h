// Finds one of NVIDIA's CUDA libraries on the host for a backend (the
// libraries forwarded as calls: libcublas, libcurand): the path given
// (a `--cublas PATH` style override) alone, else `soname` on the loader's
// path, then the CUDA toolkit's lib64 ($CUDA_HOME, $CUDA_PATH,
// /usr/local/cuda, /usr/local/cuda-13*). Logs where it was found, or one
// error line saying what was tried and what the guest will get.
#pragma once

#include <string>

namespace kvmgpu::vgpu {

struct HostLibrary {
    void* handle = nullptr; // from dlopen; never closed
    std::string path;       // the file the loader opened
};

// `what` names the library in the log ("cuBLAS"); `guest_gets` ends the
// error line ("cuBLAS calls fail with CUBLAS_STATUS_NOT_INITIALIZED").
HostLibrary open_host_library(const char* what, const char* soname, const std::string& override_path,
                              const char* option, const char* guest_gets);

} // namespace kvmgpu::vgpu
