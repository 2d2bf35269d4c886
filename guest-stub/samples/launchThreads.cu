// launchThreads: kernels launched from 8 guest threads at once (Linux-ABI
// guests: each thread a vCPU). Each thread has its own stream, buffer, grid
// and block size, and launches by <<<...>>> and by cudaLaunchKernel in turn,
// 8 launches a round for 25 rounds, all threads starting each round
// together (the first round is every thread's first launch: the module,
// the kernel and the launch limits are looked up under contention). Thread
// t's launches cover exactly (t + 2) * 32 * (t + 1) elements of its buffer,
// a count no other thread's configuration gives, so a launch that ran with
// another thread's grid, block or stream leaves a wrong count behind: after
// each round the thread reads its whole buffer back and checks every
// element. incrementBy is one of the host backend's reference kernels, so
// this runs on either backend.
#include <pthread.h>

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#include "check_cuda.h"

__global__ void incrementBy(int* data, int inc, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] += inc;
}

static const int kThreads = 8, kRounds = 25, kLaunchesPerRound = 8, kElems = 4096;
static pthread_barrier_t g_round;

struct Worker {
    int id;
    int bad_rounds;
    char first_error[160];
};

static void* launch_rounds(void* p)
{
    Worker* w = (Worker*)p;
    const int t = w->id;
    const unsigned block = 32u * (t + 1), grid = t + 2u, covered = block * grid; // 64 ... 2304 elements
    int inc = t + 1, n = kElems; // n bounds nothing here: the configuration alone says what a launch covers
    const size_t bytes = kElems * sizeof(int);
    cudaStream_t s;
    int *d, *h;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&d, bytes));
    CHECK(cudaMallocHost(&h, bytes));
    CHECK(cudaMemsetAsync(d, 0, bytes, s));
    CHECK(cudaStreamSynchronize(s));
    void* args[] = {&d, &inc, &n};
    for (int round = 0; round < kRounds; ++round) {
        pthread_barrier_wait(&g_round);
        for (int i = 0; i < kLaunchesPerRound; ++i) {
            if (i % 2 == 0)
                incrementBy<<<grid, block, 0, s>>>(d, inc, n);
            else
                CHECK(cudaLaunchKernel((const void*)incrementBy, dim3(grid), dim3(block), args, 0, s));
            CHECK(cudaGetLastError());
        }
        CHECK(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        const int want = (round + 1) * kLaunchesPerRound * inc;
        for (int e = 0; e < kElems; ++e) {
            const int expected = (unsigned)e < covered ? want : 0;
            if (h[e] != expected) {
                if (w->bad_rounds++ == 0)
                    snprintf(w->first_error, sizeof w->first_error, "round %d: element %d is %d, not %d", round, e,
                             h[e], expected);
                break;
            }
        }
    }
    CHECK(cudaFreeHost(h));
    CHECK(cudaFree(d));
    CHECK(cudaStreamDestroy(s));
    return nullptr;
}

int main()
{
    pthread_barrier_init(&g_round, nullptr, kThreads);
    Worker workers[kThreads];
    pthread_t threads[kThreads];
    for (int t = 0; t < kThreads; ++t) {
        workers[t] = Worker{t, 0, ""};
        if (pthread_create(&threads[t], nullptr, launch_rounds, &workers[t]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return EXIT_FAILURE;
        }
    }
    bool ok = true;
    for (int t = 0; t < kThreads; ++t) {
        pthread_join(threads[t], nullptr);
        const Worker& w = workers[t];
        if (w.bad_rounds == 0)
            printf("thread %d: %u blocks of %u threads, %d launches: every round right\n", t, t + 2u, 32u * (t + 1),
                   kRounds * kLaunchesPerRound);
        else
            printf("thread %d: WRONG in %d of %d rounds, first: %s\n", t, w.bad_rounds, kRounds, w.first_error);
        ok &= w.bad_rounds == 0;
    }
    pthread_barrier_destroy(&g_round);
    printf("%s\n", ok ? "launchThreads passed" : "launchThreads FAILED");
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
