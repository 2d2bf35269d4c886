#include "kvmtool-gpu/devices/vgpu/backends/sample_kernels.h"

#include <algorithm>
#include <cstring>

namespace kvmgpu::vgpu::sample_kernels {

namespace {

// The most inner-loop iterations one launch may take (as host_kernels.cpp):
// beyond it, CUDA_ERROR_LAUNCH_TIMEOUT, as a GPU watchdog would.
constexpr uint64_t kMaxWork = 1ull << 36;
constexpr Status kTimeout = static_cast<Status>(702);

template <typename T>
T param(std::span<void* const> params, size_t i) {
    T v;
    std::memcpy(&v, params[i], sizeof v);
    return v;
}

uint64_t threads(uint32_t grid, uint32_t block) { return uint64_t{grid} * block; }

// Host view of `count` elements of T at device address dptr, or nullptr
// (count 0 gives a valid dummy: nothing will be touched).
template <typename T>
uint8_t* elems(const DeviceAddressSpace& mem, uint64_t dptr, uint64_t count) {
    static uint8_t none[sizeof(T)];
    if (count == 0) return none;
    uint64_t bytes;
    if (__builtin_mul_overflow(count, sizeof(T), &bytes)) return nullptr;
    return mem.translate(dptr, bytes);
}

// Device memory may be misaligned for T: element access goes through memcpy.
template <typename T>
T get(const uint8_t* base, uint64_t i) {
    T v;
    std::memcpy(&v, base + i * sizeof(T), sizeof v);
    return v;
}
template <typename T>
void put(uint8_t* base, uint64_t i, T v) {
    std::memcpy(base + i * sizeof(T), &v, sizeof v);
}

// Elements a 1-D launch covers of n (a signed count: n <= 0 covers none).
uint64_t covered(int32_t n, Dim3 grid, Dim3 block) {
    return n <= 0 ? 0 : std::min<uint64_t>(static_cast<uint64_t>(n), threads(grid.x, block.x));
}

} // namespace

Status vector_add_int(const DeviceAddressSpace& mem, Dim3 grid, Dim3 block, std::span<void* const> p) {
    const uint64_t count = covered(param<int32_t>(p, 3), grid, block);
    const uint8_t* a = elems<float>(mem, param<uint64_t>(p, 0), count);
    const uint8_t* b = elems<float>(mem, param<uint64_t>(p, 1), count);
    uint8_t* c = elems<float>(mem, param<uint64_t>(p, 2), count);
    if (!a || !b || !c) return VGPU_ERROR_ILLEGAL_ADDRESS;
    for (uint64_t i = 0; i < count; ++i) put<float>(c, i, get<float>(a, i) + get<float>(b, i));
    return VGPU_SUCCESS;
}

Status matrix_mul_tiled(const DeviceAddressSpace& mem, Dim3 grid, Dim3 block, std::span<void* const> p) {
    const int32_t wa = param<int32_t>(p, 3), wb = param<int32_t>(p, 4);
    const uint64_t rows = threads(grid.y, block.y), cols = threads(grid.x, block.x);
    if (wa <= 0 || wb <= 0) return VGPU_ERROR_ILLEGAL_ADDRESS; // the GPU kernel would index wildly
    const uint64_t k_n = static_cast<uint64_t>(wa), row_b = static_cast<uint64_t>(wb);
    // Checked products: the launch's dimensions are the guest's.
    uint64_t cells, work;
    if (__builtin_mul_overflow(rows, cols, &cells) || __builtin_mul_overflow(cells, k_n, &work) || work > kMaxWork)
        return kTimeout;
    // Elements touched: A[0, rows*wA), B[0, (wA-1)*wB + cols), C[0, (rows-1)*wB + cols).
    uint8_t* c = elems<float>(mem, param<uint64_t>(p, 0), (rows - 1) * row_b + cols);
    const uint8_t* a = elems<float>(mem, param<uint64_t>(p, 1), rows * k_n);
    const uint8_t* b = elems<float>(mem, param<uint64_t>(p, 2), (k_n - 1) * row_b + cols);
    if (!a || !b || !c) return VGPU_ERROR_ILLEGAL_ADDRESS;
    for (uint64_t r = 0; r < rows; ++r)
        for (uint64_t col = 0; col < cols; ++col) {
            float acc = 0;
            for (uint64_t k = 0; k < k_n; ++k) acc += get<float>(a, r * k_n + k) * get<float>(b, k * row_b + col);
            put<float>(c, r * row_b + col, acc);
        }
    return VGPU_SUCCESS;
}

Status reduce_sum(const DeviceAddressSpace& mem, Dim3 grid, Dim3 block, std::span<void* const> p) {
    const uint64_t n = param<uint32_t>(p, 2);
    const uint64_t span = 2 * uint64_t{block.x};
    const uint64_t covered_in = std::min(n, threads(grid.x, block.x) * 2);
    const uint8_t* in = elems<int32_t>(mem, param<uint64_t>(p, 0), covered_in);
    uint8_t* out = elems<int32_t>(mem, param<uint64_t>(p, 1), grid.x);
    if (!in || !out) return VGPU_ERROR_ILLEGAL_ADDRESS;
    for (uint64_t b = 0; b < grid.x; ++b) {
        uint32_t sum = 0; // int addition on a GPU wraps
        const uint64_t end = std::min(n, (b + 1) * span);
        for (uint64_t i = b * span; i < end; ++i) sum += static_cast<uint32_t>(get<int32_t>(in, i));
        put<int32_t>(out, b, static_cast<int32_t>(sum));
    }
    return VGPU_SUCCESS;
}

Status saxpy(const DeviceAddressSpace& mem, Dim3 grid, Dim3 block, std::span<void* const> p) {
    const uint64_t count = covered(param<int32_t>(p, 0), grid, block);
    const float a = param<float>(p, 1);
    const uint8_t* x = elems<float>(mem, param<uint64_t>(p, 2), count);
    uint8_t* y = elems<float>(mem, param<uint64_t>(p, 3), count);
    if (!x || !y) return VGPU_ERROR_ILLEGAL_ADDRESS;
    for (uint64_t i = 0; i < count; ++i) put<float>(y, i, a * get<float>(x, i) + get<float>(y, i));
    return VGPU_SUCCESS;
}

Status increment_by(const DeviceAddressSpace& mem, Dim3 grid, Dim3 block, std::span<void* const> p) {
    const uint32_t inc = param<uint32_t>(p, 1);
    const uint64_t count = covered(param<int32_t>(p, 2), grid, block);
    uint8_t* d = elems<int32_t>(mem, param<uint64_t>(p, 0), count);
    if (!d) return VGPU_ERROR_ILLEGAL_ADDRESS;
    for (uint64_t i = 0; i < count; ++i) {
        const uint32_t v = static_cast<uint32_t>(get<int32_t>(d, i)) + inc;
        put<int32_t>(d, i, static_cast<int32_t>(v));
    }
    return VGPU_SUCCESS;
}

} // namespace kvmgpu::vgpu::sample_kernels
