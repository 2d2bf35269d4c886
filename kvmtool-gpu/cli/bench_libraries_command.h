// `kvmtool-gpu bench libraries` (or `bench cublas`): cuBLAS forwarded as
// calls against NVIDIA's cuBLAS natively, in the same run: one program
// (guest-stub/samples/cublasBench.cu), its native twin run first in a
// child process, then the guest.
#pragma once

#include <string>
#include <vector>

namespace kvmgpu::bench {
int bench_libraries_command(const std::vector<std::string>& args);
const char* bench_libraries_help();
} // namespace kvmgpu::bench
