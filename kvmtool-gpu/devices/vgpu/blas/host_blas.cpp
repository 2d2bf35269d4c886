#include "kvmtool-gpu/devices/vgpu/blas/host_blas.h"

#include <cmath>
#include <complex>
#include <cstring>

#include "kvmtool-gpu/abi/blas_extent.h"
#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::vgpu {

namespace {
constexpr uint32_t kOpN = 0, kOpC = 2, kLower = 0, kUnit = 1, kLeft = 0;

template <class T> struct RealOf { using type = T; };
template <class T> struct RealOf<std::complex<T>> { using type = T; };
template <class T> using Real = typename RealOf<T>::type;
template <class T> T conj_of(T v) { return v; }
template <class T> std::complex<T> conj_of(std::complex<T> v) { return std::conj(v); }
template <class T> double abs1(T v) { return std::fabs(static_cast<double>(v)); }
template <class T> double abs1(std::complex<T> v) { return std::fabs(double(v.real())) + std::fabs(double(v.imag())); }
template <class T> double abs2(T v) { return double(v) * double(v); }
template <class T> double abs2(std::complex<T> v) { return std::norm(std::complex<double>(v)); }

// Runs f(T{}) with the C++ type of a cuBLAS element type (S, D, C, Z).
template <class F>
Status with_type(uint32_t type, F&& f) {
    switch (type) {
    case VGPU_BLAS_R_32F: return f(float{});
    case VGPU_BLAS_R_64F: return f(double{});
    case VGPU_BLAS_C_32F: return f(std::complex<float>{});
    case VGPU_BLAS_C_64F: return f(std::complex<double>{});
    default: return VGPU_ERROR_NOT_SUPPORTED;
    }
}

// A device vector (elements `inc` apart; cuBLAS walks a negative increment backwards).
template <class T>
struct Vec {
    T* p = nullptr;
    int64_t n = 0, inc = 1;
    T& operator[](int64_t i) const { return inc >= 0 ? p[i * inc] : p[(n - 1 - i) * -inc]; }
};
// A column-major device matrix, and op(A) of it.
template <class T>
struct Mat {
    T* p = nullptr;
    int64_t ld = 1;
    uint32_t op = kOpN;
    T& at(int64_t i, int64_t j) const { return p[i + j * ld]; }
    T opv(int64_t i, int64_t j) const { return op == kOpN ? at(i, j) : op == kOpC ? conj_of(at(j, i)) : at(j, i); }
};

// Host views of the checked operands; `ok` false if any is not the VM's
// (the device model checked them: a bug if it happens).
class Views {
public:
    explicit Views(const DeviceAddressSpace& m) : mem_(m) {}
    bool ok = true;
    template <class T>
    Vec<T> vec(const vgpu_blas_vector& v, int64_t n) {
        Vec<T> out{nullptr, n, v.inc};
        if (n <= 0) return out;
        const auto bytes = blas_vector_span(n, v.inc, sizeof(T), true);
        out.p = bytes ? reinterpret_cast<T*>(mem_.translate(v.ptr, *bytes)) : nullptr;
        ok = ok && out.p;
        return out;
    }
    template <class T>
    Mat<T> mat(uint64_t ptr, int64_t ld, int64_t rows, int64_t cols, uint32_t op = kOpN) {
        Mat<T> out{nullptr, ld, op};
        if (rows <= 0 || cols <= 0) return out;
        const auto bytes = blas_matrix_span(rows, cols, ld, sizeof(T));
        out.p = bytes ? reinterpret_cast<T*>(mem_.translate(ptr, *bytes)) : nullptr;
        ok = ok && out.p;
        return out;
    }
    // A scalar: the value in the call (host mode) or at its device address.
    template <class T>
    T scalar(const vgpu_blas_head& h, const vgpu_blas_scalar& s) {
        T v{};
        if (!(h.flags & VGPU_BLAS_DEVICE_SCALARS)) {
            std::memcpy(&v, s.bytes, sizeof(T));
        } else if (const uint8_t* p = mem_.translate(s.dptr, sizeof(T))) {
            std::memcpy(&v, p, sizeof(T));
        } else {
            ok = false;
        }
        return v;
    }
    // A level-1 result: into the completion (host mode) or at `result`.
    template <class V>
    void result(const vgpu_blas_level1& c, V v, BlasResult* host) {
        static_assert(sizeof(V) <= sizeof host->bits);
        if (!(c.head.flags & VGPU_BLAS_DEVICE_SCALARS)) std::memcpy(host->bits, &v, sizeof v);
        else if (uint8_t* p = mem_.translate(c.result, sizeof v)) std::memcpy(p, &v, sizeof v);
        else ok = false;
    }

private:
    const DeviceAddressSpace& mem_;
};

Status finish(const Views& v) { return v.ok ? VGPU_SUCCESS : VGPU_ERROR_INVALID_VALUE; }

// Solves op(A) x = b in place for an n x n triangle, through eff(i, j) = op(A)(i, j).
template <class T, class Eff, class X>
void tri_solve(int64_t n, bool lower, bool unit, Eff eff, X x) {
    for (int64_t s = 0; s < n; ++s) {
        const int64_t i = lower ? s : n - 1 - s;
        T v = x(i);
        for (int64_t t = 0; t < s; ++t) {
            const int64_t j = lower ? t : n - 1 - t;
            v -= eff(i, j) * x(j);
        }
        x(i) = unit ? v : v / eff(i, i);
    }
}

template <class T>
Status level1_of(Views& v, const vgpu_blas_level1& c, BlasResult* r) {
    const int64_t n = std::max<int64_t>(c.n, 0);
    Vec<T> x = v.vec<T>(c.x, n);
    switch (c.head.routine) {
    case VGPU_BLAS_AXPY: {
        const T a = v.scalar<T>(c.head, c.alpha);
        Vec<T> y = v.vec<T>(c.y, n);
        if (v.ok) for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
        break;
    }
    case VGPU_BLAS_SCAL: {
        const T a = v.scalar<T>(c.head, c.alpha);
        if (v.ok) for (int64_t i = 0; i < n; ++i) x[i] *= a;
        break;
    }
    case VGPU_BLAS_DOT:
    case VGPU_BLAS_DOTC: {
        Vec<T> y = v.vec<T>(c.y, n);
        T sum{};
        if (v.ok) for (int64_t i = 0; i < n; ++i) sum += (c.head.routine == VGPU_BLAS_DOTC ? conj_of(x[i]) : x[i]) * y[i];
        v.result(c, sum, r);
        break;
    }
    case VGPU_BLAS_NRM2:
    case VGPU_BLAS_ASUM: {
        double sum = 0;
        if (v.ok) for (int64_t i = 0; i < n; ++i) sum += c.head.routine == VGPU_BLAS_NRM2 ? abs2(x[i]) : abs1(x[i]);
        v.result(c, static_cast<Real<T>>(c.head.routine == VGPU_BLAS_NRM2 ? std::sqrt(sum) : sum), r);
        break;
    }
    case VGPU_BLAS_IAMAX:
    case VGPU_BLAS_IAMIN: {
        int32_t best = 0; // 1-based; 0 for n <= 0
        if (v.ok)
            for (int64_t i = 0; i < n; ++i) {
                const bool better = best == 0 || (c.head.routine == VGPU_BLAS_IAMAX ? abs1(x[i]) > abs1(x[best - 1])
                                                                                   : abs1(x[i]) < abs1(x[best - 1]));
                if (better) best = static_cast<int32_t>(i + 1);
            }
        v.result(c, best, r);
        break;
    }
    case VGPU_BLAS_COPY:
    case VGPU_BLAS_SWAP: {
        Vec<T> y = v.vec<T>(c.y, n);
        if (v.ok)
            for (int64_t i = 0; i < n; ++i) {
                if (c.head.routine == VGPU_BLAS_COPY) y[i] = x[i];
                else std::swap(x[i], y[i]);
            }
        break;
    }
    default: return VGPU_ERROR_INVALID_VALUE;
    }
    return finish(v);
}

template <class T>
Status level2_of(Views& v, const vgpu_blas_level2& c) {
    const int64_t m = c.m, n = c.n;
    switch (c.head.routine) {
    case VGPU_BLAS_GEMV: {
        const int64_t rows = c.trans == kOpN ? m : n, cols = c.trans == kOpN ? n : m;
        const T alpha = v.scalar<T>(c.head, c.alpha), beta = v.scalar<T>(c.head, c.beta);
        Mat<T> a = v.mat<T>(c.a.ptr, c.a.ld, m, n, c.trans);
        Vec<T> x = v.vec<T>(c.x, cols), y = v.vec<T>(c.y, rows);
        if (!v.ok) break;
        for (int64_t i = 0; i < rows; ++i) {
            T sum{};
            for (int64_t j = 0; j < cols; ++j) sum += a.opv(i, j) * x[j];
            y[i] = alpha * sum + (beta == T{} ? T{} : beta * y[i]);
        }
        break;
    }
    case VGPU_BLAS_GER:
    case VGPU_BLAS_GERC: {
        const T alpha = v.scalar<T>(c.head, c.alpha);
        Mat<T> a = v.mat<T>(c.a.ptr, c.a.ld, m, n);
        Vec<T> x = v.vec<T>(c.x, m), y = v.vec<T>(c.y, n);
        if (!v.ok) break;
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i)
                a.at(i, j) += alpha * x[i] * (c.head.routine == VGPU_BLAS_GERC ? conj_of(y[j]) : y[j]);
        break;
    }
    case VGPU_BLAS_TRSV: {
        Mat<T> a = v.mat<T>(c.a.ptr, c.a.ld, n, n, c.trans);
        Vec<T> x = v.vec<T>(c.x, n);
        if (!v.ok || n == 0) break;
        const bool lower = (c.uplo == kLower) == (c.trans == kOpN); // op(A)'s triangle
        tri_solve<T>(n, lower, c.diag == kUnit, [&](int64_t i, int64_t j) { return a.opv(i, j); },
                     [&](int64_t i) -> T& { return x[i]; });
        break;
    }
    default: return VGPU_ERROR_INVALID_VALUE;
    }
    return finish(v);
}

template <class T>
Status gemm_of(Views& v, const vgpu_blas_gemm& c, const BlasPointers& ptrs) {
    const int64_t m = c.m, n = c.n, k = c.k;
    const T alpha = v.scalar<T>(c.head, c.alpha), beta = v.scalar<T>(c.head, c.beta);
    const bool na = c.transa == kOpN, nb = c.transb == kOpN;
    for (int64_t b = 0; b < c.batch && v.ok; ++b) {
        uint64_t pa = c.a.ptr, pb = c.b.ptr, pc = c.c.ptr;
        if (c.form == VGPU_BLAS_GEMM_STRIDED) {
            pa += static_cast<uint64_t>(b * c.a.stride) * sizeof(T);
            pb += static_cast<uint64_t>(b * c.b.stride) * sizeof(T);
            pc += static_cast<uint64_t>(b * c.c.stride) * sizeof(T);
        } else if (c.form == VGPU_BLAS_GEMM_POINTERS) {
            pa = ptrs.a.empty() ? 0 : ptrs.a[b], pb = ptrs.b.empty() ? 0 : ptrs.b[b], pc = ptrs.c.empty() ? 0 : ptrs.c[b];
        }
        const bool reads_ab = k > 0;
        Mat<T> a = reads_ab ? v.mat<T>(pa, c.a.ld, na ? m : k, na ? k : m, c.transa) : Mat<T>{};
        Mat<T> bm = reads_ab ? v.mat<T>(pb, c.b.ld, nb ? k : n, nb ? n : k, c.transb) : Mat<T>{};
        Mat<T> cm = v.mat<T>(pc, c.c.ld, m, n);
        if (!v.ok) break;
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i) {
                T sum{};
                for (int64_t l = 0; l < k; ++l) sum += a.opv(i, l) * bm.opv(l, j);
                cm.at(i, j) = alpha * sum + (beta == T{} ? T{} : beta * cm.at(i, j));
            }
    }
    return finish(v);
}

template <class T>
Status level3_of(Views& v, const vgpu_blas_level3& c) {
    const int64_t m = c.m, n = c.n, k = c.k;
    const T alpha = v.scalar<T>(c.head, c.alpha);
    switch (c.head.routine) {
    case VGPU_BLAS_TRSM: {
        const bool left = c.side == kLeft;
        const int64_t an = left ? m : n;
        Mat<T> a = v.mat<T>(c.a.ptr, c.a.ld, an, an, c.transa);
        Mat<T> b = v.mat<T>(c.b.ptr, c.b.ld, m, n);
        if (!v.ok || m == 0 || n == 0) break;
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i) b.at(i, j) *= alpha;
        const bool lower = (c.uplo == kLower) == (c.transa == kOpN); // op(A)'s triangle
        if (left) { // op(A) X = B, column by column
            for (int64_t j = 0; j < n; ++j)
                tri_solve<T>(m, lower, c.diag == kUnit, [&](int64_t p, int64_t q) { return a.opv(p, q); },
                             [&](int64_t i) -> T& { return b.at(i, j); });
        } else { // X op(A) = B: op(A)^T x = b for each row
            for (int64_t i = 0; i < m; ++i)
                tri_solve<T>(n, !lower, c.diag == kUnit, [&](int64_t p, int64_t q) { return a.opv(q, p); },
                             [&](int64_t j) -> T& { return b.at(i, j); });
        }
        break;
    }
    case VGPU_BLAS_SYRK: {
        const T beta = v.scalar<T>(c.head, c.beta);
        const bool nt = c.transa == kOpN;
        Mat<T> a = v.mat<T>(c.a.ptr, c.a.ld, nt ? n : k, nt ? k : n, c.transa);
        Mat<T> cm = v.mat<T>(c.c.ptr, c.c.ld, n, n);
        if (!v.ok) break;
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = c.uplo == kLower ? j : 0; i < (c.uplo == kLower ? n : j + 1); ++i) {
                T sum{};
                for (int64_t l = 0; l < k; ++l) sum += a.opv(i, l) * a.opv(j, l);
                cm.at(i, j) = alpha * sum + (beta == T{} ? T{} : beta * cm.at(i, j));
            }
        break;
    }
    case VGPU_BLAS_GEAM: {
        const T beta = v.scalar<T>(c.head, c.beta);
        const bool na = c.transa == kOpN, nb = c.transb == kOpN;
        Mat<T> a = v.mat<T>(c.a.ptr, c.a.ld, na ? m : n, na ? n : m, c.transa);
        const bool reads_b = (c.head.flags & VGPU_BLAS_DEVICE_SCALARS) || beta != T{} || c.b.ptr != 0;
        Mat<T> b = reads_b ? v.mat<T>(c.b.ptr, c.b.ld, nb ? m : n, nb ? n : m, c.transb) : Mat<T>{};
        Mat<T> cm = v.mat<T>(c.c.ptr, c.c.ld, m, n);
        if (!v.ok) break;
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i) cm.at(i, j) = alpha * a.opv(i, j) + (reads_b ? beta * b.opv(i, j) : T{});
        break;
    }
    default: return VGPU_ERROR_INVALID_VALUE;
    }
    return finish(v);
}

// GEMM_EX's compute type that matches an S, D, C or Z type (the only ones here).
bool compute_matches(uint32_t type, uint32_t compute) {
    const bool single = type == VGPU_BLAS_R_32F || type == VGPU_BLAS_C_32F;
    return single ? compute == VGPU_BLAS_COMPUTE_32F || compute == VGPU_BLAS_COMPUTE_32F_PEDANTIC
                  : compute == VGPU_BLAS_COMPUTE_64F || compute == VGPU_BLAS_COMPUTE_64F_PEDANTIC;
}
} // namespace

Status HostBlas::unsupported(const char* what) {
    if (!unsupported_logged_) log_warn("host BLAS: %s has no CPU reference (NOT_SUPPORTED; a GPU runs it)", what);
    unsupported_logged_ = true;
    return VGPU_ERROR_NOT_SUPPORTED;
}

Status HostBlas::create(BackendBlas* out) {
    *out = next_++;
    handles_[*out] = 0;
    return VGPU_SUCCESS;
}

Status HostBlas::destroy(BackendBlas h) { return handles_.erase(h) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE; }

Status HostBlas::set_stream(BackendBlas h, BackendStream) {
    return handles_.count(h) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE;
}

Status HostBlas::set_math_mode(BackendBlas h, uint32_t mode) {
    const auto it = handles_.find(h);
    if (it == handles_.end()) return VGPU_ERROR_INVALID_HANDLE;
    it->second = mode;
    return VGPU_SUCCESS;
}

Status HostBlas::set_workspace(BackendBlas h, uint64_t, uint64_t) {
    return handles_.count(h) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE; // the reference needs none
}

Status HostBlas::level1(BackendBlas h, const vgpu_blas_level1& c, BlasResult* r) {
    if (!handles_.count(h)) return VGPU_ERROR_INVALID_HANDLE;
    Views v(mem_);
    return with_type(c.type, [&](auto t) { return level1_of<decltype(t)>(v, c, r); });
}

Status HostBlas::level2(BackendBlas h, const vgpu_blas_level2& c) {
    if (!handles_.count(h)) return VGPU_ERROR_INVALID_HANDLE;
    Views v(mem_);
    return with_type(c.type, [&](auto t) { return level2_of<decltype(t)>(v, c); });
}

Status HostBlas::gemm(BackendBlas h, const vgpu_blas_gemm& c, const BlasPointers& pointers) {
    if (!handles_.count(h)) return VGPU_ERROR_INVALID_HANDLE;
    if (c.atype != c.ctype || c.btype != c.ctype) return unsupported("a gemm of mixed types");
    if (c.head.routine == VGPU_BLAS_GEMM_EX && !compute_matches(c.ctype, c.compute))
        return unsupported("a gemmEx whose compute type is not its element type's");
    if (c.ctype == VGPU_BLAS_R_16F || c.ctype == VGPU_BLAS_R_16BF) return unsupported("a half or bfloat16 gemm");
    Views v(mem_);
    return with_type(c.ctype, [&](auto t) { return gemm_of<decltype(t)>(v, c, pointers); });
}

Status HostBlas::level3(BackendBlas h, const vgpu_blas_level3& c) {
    if (!handles_.count(h)) return VGPU_ERROR_INVALID_HANDLE;
    Views v(mem_);
    return with_type(c.type, [&](auto t) { return level3_of<decltype(t)>(v, c); });
}

} // namespace kvmgpu::vgpu
