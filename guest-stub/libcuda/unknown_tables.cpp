// Tables NVIDIA's libraries ask for whose entries are not known yet. Some
// callers do not check cuGetExportTable's answer and call through the table
// anyway (cuBLASLt's bf16 kernels: `call *0x20(%rax)` with no table was a
// guest page fault), so each is answered with its size and unknown entries:
// the caller gets CUDA_ERROR_NOT_SUPPORTED, and the entry is logged once.
#include "guest-stub/libcuda/export_tables.h"

namespace guest::libcuda {
namespace {
constexpr char kUnnamed1734Name[] = "UNNAMED_1734DC26";
} // namespace

// 1734dc26-800d-4745-8726-c0f1e7dd8bca: 17 entries with CUDA 13.0's driver.
// cuBLASLt (bf16 gemms) calls [4](&a, &b), which natively makes two buffers
// of permutation tables, then [13](a, b, 0x40, 7, state), which rewrites
// both buffers' first words.
extern const Entry kUnnamed1734[] = {
    KVMGPU_SIZE_WORD(17),
    KVMGPU_UNKNOWN_8(kUnnamed1734Name, 1),
    KVMGPU_UNKNOWN_8(kUnnamed1734Name, 9),
};
static_assert(sizeof kUnnamed1734 / sizeof kUnnamed1734[0] == 17);

} // namespace guest::libcuda
