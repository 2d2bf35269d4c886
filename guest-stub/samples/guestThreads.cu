// guestThreads: the vGPU from several guest threads at once (Linux-ABI
// guests: each thread a vCPU). 8 threads each make a stream and a buffer,
// fill it with their own byte by an async memset, copy it back and hand
// the check to a new thread from a stream callback (simpleCallback's
// pattern); then 4 threads each push a context of their own (Driver API),
// allocate, fill and read back in it and pop it while the others do the
// same (threadMigration's pattern), and the main thread's own current
// context is unchanged by theirs. No kernels: it runs on either backend.
#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda.h>
#include <cuda_runtime.h>

#include "check_cuda.h"

#define CHECK_CU(call)                                                                                     \
    do {                                                                                                   \
        CUresult r_ = (call);                                                                              \
        if (r_ != CUDA_SUCCESS) {                                                                          \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, (int)r_);                  \
            exit(EXIT_FAILURE);                                                                            \
        }                                                                                                  \
    } while (0)

static const int kWorkers = 8, kCtxThreads = 4;
static const size_t kBytes = 1 << 20;

struct Work {
    int id;
    cudaStream_t stream;
    unsigned char* d;
    unsigned char* h;
    bool ok;
};
static std::atomic<int> g_checked{0};

static void* check_work(void* p)
{
    Work* w = (Work*)p;
    w->ok = true;
    for (size_t i = 0; i < kBytes; ++i)
        w->ok &= w->h[i] == (unsigned char)(w->id + 1);
    CHECK(cudaFree(w->d));
    CHECK(cudaFreeHost(w->h));
    CHECK(cudaStreamDestroy(w->stream));
    g_checked.fetch_add(1);
    return nullptr;
}

static void CUDART_CB on_done(cudaStream_t, cudaError_t status, void* p)
{
    CHECK(status);
    pthread_t t;
    if (pthread_create(&t, nullptr, check_work, p) != 0) { // the callback starts a thread, as simpleCallback's does
        fprintf(stderr, "pthread_create in a stream callback failed\n");
        exit(EXIT_FAILURE);
    }
    pthread_detach(t);
}

static void* launch_work(void* p)
{
    Work* w = (Work*)p;
    CHECK(cudaSetDevice(0));
    CHECK(cudaStreamCreate(&w->stream));
    CHECK(cudaMalloc(&w->d, kBytes));
    CHECK(cudaHostAlloc(&w->h, kBytes, cudaHostAllocPortable));
    CHECK(cudaMemsetAsync(w->d, w->id + 1, kBytes, w->stream));
    CHECK(cudaMemcpyAsync(w->h, w->d, kBytes, cudaMemcpyDeviceToHost, w->stream));
    CHECK(cudaStreamAddCallback(w->stream, on_done, w, 0));
    return nullptr;
}

struct CtxWork {
    int id;
    CUcontext ctx;
    bool ok;
};

static void* context_work(void* p)
{
    CtxWork* w = (CtxWork*)p;
    CUcontext cur = nullptr;
    CHECK_CU(cuCtxGetCurrent(&cur));
    w->ok = cur == nullptr; // a new thread has no current context
    for (int round = 0; round < 20; ++round) {
        CHECK_CU(cuCtxPushCurrent(w->ctx));
        CHECK_CU(cuCtxGetCurrent(&cur));
        w->ok &= cur == w->ctx;
        CUdeviceptr d;
        unsigned char h[4096];
        CHECK_CU(cuMemAlloc(&d, sizeof h));
        CHECK_CU(cuMemsetD8(d, (unsigned char)(0x40 + w->id + round), sizeof h));
        CHECK_CU(cuMemcpyDtoH(h, d, sizeof h));
        for (size_t i = 0; i < sizeof h; ++i)
            w->ok &= h[i] == (unsigned char)(0x40 + w->id + round);
        CHECK_CU(cuMemFree(d));
        CUcontext popped = nullptr;
        CHECK_CU(cuCtxPopCurrent(&popped));
        w->ok &= popped == w->ctx;
    }
    return nullptr;
}

int main()
{
    Work work[kWorkers];
    pthread_t t[kWorkers];
    for (int i = 0; i < kWorkers; ++i) {
        work[i] = Work{i, nullptr, nullptr, nullptr, false};
        if (pthread_create(&t[i], nullptr, launch_work, &work[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return EXIT_FAILURE;
        }
    }
    for (int i = 0; i < kWorkers; ++i)
        pthread_join(t[i], nullptr);
    while (g_checked.load() < kWorkers)
        sched_yield();
    bool ok = true;
    for (int i = 0; i < kWorkers; ++i)
        ok &= work[i].ok;
    printf("streams from %d threads, checked by threads started in callbacks: %s\n", kWorkers, ok ? "ok" : "WRONG");

    CHECK_CU(cuInit(0));
    CUdevice dev;
    CHECK_CU(cuDeviceGet(&dev, 0));
    CUcontext mine = nullptr;
    CHECK(cudaFree(0)); // the runtime's primary context, current on this thread
    CHECK_CU(cuCtxGetCurrent(&mine));
    CtxWork cw[kCtxThreads];
    for (int i = 0; i < kCtxThreads; ++i) {
        CUctxCreateParams params = {};
        cw[i] = CtxWork{i, nullptr, false};
        CHECK_CU(cuCtxCreate(&cw[i].ctx, &params, 0, dev));
        CHECK_CU(cuCtxPopCurrent(nullptr)); // made current by its creation: hand it to its thread
    }
    pthread_t ct[kCtxThreads];
    for (int i = 0; i < kCtxThreads; ++i)
        pthread_create(&ct[i], nullptr, context_work, &cw[i]);
    for (int i = 0; i < kCtxThreads; ++i)
        pthread_join(ct[i], nullptr);
    bool ctx_ok = true;
    for (int i = 0; i < kCtxThreads; ++i)
        ctx_ok &= cw[i].ok;
    CUcontext after = nullptr;
    CHECK_CU(cuCtxGetCurrent(&after));
    ctx_ok &= after == mine;
    // The main thread's context still works after theirs.
    void* d;
    CHECK(cudaMalloc(&d, 256));
    CHECK(cudaMemset(d, 7, 256));
    unsigned char h[256];
    CHECK(cudaMemcpy(h, d, 256, cudaMemcpyDeviceToHost));
    ctx_ok &= h[255] == 7;
    CHECK(cudaFree(d));
    for (int i = 0; i < kCtxThreads; ++i)
        CHECK_CU(cuCtxDestroy(cw[i].ctx));
    printf("contexts pushed and popped on %d threads, 20 rounds each: %s\n", kCtxThreads, ctx_ok ? "ok" : "WRONG");
    printf("%s\n", ok && ctx_ok ? "guestThreads passed" : "guestThreads FAILED");
    return ok && ctx_ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
