// cuFFT through the vGPU, checked against a naive DFT on the CPU: 1-D C2C
// forward and back (batch 3), R2C and C2R (batch 2), 2-D Z2Z, 3-D D2Z and
// Z2D round trip, on a stream of the program's; then the extensible plans:
// cufftPlanMany with an advanced layout (strided, batched) and a batched
// 2-D R2C, cufftCreate + cufftSetAutoAllocation(0) + cufftMakePlan2d with
// the program's work area (cufftGetSize, cufftSetWorkArea), and
// cufftXtMakePlanMany. The same source runs natively. With
// `expect-refusal` also what only the vGPU refuses: an output past its
// allocation, and a work area freed before the exec, each reported at the
// next synchronization.
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cufftXt.h>

#include "guest-stub/samples/check_cuda.h"

namespace {

using Cx = std::complex<double>;
int failures = 0, checks = 0;

void expect(bool ok, const char* what)
{
    ++checks;
    if (!ok) {
        ++failures;
        fprintf(stderr, "cufftCheck: FAILED: %s\n", what);
    }
}

#define CUFFT(call)                                                                           \
    do {                                                                                      \
        cufftResult r_ = (call);                                                              \
        if (r_ != CUFFT_SUCCESS) {                                                            \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, (int)r_);    \
            exit(EXIT_FAILURE);                                                               \
        }                                                                                     \
    } while (0)

unsigned seed = 777;
double next_value()
{
    seed = seed * 1103515245u + 12345u;
    return ((seed >> 8) & 0xffff) / 32768.0 - 1.0;
}

// A naive DFT of a row-major array of `dims` along every dimension from
// `first` on (the ones before are the batch; sign -1: forward).
std::vector<Cx> dft(std::vector<Cx> a, const std::vector<int>& dims, int sign, size_t first = 0)
{
    for (size_t d = first; d < dims.size(); ++d) {
        size_t outer = 1, inner = 1;
        for (size_t i = 0; i < d; ++i) outer *= dims[i];
        for (size_t i = d + 1; i < dims.size(); ++i) inner *= dims[i];
        const int n = dims[d];
        std::vector<Cx> x(n);
        for (size_t o = 0; o < outer; ++o)
            for (size_t i = 0; i < inner; ++i) {
                for (int k = 0; k < n; ++k) x[k] = a[(o * n + k) * inner + i];
                for (int j = 0; j < n; ++j) {
                    Cx s = 0;
                    for (int k = 0; k < n; ++k) s += x[k] * std::polar(1.0, sign * 2 * M_PI * double(j) * k / n);
                    a[(o * n + j) * inner + i] = s;
                }
            }
    }
    return a;
}

bool close(const std::vector<Cx>& got, const std::vector<Cx>& want, double tol)
{
    double scale = 1;
    for (const Cx& w : want) scale = std::max(scale, std::abs(w));
    for (size_t i = 0; i < want.size(); ++i)
        if (std::abs(got[i] - want[i]) > tol * scale)
            return false;
    return true;
}

template <class T>
T* device_copy(const std::vector<T>& h, size_t extra = 0)
{
    T* d = nullptr;
    CHECK(cudaMalloc(&d, (h.size() + extra) * sizeof(T)));
    CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}
template <class T>
std::vector<T> host_copy(const T* d, size_t n)
{
    std::vector<T> h(n);
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

std::vector<Cx> widen(const std::vector<float2>& v)
{
    std::vector<Cx> out;
    for (const float2& c : v) out.emplace_back(c.x, c.y);
    return out;
}

void c2c_1d(cudaStream_t s)
{
    const int n = 16, batch = 3;
    std::vector<float2> x(n * batch);
    std::vector<Cx> wx;
    for (float2& c : x) c = {float(next_value()), float(next_value())}, wx.emplace_back(c.x, c.y);
    float2* d = device_copy(x);
    cufftHandle p;
    CUFFT(cufftPlan1d(&p, n, CUFFT_C2C, batch));
    CUFFT(cufftSetStream(p, s));
    CUFFT(cufftExecC2C(p, d, d, CUFFT_FORWARD)); // in place
    CHECK(cudaStreamSynchronize(s));
    expect(close(widen(host_copy(d, n * batch)), dft(wx, {batch, n}, -1, 1), 1e-5), "1-D C2C forward, batch 3, in place");
    CUFFT(cufftExecC2C(p, d, d, CUFFT_INVERSE));
    CHECK(cudaStreamSynchronize(s));
    std::vector<Cx> scaled = wx;
    for (Cx& c : scaled) c *= n;
    expect(close(widen(host_copy(d, n * batch)), scaled, 1e-5), "1-D C2C inverse: n x (unnormalized)");
    CUFFT(cufftDestroy(p));
    CHECK(cudaFree(d));
}

void r2c_c2r_1d()
{
    const int n = 32, batch = 2, half = n / 2 + 1;
    std::vector<float> x(n * batch);
    std::vector<Cx> wx;
    for (float& v : x) v = float(next_value()), wx.emplace_back(v, 0);
    float* dx = device_copy(x);
    float2* dy = nullptr;
    CHECK(cudaMalloc(&dy, half * batch * sizeof(float2)));
    cufftHandle fwd, back;
    CUFFT(cufftPlan1d(&fwd, n, CUFFT_R2C, batch));
    CUFFT(cufftPlan1d(&back, n, CUFFT_C2R, batch));
    CUFFT(cufftExecR2C(fwd, dx, dy));
    const std::vector<Cx> full = dft(wx, {batch, n}, -1, 1);
    std::vector<Cx> want;
    for (int b = 0; b < batch; ++b)
        for (int k = 0; k < half; ++k) want.push_back(full[b * n + k]);
    expect(close(widen(host_copy(dy, half * batch)), want, 1e-5), "1-D R2C, batch 2: n/2 + 1 of each");
    CUFFT(cufftExecC2R(back, dy, dx));
    std::vector<float> got = host_copy(dx, n * batch);
    bool ok = true;
    for (int i = 0; i < n * batch; ++i) ok = ok && std::fabs(got[i] - n * x[i]) < 1e-4 * n;
    expect(ok, "1-D C2R after R2C: n x");
    CUFFT(cufftDestroy(fwd));
    CUFFT(cufftDestroy(back));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
}

void z2z_2d_and_d2z_3d()
{
    const int nx = 8, ny = 6;
    std::vector<double2> x(nx * ny);
    std::vector<Cx> wx;
    for (double2& c : x) c = {next_value(), next_value()}, wx.emplace_back(c.x, c.y);
    double2* d = device_copy(x);
    cufftHandle p;
    CUFFT(cufftPlan2d(&p, nx, ny, CUFFT_Z2Z));
    CUFFT(cufftExecZ2Z(p, d, d, CUFFT_FORWARD));
    std::vector<Cx> got;
    for (const double2& c : host_copy(d, nx * ny)) got.emplace_back(c.x, c.y);
    expect(close(got, dft(wx, {nx, ny}, -1), 1e-12), "2-D Z2Z forward (8 x 6)");
    CUFFT(cufftDestroy(p));
    CHECK(cudaFree(d));

    const int a = 4, b = 6, c = 8, half = c / 2 + 1;
    std::vector<double> r(a * b * c);
    for (double& v : r) v = next_value();
    double* dr = device_copy(r);
    double2* dz = nullptr;
    CHECK(cudaMalloc(&dz, a * b * half * sizeof(double2)));
    cufftHandle fwd, back;
    CUFFT(cufftPlan3d(&fwd, a, b, c, CUFFT_D2Z));
    CUFFT(cufftPlan3d(&back, a, b, c, CUFFT_Z2D));
    CUFFT(cufftExecD2Z(fwd, dr, dz));
    CUFFT(cufftExecZ2D(back, dz, dr));
    const std::vector<double> round = host_copy(dr, a * b * c);
    bool ok = true;
    for (int i = 0; i < a * b * c; ++i) ok = ok && std::fabs(round[i] - a * b * c * r[i]) < 1e-9 * a * b * c;
    expect(ok, "3-D D2Z then Z2D (4 x 6 x 8): N x");
    CUFFT(cufftDestroy(fwd));
    CUFFT(cufftDestroy(back));
    CHECK(cudaFree(dr));
    CHECK(cudaFree(dz));
}

// 1-D C2C of 8 points, batch 3, read with stride 2 and distance 20, written densely.
void plan_many_strided()
{
    const int n = 8, batch = 3, istride = 2, idist = 20;
    std::vector<float2> x((batch - 1) * idist + (n - 1) * istride + 1, float2{-99.f, -99.f});
    std::vector<Cx> dense;
    for (int b = 0; b < batch; ++b)
        for (int i = 0; i < n; ++i) {
            float2& c = x[b * idist + i * istride];
            c = {float(next_value()), float(next_value())};
            dense.emplace_back(c.x, c.y);
        }
    float2* din = device_copy(x);
    float2* dout = nullptr;
    CHECK(cudaMalloc(&dout, n * batch * sizeof(float2)));
    int dims[1] = {n}, embed[1] = {n};
    cufftHandle p;
    CUFFT(cufftPlanMany(&p, 1, dims, embed, istride, idist, embed, 1, n, CUFFT_C2C, batch));
    CUFFT(cufftExecC2C(p, din, dout, CUFFT_FORWARD));
    expect(close(widen(host_copy(dout, n * batch)), dft(dense, {batch, n}, -1, 1), 1e-5),
           "cufftPlanMany: C2C with stride 2 and distance 20 (advanced layout), batch 3");
    CUFFT(cufftDestroy(p));
    // A batch of 2-D R2C transforms, which the basic API cannot plan.
    const int a = 4, c = 6, half = c / 2 + 1, nb = 2;
    std::vector<float> r(nb * a * c);
    std::vector<Cx> wr;
    for (float& v : r) v = float(next_value()), wr.emplace_back(v, 0);
    float* dr = device_copy(r);
    float2* dz = nullptr;
    CHECK(cudaMalloc(&dz, nb * a * half * sizeof(float2)));
    int dims2[2] = {a, c};
    CUFFT(cufftPlanMany(&p, 2, dims2, nullptr, 1, 0, nullptr, 1, 0, CUFFT_R2C, nb));
    CUFFT(cufftExecR2C(p, dr, dz));
    const std::vector<Cx> full = dft(wr, {nb, a, c}, -1, 1);
    std::vector<Cx> want;
    for (int row = 0; row < nb * a; ++row)
        for (int k = 0; k < half; ++k) want.push_back(full[row * c + k]);
    expect(close(widen(host_copy(dz, nb * a * half)), want, 1e-5), "cufftPlanMany: 2-D R2C (4 x 6), batch 2");
    CUFFT(cufftDestroy(p));
    CHECK(cudaFree(din));
    CHECK(cudaFree(dout));
    CHECK(cudaFree(dr));
    CHECK(cudaFree(dz));
}

// cufftCreate, no automatic work area, cufftMakePlan2d, the program's work
// area; and cufftXtMakePlanMany's single-GPU form (R2C by cudaDataType).
void made_plans()
{
    const int nx = 6, ny = 10;
    std::vector<double2> x(nx * ny);
    std::vector<Cx> wx;
    for (double2& c : x) c = {next_value(), next_value()}, wx.emplace_back(c.x, c.y);
    double2* d = device_copy(x);
    cufftHandle p;
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUFFT(cufftCreate(&p));
    CUFFT(cufftSetStream(p, s)); // before the plan is made: kept for it
    CUFFT(cufftSetAutoAllocation(p, 0));
    size_t work = 0, size = 0;
    CUFFT(cufftMakePlan2d(p, nx, ny, CUFFT_Z2Z, &work));
    CUFFT(cufftGetSize(p, &size));
    expect(size == work, "cufftGetSize: the work size cufftMakePlan2d gave");
    void* area = nullptr;
    CHECK(cudaMalloc(&area, work ? work : 1));
    CUFFT(cufftSetWorkArea(p, area));
    CUFFT(cufftExecZ2Z(p, d, d, CUFFT_INVERSE));
    CHECK(cudaStreamSynchronize(s));
    std::vector<Cx> got;
    for (const double2& c : host_copy(d, nx * ny)) got.emplace_back(c.x, c.y);
    expect(close(got, dft(wx, {nx, ny}, +1), 1e-12),
           "cufftMakePlan2d with the program's work area and a stream set before: Z2Z inverse (6 x 10)");
    CUFFT(cufftDestroy(p));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(area));
    CHECK(cudaFree(d));

    const int n = 24, batch = 2, half = n / 2 + 1;
    std::vector<float> r(n * batch);
    std::vector<Cx> wr;
    for (float& v : r) v = float(next_value()), wr.emplace_back(v, 0);
    float* dr = device_copy(r);
    float2* dz = nullptr;
    CHECK(cudaMalloc(&dz, half * batch * sizeof(float2)));
    long long n64[1] = {n};
    CUFFT(cufftCreate(&p));
    CUFFT(cufftXtMakePlanMany(p, 1, n64, nullptr, 1, n, CUDA_R_32F, nullptr, 1, half, CUDA_C_32F, batch, &work, CUDA_C_32F));
    CUFFT(cufftExecR2C(p, dr, dz));
    const std::vector<Cx> full = dft(wr, {batch, n}, -1, 1);
    std::vector<Cx> want;
    for (int b = 0; b < batch; ++b)
        for (int k = 0; k < half; ++k) want.push_back(full[b * n + k]);
    expect(close(widen(host_copy(dz, half * batch)), want, 1e-5), "cufftXtMakePlanMany: R2C by cudaDataType, batch 2");
    CUFFT(cufftDestroy(p));
    CHECK(cudaFree(dr));
    CHECK(cudaFree(dz));
}

void refusals()
{
    const int n = 64;
    float2* d = nullptr;
    CHECK(cudaMalloc(&d, n * sizeof(float2)));
    cufftHandle p;
    CUFFT(cufftPlan1d(&p, n, CUFFT_C2C, 1));
    CUFFT(cufftExecC2C(p, d, d + 1, CUFFT_FORWARD)); // the output one element past the allocation
    expect(cudaDeviceSynchronize() == cudaErrorInvalidValue, "an FFT output past its allocation is refused (next sync)");
    cudaGetLastError();
    CUFFT(cufftDestroy(p));
    // A work area freed before the exec: the library would write freed memory.
    cufftHandle q;
    size_t work = 0;
    CUFFT(cufftCreate(&q));
    CUFFT(cufftSetAutoAllocation(q, 0));
    CUFFT(cufftMakePlan1d(q, 1000, CUFFT_C2C, 1, &work)); // 1000 = 2^3 5^3: not a single-kernel size
    float2* big = nullptr; // allocated first, so it cannot take the freed area's place
    CHECK(cudaMalloc(&big, 1000 * sizeof(float2)));
    void* area = nullptr;
    CHECK(cudaMalloc(&area, work ? work : 1));
    CUFFT(cufftSetWorkArea(q, area));
    CHECK(cudaFree(area));
    CUFFT(cufftExecC2C(q, big, big, CUFFT_FORWARD));
    expect(cudaDeviceSynchronize() == cudaErrorInvalidValue, "an FFT whose work area was freed is refused (next sync)");
    cudaGetLastError();
    CUFFT(cufftDestroy(q));
    CHECK(cudaFree(big));
    CHECK(cudaFree(d));
}

} // namespace

int main(int argc, char** argv)
{
    const bool vgpu_refusals = argc > 1 && strcmp(argv[1], "expect-refusal") == 0;
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    c2c_1d(s);
    r2c_c2r_1d();
    z2z_2d_and_d2z_3d();
    plan_many_strided();
    made_plans();
    if (vgpu_refusals)
        refusals();
    CHECK(cudaStreamDestroy(s));
    printf("cufftCheck: %d of %d checks passed%s\n", checks - failures, checks,
           vgpu_refusals ? " (with the vGPU's refusals)" : "");
    return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
