// cuRAND's host API through the vGPU, checked against the CPU: Sobol
// sequences (32- and 64-bit, scrambled, 3 dimensions from an offset)
// recomputed here from the direction vectors and scramble constants cuRAND
// hands out, with curand_uniform.h's and curand_normal.h's conversions;
// offsets of pseudo-random generators (a skip equals the tail of a longer
// run); host generators (the same numbers as the device generator of that
// type and seed); and cuRAND's refusals at the call. The same source runs
// natively. With `expect-refusal` also what only the vGPU refuses: a
// generation past its allocation, reported at the next synchronization.
// Where the vGPU's host has no libcurand (its host backend takes cuRAND's
// Sobol tables from it), the Sobol checks waive: the others run, and the
// program ends with a WAIVED line and exit status 2.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <curand.h>

#include "guest-stub/samples/check_cuda.h"

namespace {

int failures = 0, checks = 0;

void expect(bool ok, const char* what)
{
    ++checks;
    if (!ok) {
        ++failures;
        fprintf(stderr, "curandCheck: FAILED: %s\n", what);
    }
}

#define CURAND(call)                                                                          \
    do {                                                                                      \
        curandStatus_t r_ = (call);                                                           \
        if (r_ != CURAND_STATUS_SUCCESS) {                                                    \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, (int)r_);    \
            exit(EXIT_FAILURE);                                                               \
        }                                                                                     \
    } while (0)

template <class T>
std::vector<T> host_copy(const T* d, size_t n)
{
    std::vector<T> h(n);
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

// Point `i` of a Sobol dimension: the XOR of the direction vectors the bits
// of i's Gray code pick, from the dimension's scramble constant.
template <class W>
W sobol(const W* v, W c, unsigned long long i)
{
    const unsigned long long g = i ^ (i >> 1);
    for (unsigned k = 0; k < 8 * sizeof(W); ++k)
        if (g >> k & 1)
            c ^= v[k];
    return c;
}

// The standard normal quantile: Halley steps on Phi(x) - p from 0.
double quantile(double p)
{
    double x = 0;
    for (int i = 0; i < 60; ++i) {
        const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
        const double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
        const double step = u / (1 + x * u / 2);
        x -= step;
        if (std::fabs(step) < 1e-15 * (1 + std::fabs(x)))
            break;
    }
    return x;
}

constexpr int kDims = 3, kPer = 64, kOffset = 5, kN = kDims * kPer;

void sobol32()
{
    curandDirectionVectors32_t *plain = nullptr, *scrambled = nullptr;
    unsigned* constants = nullptr;
    CURAND(curandGetDirectionVectors32(&plain, CURAND_DIRECTION_VECTORS_32_JOEKUO6));
    CURAND(curandGetDirectionVectors32(&scrambled, CURAND_SCRAMBLED_DIRECTION_VECTORS_32_JOEKUO6));
    CURAND(curandGetScrambleConstants32(&constants));
    bool ok = true;
    for (int k = 0; k < 32; ++k) ok = ok && plain[0][k] == 1u << (31 - k);
    expect(ok, "curandGetDirectionVectors32: dimension 1 is van der Corput's");

    unsigned* d = nullptr;
    CHECK(cudaMalloc(&d, kN * sizeof(unsigned)));
    for (int pass = 0; pass < 2; ++pass) {
        const bool scr = pass == 1;
        curandGenerator_t g;
        CURAND(curandCreateGenerator(&g, scr ? CURAND_RNG_QUASI_SCRAMBLED_SOBOL32 : CURAND_RNG_QUASI_SOBOL32));
        CURAND(curandSetQuasiRandomGeneratorDimensions(g, kDims));
        CURAND(curandSetGeneratorOffset(g, kOffset));
        CURAND(curandSetGeneratorOrdering(g, CURAND_ORDERING_QUASI_DEFAULT));
        CURAND(curandGenerate(g, d, kN));
        std::vector<unsigned> got = host_copy(d, kN);
        ok = true;
        for (int dim = 0; dim < kDims; ++dim)
            for (int i = 0; i < kPer; ++i)
                ok = ok && got[dim * kPer + i] == sobol<unsigned>((scr ? scrambled : plain)[dim], scr ? constants[dim] : 0,
                                                                  kOffset + i);
        expect(ok, scr ? "scrambled Sobol32 words, 3 dimensions from offset 5" : "Sobol32 words, 3 dimensions from offset 5");
        // The sequence goes on: uniform floats and doubles of the next points.
        float* f = reinterpret_cast<float*>(d);
        CURAND(curandGenerateUniform(g, f, kN));
        std::vector<float> u = host_copy(f, kN);
        ok = true;
        for (int dim = 0; dim < kDims; ++dim)
            for (int i = 0; i < kPer; ++i) {
                const unsigned x = sobol<unsigned>((scr ? scrambled : plain)[dim], scr ? constants[dim] : 0, kOffset + kPer + i);
                ok = ok && u[dim * kPer + i] == float(x) * 0x1p-32f + 0x1p-33f;
            }
        expect(ok, "Sobol32 uniform floats: x * 2^-32 + 2^-33, the sequence going on");
        if (!scr) { // normals by the inverse CDF: no even count needed
            double* n = nullptr;
            CHECK(cudaMalloc(&n, kN * sizeof(double)));
            CURAND(curandGenerateNormalDouble(g, n, kN, 1.0, 2.0));
            std::vector<double> z = host_copy(n, kN);
            ok = true;
            for (int dim = 0; dim < kDims; ++dim)
                for (int i = 0; i < kPer; ++i) {
                    const unsigned x = sobol<unsigned>(plain[dim], 0, kOffset + 2 * kPer + i);
                    const double want = 1.0 + 2.0 * quantile(x * 0x1p-32 + 0x1p-33);
                    ok = ok && std::fabs(z[dim * kPer + i] - want) < 1e-9 * (1 + std::fabs(want));
                }
            expect(ok, "Sobol32 normal doubles: mean + stddev * quantile(x * 2^-32 + 2^-33)");
            CURAND(curandGenerateLogNormal(g, reinterpret_cast<float*>(n), kDims, 0.0f, 1.0f));
            std::vector<float> ln = host_copy(reinterpret_cast<float*>(n), kDims);
            ok = true;
            for (int dim = 0; dim < kDims; ++dim) {
                const unsigned x = sobol<unsigned>(plain[dim], 0, kOffset + 3 * kPer);
                const double want = std::exp(quantile(x * 0x1p-32 + 0x1p-33));
                ok = ok && std::fabs(ln[dim] - want) < 1e-4 * want;
            }
            expect(ok, "Sobol32 log-normal floats: exp(normal), one point per dimension");
            CHECK(cudaFree(n));
        }
        CURAND(curandDestroyGenerator(g));
    }
    CHECK(cudaFree(d));
}

void sobol64()
{
    curandDirectionVectors64_t* v = nullptr;
    unsigned long long* constants = nullptr;
    CURAND(curandGetDirectionVectors64(&v, CURAND_SCRAMBLED_DIRECTION_VECTORS_64_JOEKUO6));
    CURAND(curandGetScrambleConstants64(&constants));
    unsigned long long* d = nullptr;
    CHECK(cudaMalloc(&d, kN * sizeof(unsigned long long)));
    curandGenerator_t g;
    CURAND(curandCreateGenerator(&g, CURAND_RNG_QUASI_SCRAMBLED_SOBOL64));
    CURAND(curandSetQuasiRandomGeneratorDimensions(g, kDims));
    CURAND(curandSetGeneratorOffset(g, kOffset));
    CURAND(curandGenerateLongLong(g, d, kN));
    std::vector<unsigned long long> got = host_copy(d, kN);
    bool ok = true;
    for (int dim = 0; dim < kDims; ++dim)
        for (int i = 0; i < kPer; ++i) ok = ok && got[dim * kPer + i] == sobol(v[dim], constants[dim], kOffset + i);
    expect(ok, "scrambled Sobol64 words (curandGenerateLongLong), 3 dimensions from offset 5");
    double* u = reinterpret_cast<double*>(d);
    CURAND(curandGenerateUniformDouble(g, u, kN));
    std::vector<double> ud = host_copy(u, kN);
    ok = true;
    for (int dim = 0; dim < kDims; ++dim)
        for (int i = 0; i < kPer; ++i) {
            const unsigned long long x = sobol(v[dim], constants[dim], kOffset + kPer + i);
            ok = ok && ud[dim * kPer + i] == double(x >> 11) * 0x1p-53 + 0x1p-54;
        }
    expect(ok, "Sobol64 uniform doubles: (x >> 11) * 2^-53 + 2^-54");
    CURAND(curandDestroyGenerator(g));
    CHECK(cudaFree(d));
}

// A pseudo-random generator from offset 1024 gives the tail of a run from 0.
void offsets()
{
    constexpr int n = 4096, skip = 1024;
    float* d = nullptr;
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    for (curandRngType_t t : {CURAND_RNG_PSEUDO_XORWOW, CURAND_RNG_PSEUDO_PHILOX4_32_10}) {
        curandGenerator_t g;
        CURAND(curandCreateGenerator(&g, t));
        CURAND(curandSetPseudoRandomGeneratorSeed(g, 2026));
        CURAND(curandGenerateUniform(g, d, n));
        const std::vector<float> all = host_copy(d, n);
        CURAND(curandDestroyGenerator(g));
        CURAND(curandCreateGenerator(&g, t));
        CURAND(curandSetPseudoRandomGeneratorSeed(g, 2026));
        CURAND(curandSetGeneratorOffset(g, skip));
        CURAND(curandSetGeneratorOrdering(g, CURAND_ORDERING_PSEUDO_DEFAULT));
        CURAND(curandGenerateUniform(g, d, n - skip));
        const std::vector<float> tail = host_copy(d, n - skip);
        expect(std::memcmp(tail.data(), all.data() + skip, (n - skip) * sizeof(float)) == 0,
               t == CURAND_RNG_PSEUDO_XORWOW ? "XORWOW from offset 1024: the tail of a run from 0"
                                             : "Philox from offset 1024: the tail of a run from 0");
        CURAND(curandDestroyGenerator(g));
    }
    CHECK(cudaFree(d));
}

// curandCreateGeneratorHost: the device generator's numbers, in host memory.
void host_generators(bool sobol)
{
    constexpr int n = 1 << 14;
    for (curandRngType_t t : {CURAND_RNG_PSEUDO_MTGP32, CURAND_RNG_QUASI_SOBOL32}) {
        if (t == CURAND_RNG_QUASI_SOBOL32 && !sobol)
            continue;
        curandGenerator_t dev, host;
        CURAND(curandCreateGenerator(&dev, t));
        CURAND(curandCreateGeneratorHost(&host, t));
        if (t == CURAND_RNG_PSEUDO_MTGP32) {
            CURAND(curandSetPseudoRandomGeneratorSeed(dev, 777));
            CURAND(curandSetPseudoRandomGeneratorSeed(host, 777));
        } else {
            CURAND(curandSetQuasiRandomGeneratorDimensions(dev, 2));
            CURAND(curandSetQuasiRandomGeneratorDimensions(host, 2));
        }
        float* d = nullptr;
        CHECK(cudaMalloc(&d, n * sizeof(float)));
        std::vector<float> h(n);
        CURAND(curandGenerateUniform(dev, d, n));
        CURAND(curandGenerateUniform(host, h.data(), n));
        const std::vector<float> fromdev = host_copy(d, n);
        int same = 0;
        for (int i = 0; i < n; ++i) same += fromdev[i] == h[i];
        expect(same == n, t == CURAND_RNG_PSEUDO_MTGP32 ? "MTGP32 host generator: the device generator's numbers"
                                                        : "Sobol32 host generator: the device generator's numbers");
        CURAND(curandDestroyGenerator(dev));
        CURAND(curandDestroyGenerator(host));
        CHECK(cudaFree(d));
    }
}

// cuRAND's own refusals, at the call (those of Sobol generators with `sobol`).
void refused_by_curand(bool sobol)
{
    curandGenerator_t q, p;
    CURAND(curandCreateGenerator(&p, CURAND_RNG_PSEUDO_XORWOW));
    float* f = nullptr;
    CHECK(cudaMalloc(&f, 4 * sizeof(float)));
    expect(curandGenerateNormal(p, f, 3, 0, 1) == CURAND_STATUS_LENGTH_NOT_MULTIPLE, "an odd pseudo-random normal count");
    expect(curandSetQuasiRandomGeneratorDimensions(p, 2) == CURAND_STATUS_TYPE_ERROR, "dimensions of a pseudo-random generator");
    expect(curandSetGeneratorOrdering(p, CURAND_ORDERING_QUASI_DEFAULT) == CURAND_STATUS_OUT_OF_RANGE,
           "a quasi-random ordering for a pseudo-random generator");
    CHECK(cudaDeviceSynchronize());
    CURAND(curandDestroyGenerator(p));
    CHECK(cudaFree(f));
    if (!sobol)
        return;
    CURAND(curandCreateGenerator(&q, CURAND_RNG_QUASI_SOBOL32));
    CURAND(curandSetQuasiRandomGeneratorDimensions(q, 3));
    unsigned* d = nullptr;
    CHECK(cudaMalloc(&d, 64 * sizeof(unsigned)));
    expect(curandGenerate(q, d, 4) == CURAND_STATUS_LENGTH_NOT_MULTIPLE, "a count not a multiple of the dimensions");
    expect(curandGenerateLongLong(q, reinterpret_cast<unsigned long long*>(d), 3) == CURAND_STATUS_TYPE_ERROR,
           "64-bit words from Sobol32");
    expect(curandSetQuasiRandomGeneratorDimensions(q, 20001) == CURAND_STATUS_OUT_OF_RANGE, "20001 dimensions");
    expect(curandSetPseudoRandomGeneratorSeed(q, 1) == CURAND_STATUS_TYPE_ERROR, "a seed for a quasi-random generator");
    expect(curandSetGeneratorOrdering(q, CURAND_ORDERING_PSEUDO_DEFAULT) == CURAND_STATUS_OUT_OF_RANGE,
           "a pseudo-random ordering for a quasi-random generator");
    CHECK(cudaDeviceSynchronize());
    CURAND(curandDestroyGenerator(q));
    CHECK(cudaFree(d));
}

void refusals()
{
    curandGenerator_t q;
    CURAND(curandCreateGenerator(&q, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    float* d = nullptr;
    CHECK(cudaMalloc(&d, 64 * sizeof(float)));
    CURAND(curandGenerateUniform(q, d, 65)); // one past the allocation: queued, refused by the VMM
    expect(cudaDeviceSynchronize() == cudaErrorInvalidValue, "a generation past its allocation is refused (next sync)");
    cudaGetLastError();
    CURAND(curandDestroyGenerator(q));
    CHECK(cudaFree(d));
}

} // namespace

int main(int argc, char** argv)
{
    const bool vgpu_refusals = argc > 1 && strcmp(argv[1], "expect-refusal") == 0;
    // The vGPU answers CURAND_STATUS_ARCH_MISMATCH (NOT_SUPPORTED) where its host has no cuRAND tables.
    curandDirectionVectors32_t* probe = nullptr;
    const bool sobol = curandGetDirectionVectors32(&probe, CURAND_DIRECTION_VECTORS_32_JOEKUO6) != CURAND_STATUS_ARCH_MISMATCH;
    if (sobol) {
        sobol32();
        sobol64();
    }
    offsets();
    host_generators(sobol);
    refused_by_curand(sobol);
    if (vgpu_refusals)
        refusals();
    printf("curandCheck: %d of %d checks passed%s\n", checks - failures, checks,
           vgpu_refusals ? " (with the vGPU's refusals)" : "");
    if (!sobol && !failures) {
        printf("curandCheck: WAIVED: the Sobol checks (the vGPU's host has no cuRAND tables)\n");
        return 2;
    }
    return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
