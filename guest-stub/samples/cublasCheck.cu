// cuBLAS through the vGPU, checked against a CPU reference: handles and
// modes, strided Set/Get copies, level 1 (S, D; device pointer mode),
// level 2 (gemv, ger, trsv), gemm in S, D, Z and as GemmEx, its strided
// and pointer-array batches, trsm, syrk, geam, and cuBLAS's own refusals.
// The same source runs natively. With the word `expect-refusal` it also
// checks what only the vGPU refuses: a gemm reaching past its allocation,
// and a batched gemm whose device pointer array names memory that is not
// the VM's, each reported at the next synchronization.
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cublas_v2.h>

#include "guest-stub/samples/check_cuda.h"

namespace {

int failures = 0, checks = 0;

void expect(bool ok, const char* what)
{
    ++checks;
    if (!ok) {
        ++failures;
        fprintf(stderr, "cublasCheck: FAILED: %s\n", what);
    }
}

#define CUBLAS(call)                                                                                          \
    do {                                                                                                      \
        cublasStatus_t st_ = (call);                                                                          \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                                   \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cublasGetStatusName(st_));  \
            exit(EXIT_FAILURE);                                                                               \
        }                                                                                                     \
    } while (0)

unsigned seed = 12345;
double next_value() // deterministic, in [-1, 1)
{
    seed = seed * 1103515245u + 12345u;
    return ((seed >> 8) & 0xffff) / 32768.0 - 1.0;
}
template <class T>
std::vector<T> random_vector(size_t n)
{
    std::vector<T> v(n);
    for (T& x : v)
        x = static_cast<T>(next_value());
    return v;
}

template <class T>
T* to_device(const std::vector<T>& h)
{
    T* d = nullptr;
    CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
    CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}
template <class T>
std::vector<T> to_host(const T* d, size_t n)
{
    std::vector<T> h(n);
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

template <class T>
bool close(const std::vector<T>& a, const std::vector<T>& b, double tol)
{
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::abs(a[i] - b[i]) > tol * (1.0 + std::abs(b[i])))
            return false;
    return true;
}

// C = alpha op(A) op(B) + beta C, m x n, the CPU reference.
template <class T>
void ref_gemm(bool ta, bool tb, int m, int n, int k, T alpha, const std::vector<T>& A, int lda,
              const std::vector<T>& B, int ldb, T beta, std::vector<T>& C, int ldc, size_t a0 = 0, size_t b0 = 0,
              size_t c0 = 0)
{
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            T s = 0;
            for (int l = 0; l < k; ++l)
                s += (ta ? A[a0 + l + size_t(i) * lda] : A[a0 + i + size_t(l) * lda]) *
                     (tb ? B[b0 + j + size_t(l) * ldb] : B[b0 + l + size_t(j) * ldb]);
            C[c0 + i + size_t(j) * ldc] = alpha * s + beta * C[c0 + i + size_t(j) * ldc];
        }
}

void handles_and_modes(cublasHandle_t h, cudaStream_t stream)
{
    CUBLAS(cublasSetStream(h, stream));
    cudaStream_t got = nullptr;
    CUBLAS(cublasGetStream(h, &got));
    expect(got == stream, "cublasGetStream returns the stream set");
    cublasPointerMode_t pm;
    CUBLAS(cublasGetPointerMode(h, &pm));
    expect(pm == CUBLAS_POINTER_MODE_HOST, "pointer mode starts as host");
    CUBLAS(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
    cublasMath_t mm;
    CUBLAS(cublasGetMathMode(h, &mm));
    expect(mm == CUBLAS_PEDANTIC_MATH, "math mode reads back");
    CUBLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    int version = 0;
    CUBLAS(cublasGetVersion(h, &version));
    expect(version >= 10000, "cublasGetVersion gives a version");
    expect(strcmp(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE") == 0, "status name");
}

void copies()
{
    // A 5 x 4 block of a host matrix with leading dimension 7, into a device one with 6.
    std::vector<float> host = random_vector<float>(7 * 4), back(9 * 4, 0.f);
    float* d = nullptr;
    CHECK(cudaMalloc(&d, 6 * 4 * sizeof(float)));
    CUBLAS(cublasSetMatrix(5, 4, sizeof(float), host.data(), 7, d, 6));
    CUBLAS(cublasGetMatrix(5, 4, sizeof(float), d, 6, back.data(), 9));
    bool same = true;
    for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 5; ++i)
            same = same && back[i + j * 9] == host[i + j * 7];
    expect(same, "Set/GetMatrix with leading dimensions 7, 6, 9");
    // Every second host element to the device, then every third device element back.
    std::vector<double> hv = random_vector<double>(20), out(30, 0.0);
    double* dv = nullptr;
    CHECK(cudaMalloc(&dv, 30 * sizeof(double)));
    CHECK(cudaMemset(dv, 0, 30 * sizeof(double)));
    CUBLAS(cublasSetVector(10, sizeof(double), hv.data(), 2, dv, 3));
    CUBLAS(cublasGetVector(10, sizeof(double), dv, 3, out.data(), 3));
    same = true;
    for (int i = 0; i < 10; ++i)
        same = same && out[3 * i] == hv[2 * i];
    expect(same, "Set/GetVector with increments 2 and 3");
    // Not a parameter cuBLAS checks (it refuses only lda, ldb <= 0): the
    // copy under it refuses a pitch below the width (H100, NVIDIA's libcublas 13.1).
    const cublasStatus_t narrow = cublasSetMatrix(5, 4, sizeof(float), host.data(), 4, d, 6);
    expect(narrow == CUBLAS_STATUS_MAPPING_ERROR, "SetMatrix with lda < rows fails in its copy (MAPPING_ERROR)");
    expect(cublasSetMatrix(5, 4, sizeof(float), host.data(), 0, d, 6) == CUBLAS_STATUS_INVALID_VALUE,
           "SetMatrix with lda 0 is refused");
    CHECK(cudaFree(d));
    CHECK(cudaFree(dv));
}

void level1(cublasHandle_t h)
{
    const int n = 300;
    std::vector<float> x = random_vector<float>(n), y = random_vector<float>(n);
    float *dx = to_device(x), *dy = to_device(y);
    const float alpha = 0.75f;
    CUBLAS(cublasSaxpy(h, n, &alpha, dx, 1, dy, 1));
    std::vector<float> want = y;
    for (int i = 0; i < n; ++i)
        want[i] += alpha * x[i];
    expect(close(to_host(dy, n), want, 1e-6), "saxpy");
    float dot = 0, nrm = 0, asum = 0;
    CUBLAS(cublasSdot(h, n, dx, 1, dy, 1, &dot));
    CUBLAS(cublasSnrm2(h, n, dx, 1, &nrm));
    CUBLAS(cublasSasum(h, n, dx, 1, &asum));
    double rdot = 0, rnrm = 0, rasum = 0;
    int rmax = 0, rmin = 0;
    for (int i = 0; i < n; ++i) {
        rdot += double(x[i]) * want[i], rnrm += double(x[i]) * x[i], rasum += std::fabs(x[i]);
        if (std::fabs(x[i]) > std::fabs(x[rmax])) rmax = i;
        if (std::fabs(x[i]) < std::fabs(x[rmin])) rmin = i;
    }
    // float sums of 300 terms against double ones: a few float ulps of the sum
    expect(std::fabs(dot - rdot) < 1e-4 * (1 + std::fabs(rdot)), "sdot");
    expect(std::fabs(nrm - std::sqrt(rnrm)) < 1e-4 * (1 + std::sqrt(rnrm)), "snrm2");
    expect(std::fabs(asum - rasum) < 1e-4 * (1 + rasum), "sasum");
    int imax = 0, imin = 0;
    CUBLAS(cublasIsamax(h, n, dx, 1, &imax));
    CUBLAS(cublasIsamin(h, n, dx, 1, &imin));
    expect(imax == rmax + 1 && imin == rmin + 1, "isamax, isamin (1-based)");
    const float two = 2.f;
    CUBLAS(cublasSscal(h, n / 2, &two, dx, 2)); // every second element
    std::vector<float> scaled = x;
    for (int i = 0; i < n / 2; ++i)
        scaled[2 * i] *= 2.f;
    expect(close(to_host(dx, n), scaled, 0), "sscal, increment 2");
    CUBLAS(cublasSswap(h, n, dx, 1, dy, 1));
    expect(close(to_host(dy, n), scaled, 0) && close(to_host(dx, n), want, 0), "sswap");
    CUBLAS(cublasScopy(h, n, dy, 1, dx, 1));
    expect(close(to_host(dx, n), scaled, 0), "scopy");
    // ddot in device pointer mode: the result stays in device memory.
    std::vector<double> a = random_vector<double>(n), b = random_vector<double>(n);
    double *da = to_device(a), *db = to_device(b), *dres = nullptr;
    CHECK(cudaMalloc(&dres, sizeof(double)));
    CUBLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
    CUBLAS(cublasDdot(h, n, da, 1, db, -1, dres)); // b walked backwards
    CUBLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    double rd = 0;
    for (int i = 0; i < n; ++i)
        rd += a[i] * b[n - 1 - i];
    expect(std::fabs(to_host(dres, 1)[0] - rd) < 1e-9, "ddot, device pointer mode, incy -1");
    for (void* p : {(void*)dx, (void*)dy, (void*)da, (void*)db, (void*)dres})
        CHECK(cudaFree(p));
}

void level2(cublasHandle_t h)
{
    const int m = 23, n = 17, lda = 25;
    std::vector<float> A = random_vector<float>(lda * n), x = random_vector<float>(m), y = random_vector<float>(n);
    float *dA = to_device(A), *dx = to_device(x), *dy = to_device(y);
    const float alpha = 1.5f, beta = -0.5f;
    CUBLAS(cublasSgemv(h, CUBLAS_OP_T, m, n, &alpha, dA, lda, dx, 1, &beta, dy, 1)); // y = a A^T x + b y
    std::vector<float> want = y;
    for (int j = 0; j < n; ++j) {
        float s = 0;
        for (int i = 0; i < m; ++i)
            s += A[i + j * lda] * x[i];
        want[j] = alpha * s + beta * y[j];
    }
    expect(close(to_host(dy, n), want, 1e-5), "sgemv (transposed)");
    CUBLAS(cublasSger(h, m, n, &alpha, dx, 1, dy, 1, dA, lda));
    std::vector<float> wantA = A;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i)
            wantA[i + j * lda] += alpha * x[i] * want[j];
    expect(close(to_host(dA, lda * n), wantA, 1e-5), "sger");
    // A lower triangle with a strong diagonal: solve L z = x.
    const int t = 12;
    std::vector<double> L(t * t, 0.0), b = random_vector<double>(t);
    for (int j = 0; j < t; ++j)
        for (int i = j; i < t; ++i)
            L[i + j * t] = i == j ? 4.0 + j : next_value();
    double *dL = to_device(L), *db = to_device(b);
    CUBLAS(cublasDtrsv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, t, dL, t, db, 1));
    std::vector<double> z = to_host(db, t), back(t, 0.0);
    for (int i = 0; i < t; ++i)
        for (int j = 0; j <= i; ++j)
            back[i] += L[i + j * t] * z[j];
    expect(close(back, b, 1e-10), "dtrsv (L z = b)");
    for (void* p : {(void*)dA, (void*)dx, (void*)dy, (void*)dL, (void*)db})
        CHECK(cudaFree(p));
}

template <class T>
void gemm_case(cublasHandle_t h, bool ta, bool tb, const char* what)
{
    const int m = 37, n = 29, k = 41;
    const int lda = (ta ? k : m) + 3, ldb = (tb ? n : k) + 1, ldc = m + 2;
    std::vector<T> A = random_vector<T>(size_t(lda) * (ta ? m : k)), B = random_vector<T>(size_t(ldb) * (tb ? k : n));
    std::vector<T> C = random_vector<T>(size_t(ldc) * n);
    T *dA = to_device(A), *dB = to_device(B), *dC = to_device(C);
    const T alpha = T(0.5), beta = T(2);
    const cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    if constexpr (sizeof(T) == 4)
        CUBLAS(cublasSgemm(h, oa, ob, m, n, k, &alpha, dA, lda, dB, ldb, &beta, dC, ldc));
    else
        CUBLAS(cublasDgemm(h, oa, ob, m, n, k, &alpha, dA, lda, dB, ldb, &beta, dC, ldc));
    ref_gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    expect(close(to_host(dC, C.size()), C, sizeof(T) == 4 ? 1e-4 : 1e-12), what);
    for (void* p : {(void*)dA, (void*)dB, (void*)dC})
        CHECK(cudaFree(p));
}

void gemm_variants(cublasHandle_t h)
{
    gemm_case<float>(h, false, false, "sgemm NN");
    gemm_case<float>(h, true, false, "sgemm TN");
    gemm_case<double>(h, false, true, "dgemm NT");
    // zgemm, 6 x 5 x 4.
    using Z = std::complex<double>;
    const int m = 6, n = 5, k = 4;
    std::vector<Z> A(m * k), B(k * n), C(m * n);
    for (Z& v : A) v = Z(next_value(), next_value());
    for (Z& v : B) v = Z(next_value(), next_value());
    for (Z& v : C) v = Z(next_value(), next_value());
    Z *dA = to_device(A), *dB = to_device(B), *dC = to_device(C);
    const Z alpha(1, 0.5), beta(0.25, -1);
    CUBLAS(cublasZgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, reinterpret_cast<const cuDoubleComplex*>(&alpha),
                       reinterpret_cast<cuDoubleComplex*>(dA), m, reinterpret_cast<cuDoubleComplex*>(dB), k,
                       reinterpret_cast<const cuDoubleComplex*>(&beta), reinterpret_cast<cuDoubleComplex*>(dC), m));
    ref_gemm(false, false, m, n, k, alpha, A, m, B, k, beta, C, m);
    expect(close(to_host(dC, C.size()), C, 1e-12), "zgemm");
    for (void* p : {(void*)dA, (void*)dB, (void*)dC})
        CHECK(cudaFree(p));

    // GemmEx (fp32, fp32 compute), strided batches and pointer-array batches of 3.
    const int s = 16, batch = 3;
    std::vector<float> Ab = random_vector<float>(s * s * batch), Bb = random_vector<float>(s * s * batch);
    std::vector<float> Cb(s * s * batch, 0.f);
    float *dAb = to_device(Ab), *dBb = to_device(Bb), *dCb = to_device(Cb);
    const float one = 1.f, zero = 0.f;
    CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, &one, dAb, CUDA_R_32F, s, dBb, CUDA_R_32F, s, &zero, dCb,
                        CUDA_R_32F, s, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    std::vector<float> want(s * s * batch, 0.f);
    ref_gemm(false, false, s, s, s, 1.f, Ab, s, Bb, s, 0.f, want, s);
    std::vector<float> got = to_host(dCb, s * s);
    expect(close(got, std::vector<float>(want.begin(), want.begin() + s * s), 1e-4), "GemmEx fp32");
    CUBLAS(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, s, s, s, &one, dAb, s, s * s, dBb, s, s * s, &zero,
                                     dCb, s, s * s, batch));
    for (int b = 0; b < batch; ++b)
        ref_gemm(false, true, s, s, s, 1.f, Ab, s, Bb, s, 0.f, want, s, b * s * s, b * s * s, b * s * s);
    expect(close(to_host(dCb, s * s * batch), want, 1e-4), "sgemmStridedBatched (NT), 3");
    // Pointer arrays in device memory: C[b] = A[b] B[batch - 1 - b].
    std::vector<const float*> pa, pb;
    std::vector<float*> pc;
    for (int b = 0; b < batch; ++b)
        pa.push_back(dAb + b * s * s), pb.push_back(dBb + (batch - 1 - b) * s * s), pc.push_back(dCb + b * s * s);
    const float **dpa = to_device(pa), **dpb = to_device(pb);
    float** dpc = to_device(pc);
    CUBLAS(cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, &one, dpa, s, dpb, s, &zero, dpc, s, batch));
    for (int b = 0; b < batch; ++b)
        ref_gemm(false, false, s, s, s, 1.f, Ab, s, Bb, s, 0.f, want, s, b * s * s, (batch - 1 - b) * s * s, b * s * s);
    expect(close(to_host(dCb, s * s * batch), want, 1e-4), "sgemmBatched, pointer arrays in device memory");
    for (void* p : {(void*)dAb, (void*)dBb, (void*)dCb, (void*)dpa, (void*)dpb, (void*)dpc})
        CHECK(cudaFree(p));
}

void level3(cublasHandle_t h)
{
    const int m = 10, n = 7;
    // trsm: L X = alpha B, L m x m lower with a strong diagonal.
    std::vector<double> L(m * m, 0.0), B = random_vector<double>(m * n);
    for (int j = 0; j < m; ++j)
        for (int i = j; i < m; ++i)
            L[i + j * m] = i == j ? 3.0 + j : next_value();
    double *dL = to_device(L), *dB = to_device(B);
    const double alpha = 2.0;
    CUBLAS(cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, m, n, &alpha, dL,
                       m, dB, m));
    std::vector<double> X = to_host(dB, m * n), LX(m * n, 0.0), aB = B;
    for (double& v : aB) v *= alpha;
    ref_gemm(false, false, m, n, m, 1.0, L, m, X, m, 0.0, LX, m);
    expect(close(LX, aB, 1e-10), "dtrsm (left, lower)");
    // syrk: C = A A^T + C, upper triangle only.
    const int k = 5;
    std::vector<float> A = random_vector<float>(m * k), C = random_vector<float>(m * m);
    float *dA = to_device(A), *dC = to_device(C);
    const float one = 1.f;
    CUBLAS(cublasSsyrk(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, m, k, &one, dA, m, &one, dC, m));
    std::vector<float> got = to_host(dC, m * m), want = C;
    ref_gemm(false, true, m, m, k, 1.f, A, m, A, m, 1.f, want, m);
    bool ok = true;
    for (int j = 0; j < m; ++j)
        for (int i = 0; i < m; ++i)
            ok = ok && std::fabs(got[i + j * m] - (i <= j ? want[i + j * m] : C[i + j * m])) < 1e-4;
    expect(ok, "ssyrk (upper triangle written, lower kept)");
    // geam: D = 2 A^T + (-1) E, A is k x m.
    std::vector<float> E = random_vector<float>(m * k);
    float *dE = to_device(E), *dD = nullptr;
    CHECK(cudaMalloc(&dD, m * k * sizeof(float)));
    const float two = 2.f, minus = -1.f;
    CUBLAS(cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, k, &two, dA, k, &minus, dE, m, dD, m));
    std::vector<float> wantD(m * k);
    for (int j = 0; j < k; ++j)
        for (int i = 0; i < m; ++i)
            wantD[i + j * m] = 2.f * A[j + i * k] - E[i + j * m];
    expect(close(to_host(dD, m * k), wantD, 1e-6), "sgeam (A transposed)");
    for (void* p : {(void*)dL, (void*)dB, (void*)dA, (void*)dC, (void*)dE, (void*)dD})
        CHECK(cudaFree(p));
}

void refusals(cublasHandle_t h, bool vgpu)
{
    float* d = nullptr;
    CHECK(cudaMalloc(&d, 64 * 64 * sizeof(float)));
    const float one = 1.f;
    expect(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, d, 32, d, 64, &one, d, 64) ==
               CUBLAS_STATUS_INVALID_VALUE,
           "sgemm with lda < m is refused at the call");
    expect(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 64, 64, &one, d, 64, d, 64, &one, d, 64) ==
               CUBLAS_STATUS_INVALID_VALUE,
           "sgemm with m < 0 is refused at the call");
    if (vgpu) {
        // C's last column runs 64 floats past the allocation: the VMM refuses the whole call.
        CUBLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, d, 64, d, 64, &one, d + 64, 64));
        expect(cudaDeviceSynchronize() == cudaErrorInvalidValue, "a gemm past its allocation is refused (next sync)");
        cudaGetLastError();
        // A batched gemm whose device array names an address that is not the VM's.
        std::vector<const float*> ptrs = {d, reinterpret_cast<const float*>(0x10000)};
        const float** dp = to_device(ptrs);
        std::vector<float*> cs = {d, d};
        float** dc = to_device(cs);
        CUBLAS(cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, dp, 8, dp, 8, &one, dc, 8, 2));
        expect(cudaDeviceSynchronize() == cudaErrorInvalidValue, "a batched gemm's foreign pointer is refused");
        cudaGetLastError();
        CHECK(cudaFree(dp));
        CHECK(cudaFree(dc));
    }
    CHECK(cudaFree(d));
}

} // namespace

int main(int argc, char** argv)
{
    const bool vgpu_refusals = argc > 1 && strcmp(argv[1], "expect-refusal") == 0;
    cublasHandle_t h;
    CUBLAS(cublasCreate(&h));
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    handles_and_modes(h, stream);
    copies();
    level1(h);
    level2(h);
    gemm_variants(h);
    level3(h);
    refusals(h, vgpu_refusals);
    CUBLAS(cublasDestroy(h));
    CHECK(cudaStreamDestroy(stream));
    printf("cublasCheck: %d of %d checks passed%s\n", checks - failures, checks,
           vgpu_refusals ? " (with the vGPU's refusals)" : "");
    return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
