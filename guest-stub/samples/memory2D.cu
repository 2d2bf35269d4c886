// memory2D: pitched device memory and 2-D copies and memsets (a 100-byte-wide
// region inside 512-byte rows), and host functions ordered on a stream
// (cudaLaunchHostFunc, cudaStreamAddCallback). Every byte of the device's
// rows is read back and checked, and each host function runs once, after
// the stream's earlier work.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include "check_cuda.h"

static const size_t kWidth = 100, kHeight = 7;

static unsigned char pattern(size_t row, size_t col) { return (unsigned char)(row * 31 + col); }

struct HostFnState {
    const unsigned char* rows; // host copy of the device rows, filled by an async copy
    size_t pitch;
    int calls;
    bool saw_copy; // the copy before it on the stream had completed
};

static void after_copy(void* p)
{
    HostFnState* s = (HostFnState*)p;
    ++s->calls;
    s->saw_copy = s->rows[(kHeight - 1) * s->pitch + kWidth - 1] == pattern(kHeight - 1, kWidth - 1);
}

static void stream_callback(cudaStream_t, cudaError_t status, void* p)
{
    HostFnState* s = (HostFnState*)p;
    s->calls += status == cudaSuccess ? 10 : 1000;
}

int main(void)
{
    int failures = 0;
    unsigned char host[kHeight][kWidth];
    for (size_t r = 0; r < kHeight; ++r)
        for (size_t c = 0; c < kWidth; ++c)
            host[r][c] = pattern(r, c);

    void* d = NULL;
    size_t pitch = 0;
    CHECK(cudaMallocPitch(&d, &pitch, kWidth, kHeight));
    printf("memory2D: %zu x %zu bytes, pitch %zu\n", kWidth, kHeight, pitch);
    if (pitch < kWidth)
        return EXIT_FAILURE;
    CHECK(cudaMemset2D(d, pitch, 0xEE, pitch, kHeight));                          // whole rows
    CHECK(cudaMemcpy2D(d, pitch, host, kWidth, kWidth, kHeight, cudaMemcpyHostToDevice)); // packed -> pitched
    CHECK(cudaMemset2D((char*)d + 90, pitch, 0x11, 10, kHeight));                 // a column band

    unsigned char* back = (unsigned char*)malloc(pitch * kHeight);
    if (back == NULL)
        return EXIT_FAILURE;
    CHECK(cudaMemcpy2D(back, pitch, d, pitch, pitch, kHeight, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (size_t r = 0; r < kHeight; ++r)
        for (size_t c = 0; c < pitch; ++c) {
            const unsigned char want = c < 90 ? pattern(r, c) : c < kWidth ? 0x11 : 0xEE;
            if (back[r * pitch + c] != want && bad++ < 5)
                printf("  row %zu col %zu: %u, expected %u\n", r, c, back[r * pitch + c], want);
        }
    printf("memory2D: 2-D copies and memsets: %s\n", bad == 0 ? "every byte as expected" : "WRONG");
    failures += bad != 0;

    const cudaError_t narrow = cudaMemcpy2D(d, 10, host, kWidth, kWidth, kHeight, cudaMemcpyHostToDevice);
    printf("memory2D: width above the pitch: %s\n", cudaGetErrorName(narrow));
    failures += narrow != cudaErrorInvalidPitchValue || cudaGetLastError() != cudaErrorInvalidPitchValue;

    // Pitched rows back into a pitched host buffer on a stream, then host
    // functions that must see the copy done.
    memset(back, 0, pitch * kHeight);
    CHECK(cudaMemcpy2D(d, pitch, host, kWidth, kWidth, kHeight, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    HostFnState state = {back, pitch, 0, false};
    CHECK(cudaMemcpy2DAsync(back, pitch, d, pitch, kWidth, kHeight, cudaMemcpyDeviceToHost, s));
    CHECK(cudaLaunchHostFunc(s, after_copy, &state));
    CHECK(cudaStreamAddCallback(s, stream_callback, &state, 0));
    CHECK(cudaStreamSynchronize(s));
    printf("memory2D: host functions: %d (expected 11), after the copy: %s\n", state.calls,
           state.saw_copy ? "yes" : "NO");
    failures += state.calls != 11 || !state.saw_copy;

    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d));
    free(back);
    printf("%s\n", failures == 0 ? "Test PASSED" : "Test FAILED");
    return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
