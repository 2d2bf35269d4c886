// `kvmtool-gpu bench multigpu`: E = A*B + C*D on four devices, partial
// products gathered by peer copies (G_G) or through host memory (G_H), over
// a sweep of matrix orders, natively and in a guest in the same run.
#pragma once

#include <string>
#include <vector>

namespace kvmgpu::bench {
int bench_multigpu_command(const std::vector<std::string>& args);
const char* bench_multigpu_help();
} // namespace kvmgpu::bench
