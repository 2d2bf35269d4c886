#include "kvmtool-gpu/devices/vgpu/backends/host_kernels.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

#include "kvmtool-gpu/abi/param_echo_shapes.h"
#include "kvmtool-gpu/devices/vgpu/backends/sample_kernels.h"

namespace kvmgpu::vgpu {

namespace {

// The most inner-loop iterations one CPU kernel launch may take, and what
// a launch beyond it gets: CUDA_ERROR_LAUNCH_TIMEOUT.
constexpr uint64_t kMaxCpuKernelWork = 1ull << 36;
constexpr Status kCpuKernelTimeout = static_cast<Status>(702);

// Threads along one axis, saturating instead of wrapping.
uint64_t threads(uint32_t grid, uint32_t block) { return uint64_t{grid} * block; }

template <typename T>
T param(std::span<void* const> params, size_t i) {
    T v;
    std::memcpy(&v, params[i], sizeof v);
    return v;
}

// Host view of `count` floats at dptr, or nullptr (count 0 gives a dummy).
float* floats(const DeviceAddressSpace& mem, uint64_t dptr, uint64_t count) {
    static float none;
    if (count == 0) return &none;
    uint64_t bytes;
    if (__builtin_mul_overflow(count, sizeof(float), &bytes)) return nullptr;
    // SAFETY: translate() checked that [dptr, dptr + bytes) is one device range.
    return reinterpret_cast<float*>(mem.translate(dptr, bytes));
}

float load(const float* p, uint64_t i) {
    float v;
    std::memcpy(&v, p + i, sizeof v); // device pointers may be misaligned
    return v;
}
void store(float* p, uint64_t i, float v) { std::memcpy(p + i, &v, sizeof v); }

Status vector_add(const DeviceAddressSpace& mem, Dim3 grid, Dim3 block, std::span<void* const> p) {
    const uint32_t n = param<uint32_t>(p, 3);
    const uint64_t count = std::min<uint64_t>(n, threads(grid.x, block.x));
    const float* a = floats(mem, param<uint64_t>(p, 0), count);
    const float* b = floats(mem, param<uint64_t>(p, 1), count);
    float* c = floats(mem, param<uint64_t>(p, 2), count);
    if (!a || !b || !c) return VGPU_ERROR_ILLEGAL_ADDRESS;
    for (uint64_t i = 0; i < count; ++i) store(c, i, load(a, i) + load(b, i));
    return VGPU_SUCCESS;
}

Status matmul(const DeviceAddressSpace& mem, Dim3 grid, Dim3 block, std::span<void* const> p) {
    const uint64_t n = param<uint32_t>(p, 3);
    const uint64_t rows = std::min<uint64_t>(n, threads(grid.y, block.y));
    const uint64_t cols = std::min<uint64_t>(n, threads(grid.x, block.x));
    if (rows == 0 || cols == 0) return VGPU_SUCCESS;
    // A CPU cannot run what a GPU can: refuse more than 2^36 multiply-adds
    // (n = 4096, about a minute) as a GPU watchdog would, rather than
    // keep the executor (and the VM's teardown) busy for hours.
    // rows, cols <= n < 2^32: the product is checked for overflow.
    uint64_t work;
    if (__builtin_mul_overflow(rows * cols, n, &work) || work > kMaxCpuKernelWork) return kCpuKernelTimeout;
    // Elements actually touched: a[0 .. rows*n), b[0 .. (n-1)*n + cols),
    // c[0 .. (rows-1)*n + cols). n < 2^32, so these fit in 64 bits.
    const float* a = floats(mem, param<uint64_t>(p, 0), rows * n);
    const float* b = floats(mem, param<uint64_t>(p, 1), (n - 1) * n + cols);
    float* c = floats(mem, param<uint64_t>(p, 2), (rows - 1) * n + cols);
    if (!a || !b || !c) return VGPU_ERROR_ILLEGAL_ADDRESS;
    for (uint64_t r = 0; r < rows; ++r)
        for (uint64_t col = 0; col < cols; ++col) {
            float acc = 0;
            for (uint64_t k = 0; k < n; ++k) acc += load(a, r * n + k) * load(b, k * n + col);
            store(c, r * n + col, acc);
        }
    return VGPU_SUCCESS;
}

Status empty_kernel(const DeviceAddressSpace&, Dim3, Dim3, std::span<void* const>) { return VGPU_SUCCESS; }

constexpr std::array<uint16_t, 4> kPtrPtrPtrU32{8, 8, 8, 4};
Status param_echo(const DeviceAddressSpace& mem, Dim3, Dim3, std::span<void* const> p) {
    uint8_t* out = mem.translate(param<uint64_t>(p, 0), kEchoOutBytes);
    if (!out) return VGPU_ERROR_ILLEGAL_ADDRESS;
    for (size_t i = 1; i < kEchoParams; ++i) {
        std::memcpy(out, p[i], kEchoSizes[i]);
        out += kEchoSizes[i];
    }
    return VGPU_SUCCESS;
}

// The runtime-API samples' kernels (sample_kernels.h), by their mangled names.
constexpr std::array<uint16_t, 5> kPtrPtrPtrI32I32{8, 8, 8, 4, 4};
constexpr std::array<uint16_t, 3> kPtrPtrU32{8, 8, 4};
constexpr std::array<uint16_t, 4> kI32F32PtrPtr{4, 4, 8, 8};
constexpr std::array<uint16_t, 3> kPtrI32I32{8, 4, 4};

const std::array<CpuKernel, 10> kKernels{{
    {"vector_add", "_Z10vector_addPKfS0_Pfj", kPtrPtrPtrU32, vector_add},
    {"matmul", "_Z6matmulPKfS0_Pfj", kPtrPtrPtrU32, matmul},
    {"empty_kernel", "_Z12empty_kernelv", {}, empty_kernel},
    {"param_echo", "", kEchoSizes, param_echo, kEchoOffsets},
    {"vectorAdd", "_Z9vectorAddPKfS0_Pfi", kPtrPtrPtrU32, sample_kernels::vector_add_int},
    // vectorAddMMAP's (extern "C"), the same sum: its VMM mappings run on this backend too.
    {"VecAdd_kernel", "VecAdd_kernel", kPtrPtrPtrU32, sample_kernels::vector_add_int},
    {"matrixMulTiled<32>", "_Z14matrixMulTiledILi32EEvPfPKfS2_ii", kPtrPtrPtrI32I32, sample_kernels::matrix_mul_tiled},
    {"reduceSum", "_Z9reduceSumPKiPij", kPtrPtrU32, sample_kernels::reduce_sum},
    {"saxpy", "_Z5saxpyifPKfPf", kI32F32PtrPtr, sample_kernels::saxpy},
    {"incrementBy", "_Z11incrementByPiii", kPtrI32I32, sample_kernels::increment_by},
}};

} // namespace

std::span<const CpuKernel> cpu_kernels() { return kKernels; }

int find_cpu_kernel(std::string_view name) {
    for (size_t i = 0; i < kKernels.size(); ++i)
        if (kKernels[i].name == name || (!kKernels[i].mangled.empty() && kKernels[i].mangled == name))
            return static_cast<int>(i);
    return -1;
}

namespace {
bool symbol_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; }
// `name` as a whole symbol: a string table's entry, or a PTX .entry's name.
bool holds_symbol(std::span<const uint8_t> image, std::string_view name) {
    if (name.empty()) return false;
    const std::string_view text(reinterpret_cast<const char*>(image.data()), image.size());
    for (size_t at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1)) {
        const size_t end = at + name.size();
        if ((at == 0 || !symbol_char(text[at - 1])) && (end == text.size() || !symbol_char(text[end]))) return true;
    }
    return false;
}
} // namespace

std::vector<int> kernels_named_in(std::span<const uint8_t> image) {
    std::vector<int> found;
    for (size_t i = 0; i < kKernels.size(); ++i)
        if (holds_symbol(image, kKernels[i].name) || holds_symbol(image, kKernels[i].mangled))
            found.push_back(static_cast<int>(i));
    return found;
}

ParamLayout cpu_kernel_layout(const CpuKernel& k) {
    ParamLayout layout = ParamLayout::natural(k.param_sizes);
    if (!k.param_offsets.empty()) layout.offsets.assign(k.param_offsets.begin(), k.param_offsets.end());
    return layout;
}

} // namespace kvmgpu::vgpu
