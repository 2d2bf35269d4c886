// cuBLAS throughput and call rate, the same source as a guest and natively
// (`kvmtool-gpu bench libraries` runs both and compares): sgemm and GemmEx
// (fp16 and bf16 in, fp32 compute) TFLOP/s at each size, and the rate of
// small (64 x 64) batched gemms, strided and with pointer arrays.
// Arguments (key=value words): sizes=1024,2048,... reps=N (per gemm; by
// default about half a second of work) calls=N (batched calls) batch=N.
// Prints one line per measurement:
//   BLAS metric=M n=N reps=R flop=F event_ns=E wall_ns=W status=ok
// then BLAS-DONE. flop is the whole measurement's; event_ns the GPU span
// (CUDA events on the stream), wall_ns the program's own clock around it.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "kvmtool-gpu/abi/console_tags.h"

namespace {

std::vector<int> sizes = {1024, 2048, 4096, 8192, 16384};
int fixed_reps = 0, calls = 2000, batch = 16; // fixed_reps 0: reps_for(n)

uint64_t now_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void fail_line(const char* metric, int n, const char* why)
{
    printf(KVMGPU_TAG_BLAS " metric=%s n=%d reps=0 flop=0 event_ns=0 wall_ns=0 status=%s\n", metric, n, why);
    fflush(stdout);
}

// Runs body() `reps` times after two warm-up calls; prints the line.
template <class Body>
void measure(const char* metric, int n, int reps, double flop_each, Body body)
{
    cudaEvent_t start, stop;
    cudaEventCreate(&start), cudaEventCreate(&stop);
    for (int i = 0; i < 2; ++i)
        if (body() != CUBLAS_STATUS_SUCCESS)
            return fail_line(metric, n, "call_failed");
    const cudaError_t warm = cudaDeviceSynchronize();
    if (warm != cudaSuccess) // a queued call's refusal comes here (the host backend has no fp16 reference)
        return fail_line(metric, n, warm == cudaErrorNotSupported ? "not_supported" : "warmup_failed");
    const uint64_t t0 = now_ns();
    cudaEventRecord(start, nullptr);
    for (int i = 0; i < reps; ++i)
        if (body() != CUBLAS_STATUS_SUCCESS)
            return fail_line(metric, n, "call_failed");
    cudaEventRecord(stop, nullptr);
    const cudaError_t e = cudaEventSynchronize(stop);
    const uint64_t wall = now_ns() - t0;
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (e != cudaSuccess)
        return fail_line(metric, n, "sync_failed");
    printf(KVMGPU_TAG_BLAS " metric=%s n=%d reps=%d flop=%.0f event_ns=%llu wall_ns=%llu status=ok\n", metric, n, reps,
           flop_each * reps, (unsigned long long)(ms * 1e6), (unsigned long long)wall);
    fflush(stdout);
    cudaEventDestroy(start), cudaEventDestroy(stop);
}

// As given, else about half a second of work at 50 TFLOP/s (5 to 2000).
int reps_for(int n)
{
    if (fixed_reps > 0)
        return fixed_reps;
    const double flop = 2.0 * n * n * (double)n;
    const int r = (int)(25e12 / flop);
    return r < 5 ? 5 : r > 2000 ? 2000 : r;
}

void gemms(cublasHandle_t h)
{
    for (int n : sizes) {
        const size_t elems = (size_t)n * n;
        void *a = nullptr, *b = nullptr, *c = nullptr;
        if (cudaMalloc(&a, elems * 4) || cudaMalloc(&b, elems * 4) || cudaMalloc(&c, elems * 4)) {
            fail_line("sgemm", n, "out_of_memory");
            cudaFree(a), cudaFree(b), cudaFree(c), cudaGetLastError();
            continue;
        }
        // Small nonzero values in every type (the bytes 0x3c: 0.0115 as float, 1.06 as half).
        cudaMemset(a, 0x3c, elems * 4), cudaMemset(b, 0x3c, elems * 4), cudaMemset(c, 0, elems * 4);
        const float one = 1.f, zero = 0.f;
        const double flop = 2.0 * n * n * (double)n;
        const int reps = reps_for(n);
        measure("sgemm", n, reps, flop, [&] {
            return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, (float*)a, n, (float*)b, n, &zero, (float*)c, n);
        });
        measure("gemmex_fp16", n, fixed_reps ? reps : reps * 4, flop, [&] {
            return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16F, n, b, CUDA_R_16F, n, &zero, c,
                                CUDA_R_16F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        });
        measure("gemmex_bf16", n, fixed_reps ? reps : reps * 4, flop, [&] {
            return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF, n, b, CUDA_R_16BF, n, &zero, c,
                                CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        });
        cudaFree(a), cudaFree(b), cudaFree(c);
    }
}

void small_batches(cublasHandle_t h)
{
    const int n = 64;
    const size_t one_matrix = (size_t)n * n;
    float *a, *b, *c;
    const float **pa, **pb;
    float** pc;
    if (cudaMalloc(&a, one_matrix * batch * 4) || cudaMalloc(&b, one_matrix * batch * 4) ||
        cudaMalloc(&c, one_matrix * batch * 4) || cudaMalloc(&pa, batch * sizeof(void*)) ||
        cudaMalloc(&pb, batch * sizeof(void*)) || cudaMalloc(&pc, batch * sizeof(void*)))
        return fail_line("batched_strided", n, "out_of_memory");
    cudaMemset(a, 0x3c, one_matrix * batch * 4), cudaMemset(b, 0x3c, one_matrix * batch * 4);
    std::vector<const float*> ha(batch), hb(batch);
    std::vector<float*> hc(batch);
    for (int i = 0; i < batch; ++i)
        ha[i] = a + i * one_matrix, hb[i] = b + i * one_matrix, hc[i] = c + i * one_matrix;
    cudaMemcpy(pa, ha.data(), batch * sizeof(void*), cudaMemcpyHostToDevice);
    cudaMemcpy(pb, hb.data(), batch * sizeof(void*), cudaMemcpyHostToDevice);
    cudaMemcpy(pc, hc.data(), batch * sizeof(void*), cudaMemcpyHostToDevice);
    const float one = 1.f, zero = 0.f;
    const double flop = 2.0 * n * n * (double)n * batch;
    measure("batched_strided", n, calls, flop, [&] {
        return cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, one_matrix, b, n, one_matrix,
                                         &zero, c, n, one_matrix, batch);
    });
    measure("batched_pointers", n, calls, flop, [&] {
        return cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, pa, n, pb, n, &zero, pc, n, batch);
    });
    cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(pa), cudaFree(pb), cudaFree(pc);
}

void parse(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        const char* eq = strchr(argv[i], '=');
        if (!eq)
            continue;
        const std::string key(argv[i], eq - argv[i]);
        if (key == "sizes") {
            sizes.clear();
            for (const char* p = eq + 1; *p;) {
                sizes.push_back(atoi(p));
                p = strchr(p, ',');
                p = p ? p + 1 : "";
            }
        } else if (key == "reps") {
            fixed_reps = atoi(eq + 1);
        } else if (key == "calls") {
            calls = atoi(eq + 1);
        } else if (key == "batch") {
            batch = atoi(eq + 1);
        }
    }
}

} // namespace

int main(int argc, char** argv)
{
    parse(argc, argv);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        printf(KVMGPU_TAG_BLAS_DONE " status=no_cublas\n");
        return EXIT_FAILURE;
    }
    int version = 0;
    cublasGetVersion(h, &version);
    printf(KVMGPU_TAG_BLAS_INFO " cublas_version=%d\n", version);
    gemms(h);
    small_batches(h);
    cublasDestroy(h);
    printf(KVMGPU_TAG_BLAS_DONE " status=ok\n");
    return EXIT_SUCCESS;
}
