#include "kvmtool-gpu/devices/vgpu/fft/host_fft.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <vector>

namespace kvmgpu::vgpu {

namespace {
using Cx = std::complex<double>;
constexpr uint64_t kMaxSteps = uint64_t{1} << 30;

// A naive DFT along dimension d of a row-major array of `dims` (the batch
// is dims[0]), in place, with exponent sign `sign`.
void dft_along(std::vector<Cx>& a, const std::vector<uint64_t>& dims, size_t d, int sign) {
    uint64_t outer = 1, inner = 1;
    for (size_t i = 0; i < d; ++i) outer *= dims[i];
    for (size_t i = d + 1; i < dims.size(); ++i) inner *= dims[i];
    const uint64_t len = dims[d];
    std::vector<Cx> x(len), w(len);
    for (uint64_t k = 0; k < len; ++k) w[k] = std::polar(1.0, sign * 2.0 * M_PI * double(k) / double(len));
    for (uint64_t o = 0; o < outer; ++o)
        for (uint64_t i = 0; i < inner; ++i) {
            Cx* base = a.data() + o * len * inner + i;
            for (uint64_t k = 0; k < len; ++k) x[k] = base[k * inner];
            for (uint64_t j = 0; j < len; ++j) {
                Cx sum = 0;
                for (uint64_t k = 0; k < len; ++k) sum += x[k] * w[(j * k) % len];
                base[j * inner] = sum;
            }
        }
}

template <class T>
std::vector<Cx> load(const uint8_t* p, uint64_t count, bool complex_in) {
    std::vector<Cx> v(count);
    for (uint64_t i = 0; i < count; ++i) {
        T re, im = 0;
        std::memcpy(&re, p + (complex_in ? 2 * i : i) * sizeof(T), sizeof(T));
        if (complex_in) std::memcpy(&im, p + (2 * i + 1) * sizeof(T), sizeof(T));
        v[i] = Cx(re, im);
    }
    return v;
}

template <class T>
void store(uint8_t* p, const std::vector<Cx>& v, bool complex_out) {
    for (uint64_t i = 0; i < v.size(); ++i) {
        const T re = T(v[i].real()), im = T(v[i].imag());
        std::memcpy(p + (complex_out ? 2 * i : i) * sizeof(T), &re, sizeof(T));
        if (complex_out) std::memcpy(p + (2 * i + 1) * sizeof(T), &im, sizeof(T));
    }
}

// The whole exec in T (float or double) once the views are known.
template <class T>
void run(const FftShape& s, const uint8_t* in, uint8_t* out, int direction) {
    std::vector<uint64_t> full{s.batch}, half{s.batch};
    for (uint32_t i = 0; i < s.rank; ++i) full.push_back(s.n[i]), half.push_back(s.n[i]);
    half.back() = s.last() / 2 + 1;
    const uint64_t rows = s.batch * s.elements() / s.last();
    if (s.real_input()) { // R2C, D2Z: forward over the full array, keep the half spectrum
        std::vector<Cx> a = load<T>(in, s.batch * s.elements(), false);
        for (size_t d = 1; d < full.size(); ++d) dft_along(a, full, d, -1);
        std::vector<Cx> h(rows * half.back());
        for (uint64_t r = 0; r < rows; ++r)
            for (uint64_t k = 0; k < half.back(); ++k) h[r * half.back() + k] = a[r * s.last() + k];
        return store<T>(out, h, true);
    }
    if (s.real_output()) { // C2R, Z2D: inverse over the other dimensions, then each Hermitian row
        std::vector<Cx> h = load<T>(in, rows * half.back(), true);
        for (size_t d = 1; d + 1 < half.size(); ++d) dft_along(h, half, d, +1);
        std::vector<Cx> a(rows * s.last());
        for (uint64_t r = 0; r < rows; ++r)
            for (uint64_t k = 0; k < s.last(); ++k)
                a[r * s.last() + k] = k < half.back() ? h[r * half.back() + k] : std::conj(h[r * half.back() + s.last() - k]);
        dft_along(a, full, full.size() - 1, +1);
        return store<T>(out, a, false);
    }
    std::vector<Cx> a = load<T>(in, s.batch * s.elements(), true);
    for (size_t d = 1; d < full.size(); ++d) dft_along(a, full, d, direction);
    store<T>(out, a, true);
}
// Copies one side between its advanced layout at `strided` and a dense
// array (row-major, members back to back), element by element.
void relayout(const FftShape& s, bool input, uint8_t* strided, uint8_t* dense, bool to_dense) {
    const FftShape::Layout& l = input ? s.in : s.out;
    const uint64_t bytes = s.side_element_bytes(input);
    uint64_t size[3] = {1, 1, 1}, members = 1;
    for (uint32_t d = 0; d < s.rank; ++d) size[d] = s.side_size(input, d), members *= size[d];
    uint64_t i = 0;
    for (uint64_t b = 0; b < s.batch; ++b)
        for (uint64_t x = 0; x < members; ++x, ++i) {
            uint64_t rest = x, at = 0, scale = 1;
            for (uint32_t d = s.rank; d-- > 0;) { // the last dimension varies fastest
                at += (rest % size[d]) * scale;
                rest /= size[d];
                scale *= l.embed[d];
            }
            uint8_t* e = strided + (b * l.dist + at * l.stride) * bytes;
            if (to_dense) std::memcpy(dense + i * bytes, e, bytes);
            else std::memcpy(e, dense + i * bytes, bytes);
        }
}
} // namespace

Status HostFft::plan(const FftShape& shape, bool, BackendFft* out, uint64_t* work) {
    uint64_t dims = 0;
    for (uint32_t i = 0; i < shape.rank; ++i) dims += shape.n[i];
    if (shape.batch * shape.elements() * dims > kMaxSteps) return VGPU_ERROR_NOT_SUPPORTED; // too slow here
    *out = next_++;
    *work = 0;
    live_.insert(*out);
    return VGPU_SUCCESS;
}

Status HostFft::exec(BackendFft p, const FftShape& shape, uint64_t in, uint64_t out, int direction) {
    if (!live_.count(p)) return VGPU_ERROR_INVALID_HANDLE;
    const uint8_t* src = mem_.translate(in, shape.input_bytes());
    uint8_t* dst = mem_.translate(out, shape.output_bytes());
    if (!src || !dst) return VGPU_ERROR_INVALID_VALUE; // the device model checked them: a bug if so
    if (!shape.advanced) {
        if (shape.double_precision()) run<double>(shape, src, dst, direction);
        else run<float>(shape, src, dst, direction);
        return VGPU_SUCCESS;
    }
    FftShape dense = shape;
    dense.advanced = false;
    std::vector<uint8_t> a(dense.input_bytes()), b(dense.output_bytes());
    relayout(shape, true, const_cast<uint8_t*>(src), a.data(), true);
    if (shape.double_precision()) run<double>(dense, a.data(), b.data(), direction);
    else run<float>(dense, a.data(), b.data(), direction);
    relayout(shape, false, dst, b.data(), false);
    return VGPU_SUCCESS;
}

} // namespace kvmgpu::vgpu
