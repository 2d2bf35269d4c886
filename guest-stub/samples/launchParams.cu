// launchParams: kernel parameters through <<<...>>> as nvcc's generated code
// passes them to the runtime: a kernel with none, and param_echo, whose
// by-value structs have several alignments and together exceed one ring
// slot (kvmtool-gpu/abi/param_echo_shapes.h). Every byte must arrive; runs
// on both backends (the host backend has reference kernels of both names).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include "guest-stub/kernels/param_echo.cu" // the guests' param_echo, shared, not copied
#include "check_cuda.h"

__global__ void empty_kernel() {}

int main(void)
{
    int failures = 0;
    empty_kernel<<<1, 1>>>();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("launchParams: a kernel without parameters ran\n");

    const char c = 'k';
    const EchoVec3 v = {1.5f, -2.25f, 3.125f};
    const EchoQuad q = {6.02214076e23, -1.602176634e-19};
    EchoBig big;
    for (int i = 0; i < 65; ++i)
        big.words[i] = 0x0101010101010101ull * (uint64_t)(i + 1) ^ ((uint64_t)i << 56);
    const short s = -12345;

    uint8_t* d_out = NULL;
    CHECK(cudaMalloc((void**)&d_out, kEchoOutBytes));
    CHECK(cudaMemset(d_out, 0, kEchoOutBytes));
    for (int round = 0; round < 3; ++round) { // several launches: the large-parameter path each time
        param_echo<<<1, 32>>>(d_out, c, v, q, big, s);
        CHECK(cudaGetLastError());
    }
    uint8_t got[kEchoOutBytes];
    CHECK(cudaMemcpy(got, d_out, sizeof got, cudaMemcpyDeviceToHost));

    uint8_t want[kEchoOutBytes];
    unsigned at = 0;
    memcpy(want + at, &c, 1), at += 1;
    memcpy(want + at, &v, sizeof v), at += sizeof v;
    memcpy(want + at, &q, sizeof q), at += sizeof q;
    memcpy(want + at, &big, sizeof big), at += sizeof big;
    memcpy(want + at, &s, sizeof s), at += sizeof s;
    for (unsigned i = 0; i < kEchoOutBytes; ++i)
        if (got[i] != want[i]) {
            printf("launchParams: byte %u of the echo is 0x%02x, expected 0x%02x\n", i, got[i], want[i]);
            ++failures;
            break;
        }
    printf("launchParams: char, float3, aligned(16) double pair, 520-byte struct and short (%u bytes): %s\n",
           kEchoOutBytes, failures == 0 ? "all arrived" : "WRONG");
    CHECK(cudaFree(d_out));

    // The dynamic shared memory eight 256-thread blocks of param_echo may
    // each have on one multiprocessor: the driver's answer (not offered by
    // the host backend); a count of 0 is refused as the driver refuses it.
    size_t one = 0, eight = 0;
    const cudaError_t offered = cudaOccupancyAvailableDynamicSMemPerBlock(&one, param_echo, 1, 256);
    if (offered == cudaErrorNotSupported) {
        (void)cudaGetLastError();
        printf("launchParams: cudaOccupancyAvailableDynamicSMemPerBlock not offered by this backend\n");
    } else {
        CHECK(offered);
        CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&eight, param_echo, 8, 256));
        const cudaError_t zero = cudaOccupancyAvailableDynamicSMemPerBlock(&eight, param_echo, 0, 256);
        (void)cudaGetLastError();
        printf("launchParams: available dynamic shared memory, 256-thread blocks: 1 per multiprocessor %zu B, "
               "8: %zu B; 0 blocks: %s\n", one, eight, cudaGetErrorName(zero));
        if (!(one >= eight && eight > 0 && zero == cudaErrorInvalidValue))
            ++failures;
    }
    printf("%s\n", failures == 0 ? "Test PASSED" : "Test FAILED");
    return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
