// managedMemory: cudaMallocManaged as a CUDA program uses it, on the CPU
// and in kernels through one pointer (docs/managed-memory.md). The CPU
// fills two arrays, a kernel adds them into a third, the CPU checks and
// changes an input, the kernel runs again; copies take managed pointers on
// either side; pointer attributes say managed; freed allocations are made
// again (the guest library reuses their guest memory where the device
// gives the address again) and a larger one after them; memory attached
// to the host stays the CPU's. The kernel is vectorAdd's, which the host
// backend also runs, so it passes on either backend and natively.
// Waives (exit 2) where the device says it has no managed memory.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "check_cuda.h"

__global__ void vectorAdd(const float* a, const float* b, float* c, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

static int g_failures = 0;
static void expect(bool ok, const char* what)
{
    if (!ok) {
        printf("managedMemory: FAILED: %s\n", what);
        ++g_failures;
    }
}

static bool sums_right(const float* a, const float* b, const float* c, int n)
{
    for (int i = 0; i < n; ++i)
        if (c[i] != a[i] + b[i])
            return false;
    return true;
}

static void add(const float* a, const float* b, float* c, int n)
{
    vectorAdd<<<(n + 255) / 256, 256>>>(a, b, c, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
}

int main()
{
    int managed = 0;
    CHECK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, 0));
    if (!managed) {
        printf("WAIVED: managedMemory: the device has no managed memory\n");
        return 2;
    }
    int host_atomics = 0, concurrent = 0;
    CHECK(cudaDeviceGetAttribute(&host_atomics, cudaDevAttrHostNativeAtomicSupported, 0));
    CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0));
    printf("managedMemory: hostNativeAtomicSupported %d, concurrentManagedAccess %d\n", host_atomics, concurrent);
    const int n = 1 << 20; // 4 MiB per array
    const size_t bytes = n * sizeof(float);
    float *a, *b, *c;
    CHECK(cudaMallocManaged(&a, bytes));
    CHECK(cudaMallocManaged(&b, bytes));
    CHECK(cudaMallocManaged(&c, bytes));
    printf("managedMemory: a %p b %p c %p\n", (void*)a, (void*)b, (void*)c);
    for (int i = 0; i < n; ++i) {
        a[i] = float(i % 1000);
        b[i] = float(2 * (i % 777));
        c[i] = -1.0f;
    }
    add(a, b, c, n);
    expect(sums_right(a, b, c, n), "the kernel's sums, read by the CPU");
    for (int i = 0; i < n; i += 3)
        a[i] = 0.5f;
    add(a, b, c, n);
    expect(sums_right(a, b, c, n), "after the CPU changed an input");

    // Copies naming managed memory, as the source, the destination, and both.
    float* d;
    CHECK(cudaMalloc(&d, bytes));
    std::vector<float> host(n);
    CHECK(cudaMemcpy(d, c, bytes, cudaMemcpyDefault));
    CHECK(cudaMemcpy(host.data(), d, bytes, cudaMemcpyDeviceToHost));
    expect(memcmp(host.data(), c, bytes) == 0, "managed -> device -> host");
    for (int i = 0; i < n; ++i)
        host[i] = float(i);
    CHECK(cudaMemcpy(b, host.data(), bytes, cudaMemcpyHostToDevice));
    expect(b[12345] == 12345.0f, "host -> managed, read by the CPU");
    CHECK(cudaMemcpy(a, b, bytes, cudaMemcpyDefault));
    expect(a[777] == 777.0f, "managed -> managed");
    CHECK(cudaMemcpy(d, a, bytes, cudaMemcpyHostToDevice)); // a managed pointer given as a host one
    CHECK(cudaMemcpy(c, d, bytes, cudaMemcpyDeviceToHost));
    expect(c[999] == 999.0f, "managed as host memory, both ways");
    CHECK(cudaMemset(c, 0, bytes));
    expect(c[n - 1] == 0.0f, "memset of managed memory, read by the CPU");
    CHECK(cudaFree(d));

    cudaPointerAttributes attr;
    CHECK(cudaPointerGetAttributes(&attr, a + 10));
    expect(attr.type == cudaMemoryTypeManaged, "pointer attributes: managed");

    // Memory attached to the host is the CPU's while kernels run elsewhere.
    float* h;
    CHECK(cudaMallocManaged(&h, bytes, cudaMemAttachHost));
    for (int i = 0; i < n; ++i)
        h[i] = 3.0f;
    add(a, b, c, n);
    expect(h[n / 2] == 3.0f && sums_right(a, b, c, n), "host-attached memory beside a kernel");
    CHECK(cudaFree(h));

    // The price of coherence: a launch over managed memory against the same
    // launch over device memory (printed, not judged: the emulation moves
    // every managed allocation both ways at each launch; a native driver
    // migrates on demand).
    {
        float *da, *db, *dc;
        CHECK(cudaMalloc(&da, bytes));
        CHECK(cudaMalloc(&db, bytes));
        CHECK(cudaMalloc(&dc, bytes));
        cudaEvent_t t0, t1;
        CHECK(cudaEventCreate(&t0));
        CHECK(cudaEventCreate(&t1));
        const int reps = 20;
        float ms_managed = 0, ms_device = 0;
        add(a, b, c, n); // each side once before timing
        add(da, db, dc, n);
        CHECK(cudaEventRecord(t0));
        for (int r = 0; r < reps; ++r) {
            a[r] = float(r); // the CPU touches an input between launches, as a program would
            add(a, b, c, n);
        }
        CHECK(cudaEventRecord(t1));
        CHECK(cudaEventSynchronize(t1));
        CHECK(cudaEventElapsedTime(&ms_managed, t0, t1));
        CHECK(cudaEventRecord(t0));
        for (int r = 0; r < reps; ++r)
            add(da, db, dc, n);
        CHECK(cudaEventRecord(t1));
        CHECK(cudaEventSynchronize(t1));
        CHECK(cudaEventElapsedTime(&ms_device, t0, t1));
        printf("managedMemory: launch + sync over 3 x %zu MiB: managed %.3f ms, device memory %.3f ms\n",
               bytes >> 20, ms_managed / reps, ms_device / reps);
        CHECK(cudaFree(da));
        CHECK(cudaFree(db));
        CHECK(cudaFree(dc));
    }

    // Made again after a free, and a larger one after them.
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    for (int round = 0; round < 3; ++round) {
        const int m = round == 2 ? 2 * n : n;
        CHECK(cudaMallocManaged(&a, m * sizeof(float)));
        CHECK(cudaMallocManaged(&b, m * sizeof(float)));
        CHECK(cudaMallocManaged(&c, m * sizeof(float)));
        for (int i = 0; i < m; ++i) {
            a[i] = float(round + i % 10);
            b[i] = 1.0f;
        }
        add(a, b, c, m);
        expect(sums_right(a, b, c, m), round == 2 ? "a larger allocation after the frees" : "allocated again");
        printf("managedMemory: round %d: a %p b %p c %p\n", round, (void*)a, (void*)b, (void*)c);
        CHECK(cudaFree(a));
        CHECK(cudaFree(b));
        CHECK(cudaFree(c));
    }
    if (g_failures) {
        printf("managedMemory: %d check(s) FAILED\n", g_failures);
        return 1;
    }
    printf("managedMemory: PASSED\n");
    return 0;
}
