// params: a kernel whose by-value parameters are structs of several
// alignments and more bytes than one ring slot (param_echo, see
// kvmtool-gpu/abi/param_echo_shapes.h), launched as a CUDA programmer would: through
// kernelParams and through an `extra` buffer laid out by the C ABI. The
// layout the vGPU reports must be the ABI's, and every byte must arrive:
// the kernel echoes its parameters into device memory, the guest compares.
// Then the launches the driver refuses: a wrong `extra` size, and missing
// kernelParams.
#include "kvmtool-gpu/abi/param_echo_shapes.h"
#include "guest-stub/programs/program_common.h"

using namespace guest;

namespace {

struct Args {
    char c = 'k';
    EchoVec3 v{1.5f, -2.25f, 1e-3f};
    EchoQuad q{3.141592653589793, -0.5};
    EchoBig big{};
    short s = -12345;
};

// What param_echo writes for `a`: c, v, q, big, s back to back.
void expected_echo(const Args& a, uint8_t* out)
{
    unsigned at = 0;
    memcpy(out + at, &a.c, 1), at += 1;
    memcpy(out + at, &a.v, sizeof a.v), at += sizeof a.v;
    memcpy(out + at, &a.q, sizeof a.q), at += sizeof a.q;
    memcpy(out + at, &a.big, sizeof a.big), at += sizeof a.big;
    memcpy(out + at, &a.s, sizeof a.s);
}

bool echo_matches(const char* how, CUdeviceptr dout, const Args& a)
{
    uint8_t want[kEchoOutBytes], got[kEchoOutBytes];
    expected_echo(a, want);
    CU_CHECK(cuMemcpyDtoH(got, dout, sizeof got));
    for (unsigned i = 0; i < sizeof got; ++i) {
        if (got[i] != want[i]) {
            printf("params: %s: byte %u of the echo is %u, want %u\n", how, i, got[i], want[i]);
            return false;
        }
    }
    printf("params: %s: all %u parameter bytes arrived\n", how, kEchoOutBytes);
    return true;
}

} // namespace

int guest_main(const kvmgpu_boot_info*)
{
    open_device("params");
    CUmodule mod;
    CUfunction fn = load_kernel("params", "param_echo", &mod);
    bool ok = true;

    // The layout the vGPU reports is the one the C ABI gives these types.
    unsigned count = 0;
    const uint16_t *offsets = nullptr, *sizes = nullptr;
    size_t bytes = 0;
    CU_CHECK(vgpuFuncGetParamLayout(fn, &count, &offsets, &sizes, &bytes));
    ok &= count == kEchoParams && bytes == kEchoBufferBytes;
    for (unsigned i = 0; ok && i < kEchoParams; ++i)
        ok &= offsets[i] == kEchoOffsets[i] && sizes[i] == kEchoSizes[i];
    printf("params: layout %u parameters, %u bytes: %s\n", count, static_cast<unsigned>(bytes),
           ok ? "as the C ABI lays them out" : "NOT the C ABI's");

    CUdeviceptr dout;
    CU_CHECK(cuMemAlloc(&dout, kEchoOutBytes));
    Args a;
    for (unsigned i = 0; i < 65; ++i)
        a.big.words[i] = 0x0101010101010101ull * (i + 1) ^ (uint64_t)i << 40;

    // kernelParams: one pointer per parameter.
    void* params[] = {&dout, &a.c, &a.v, &a.q, &a.big, &a.s};
    CU_CHECK(cuMemsetD8(dout, 0, kEchoOutBytes));
    CU_CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, 0, params, nullptr));
    CU_CHECK(cuCtxSynchronize());
    ok &= echo_matches("kernelParams", dout, a);

    // extra: the buffer a programmer lays out by the C ABI's offsets.
    a.c = 'x', a.v.z = 42.0f, a.s = 7, a.big.words[64] = 0xfeedfacecafebeefull;
    alignas(16) uint8_t buffer[kEchoBufferBytes] = {};
    const void* fields[] = {&dout, &a.c, &a.v, &a.q, &a.big, &a.s};
    for (unsigned i = 0; i < kEchoParams; ++i)
        memcpy(buffer + kEchoOffsets[i], fields[i], kEchoSizes[i]);
    size_t size = sizeof buffer;
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    CU_CHECK(cuMemsetD8(dout, 0, kEchoOutBytes));
    CU_CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, 0, nullptr, extra));
    CU_CHECK(cuCtxSynchronize());
    ok &= echo_matches("extra", dout, a);

    // What the driver refuses.
    size = sizeof buffer - 2;
    const CUresult short_extra = cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, 0, nullptr, extra);
    const CUresult no_params = cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, 0, nullptr, nullptr);
    ok &= short_extra == CUDA_ERROR_INVALID_VALUE && no_params == CUDA_ERROR_INVALID_VALUE;
    printf("params: an extra buffer 2 bytes short -> %u, no parameters -> %u (want %u)\n", short_extra, no_params,
           CUDA_ERROR_INVALID_VALUE);
    CU_CHECK(cuCtxSynchronize());

    printf("params: %s\n", ok ? "PASS" : "FAIL");
    return ok ? kExitPass : kExitResultMismatch;
}
