// multigpu: E = A*B + C*D on four devices, the multi-GPU transfer study's
// case. A*B is split by rows over devices 0 and 1, C*D over devices 2 and
// 3; device 0 gathers the three remote partial products (each n/2 x n
// floats) and adds. Two ways to gather:
//   gg - device to device: cuMemcpyPeerAsync, all three at once, each on a
//        stream of its own (peer access enabled where the devices allow);
//   gh - through host memory: each partial copied to a pinned guest buffer
//        and from there to device 0, one after another.
// With fewer than four devices the four roles share them round-robin, each
// role in a context of its own (the output says so).
//
// Cmdline: order=N (a multiple of 32, default 256), mode=gg|gh|both
// (default both), reps=R (default 3), samples=S (elements checked against
// a double-precision CPU computation, default 64). Output, per mode:
//   multigpu: order=N mode=gg reps=R total_ms=... gather_ms=... (medians)
// and T, one partial product copied device to host:
//   multigpu: order=N t_ms=...
#include "guest-stub/programs/program_common.h"
#include "kvmtool-gpu/abi/console_tags.h"

using namespace guest;

namespace {

constexpr int kRoles = 4;
constexpr uint64_t kMaxOrder = 32768;
constexpr uint64_t kMaxReps = 100;
constexpr uint64_t kStageFloats = 1u << 20; // upload staging: 4 MiB

// Inputs are generated, not stored: element (i, j) of matrix m is a
// multiple of 2^-7 in [-1, 1), so the check recomputes any element.
float value(uint32_t m, uint64_t i, uint64_t j)
{
    uint32_t h = static_cast<uint32_t>(i * 0x9E3779B1u + j * 0x85EBCA77u + m * 0xC2B2AE3Du);
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return static_cast<float>(static_cast<int>((h >> 8) & 0xFF) - 128) * (1.0f / 128);
}
enum Matrix : uint32_t { kA, kB, kC, kD };

struct Role {
    CUcontext ctx = nullptr;
    CUdevice device = 0;
    CUdeviceptr left = 0;    // n/2 rows of A (roles 0, 1) or C (roles 2, 3)
    CUdeviceptr right = 0;   // B or D, whole
    CUdeviceptr partial = 0; // n/2 x n: this role's rows of A*B or C*D
};

struct Study {
    uint64_t n = 256;
    uint64_t half_bytes = 0; // one partial product
    Role role[kRoles];
    CUdeviceptr gathered[kRoles] = {}; // on device 0: the partials of roles 1..3
    CUdeviceptr e = 0;                 // on device 0: n x n
    CUstream streams[kRoles] = {};     // device 0's, one per remote partial
    CUfunction matmul[kRoles] = {}, add = nullptr;
    float* stage = nullptr;            // pinned: uploads
    float* host_partial = nullptr;     // pinned: gh's staging
};

void use(const Role& r) { CU_CHECK(cuCtxSetCurrent(r.ctx)); }

// Rows [r0, r1) of matrix m into dptr (row r0 first), through the stage.
void upload_rows(Study& s, CUdeviceptr dptr, Matrix m, uint64_t r0, uint64_t r1)
{
    const uint64_t rows_per = kStageFloats / s.n;
    for (uint64_t r = r0; r < r1; r += rows_per) {
        const uint64_t rows = r1 - r < rows_per ? r1 - r : rows_per;
        for (uint64_t i = 0; i < rows; ++i)
            for (uint64_t j = 0; j < s.n; ++j)
                s.stage[i * s.n + j] = value(m, r + i, j);
        CU_CHECK(cuMemcpyHtoD(dptr + (r - r0) * s.n * sizeof(float), s.stage, rows * s.n * sizeof(float)));
    }
}

void set_up(Study& s, int devices)
{
    const uint64_t n = s.n, whole = n * n * sizeof(float);
    s.half_bytes = whole / 2;
    s.stage = static_cast<float*>(pinned_alloc(kStageFloats * sizeof(float)));
    CUmodule modules[kRoles];
    for (int k = 0; k < kRoles; ++k) {
        Role& r = s.role[k];
        CU_CHECK(cuDeviceGet(&r.device, k % devices));
        CU_CHECK(cuCtxCreate(&r.ctx, nullptr, 0, r.device));
        s.matmul[k] = load_kernel("multigpu", "matmul", &modules[k]);
        if (k == 0)
            CU_CHECK(cuModuleGetFunction(&s.add, modules[0], "vector_add"));
        CU_CHECK(cuMemAlloc(&r.left, s.half_bytes));
        CU_CHECK(cuMemAlloc(&r.right, whole));
        CU_CHECK(cuMemAlloc(&r.partial, s.half_bytes));
        const Matrix left = k < 2 ? kA : kC, right = k < 2 ? kB : kD;
        const uint64_t r0 = (k % 2) * n / 2;
        upload_rows(s, r.left, left, r0, r0 + n / 2);
        upload_rows(s, r.right, right, 0, n);
    }
    use(s.role[0]);
    for (int k = 1; k < kRoles; ++k) {
        CU_CHECK(cuMemAlloc(&s.gathered[k], s.half_bytes));
        CU_CHECK(cuStreamCreate(&s.streams[k], CU_STREAM_NON_BLOCKING));
    }
    CU_CHECK(cuMemAlloc(&s.e, whole));
    s.host_partial = static_cast<float*>(pinned_alloc(s.half_bytes));
}

// Device 0 maps the others' memory where they allow it; prints the matrix.
void enable_peers(Study& s)
{
    printf(KVMGPU_TAG_MULTIGPU " peer access from device %d:", s.role[0].device);
    for (int k = 1; k < kRoles; ++k) {
        int can = 0;
        CU_CHECK(cuDeviceCanAccessPeer(&can, s.role[0].device, s.role[k].device));
        const char* how = "no (peer copies still work: the VMM's driver picks the path)";
        if (can) {
            use(s.role[0]);
            const CUresult r = cuCtxEnablePeerAccess(s.role[k].ctx, 0);
            how = r == CUDA_SUCCESS || r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED ? "yes" : "refused";
        }
        printf(" role %d (device %d): %s;", k, s.role[k].device, how);
    }
    printf("\n");
}

void compute(Study& s)
{
    unsigned n = static_cast<unsigned>(s.n);
    const unsigned tile = 16;
    for (int k = 0; k < kRoles; ++k) {
        Role& r = s.role[k];
        use(r);
        void* params[] = {&r.left, &r.right, &r.partial, &n};
        CU_CHECK(cuLaunchKernel(s.matmul[k], n / tile, n / 2 / tile, 1, tile, tile, 1, 0, nullptr, params, nullptr));
    }
    for (int k = 0; k < kRoles; ++k) {
        use(s.role[k]);
        CU_CHECK(cuCtxSynchronize());
    }
}

void gather(Study& s, bool peer)
{
    if (peer) {
        use(s.role[0]);
        for (int k = 1; k < kRoles; ++k)
            CU_CHECK(cuMemcpyPeerAsync(s.gathered[k], s.role[0].ctx, s.role[k].partial, s.role[k].ctx, s.half_bytes,
                                       s.streams[k]));
        CU_CHECK(cuCtxSynchronize());
        return;
    }
    for (int k = 1; k < kRoles; ++k) {
        use(s.role[k]);
        CU_CHECK(cuMemcpyDtoH(s.host_partial, s.role[k].partial, s.half_bytes));
        use(s.role[0]);
        CU_CHECK(cuMemcpyHtoD(s.gathered[k], s.host_partial, s.half_bytes));
    }
}

// E's top rows = device 0's A*B rows + role 2's C*D rows; bottom = role 1's + role 3's.
void add(Study& s)
{
    use(s.role[0]);
    unsigned count = static_cast<unsigned>(s.n * s.n / 2);
    const unsigned blocks = (count + 255) / 256;
    CUdeviceptr top = s.e, bottom = s.e + s.half_bytes;
    void* p_top[] = {&s.role[0].partial, &s.gathered[2], &top, &count};
    void* p_bottom[] = {&s.gathered[1], &s.gathered[3], &bottom, &count};
    CU_CHECK(cuLaunchKernel(s.add, blocks, 1, 1, 256, 1, 1, 0, nullptr, p_top, nullptr));
    CU_CHECK(cuLaunchKernel(s.add, blocks, 1, 1, 256, 1, 1, 0, nullptr, p_bottom, nullptr));
    CU_CHECK(cuCtxSynchronize());
}

// samples elements of E against a double-precision A*B + C*D; each within
// (n + 1) * 2^-23 of the sum of its terms' magnitudes (float rounding).
bool check(Study& s, uint64_t samples, uint64_t seed)
{
    use(s.role[0]);
    XorShift64 rng(seed);
    uint64_t bad = 0;
    for (uint64_t t = 0; t < samples; ++t) {
        const uint64_t i = rng.below(s.n), j = rng.below(s.n);
        float got = 0;
        CU_CHECK(cuMemcpyDtoH(&got, s.e + (i * s.n + j) * sizeof(float), sizeof got));
        double want = 0, magnitude = 0;
        for (uint64_t k = 0; k < s.n; ++k) {
            const double ab = (double)value(kA, i, k) * value(kB, k, j), cd = (double)value(kC, i, k) * value(kD, k, j);
            want += ab + cd;
            magnitude += (ab < 0 ? -ab : ab) + (cd < 0 ? -cd : cd);
        }
        const double err = got > want ? got - want : want - got, bound = (double)(s.n + 1) * 0x1p-23 * magnitude;
        if (!(err <= bound)) {
            if (bad < 5)
                printf(KVMGPU_TAG_MULTIGPU " E[%lu][%lu] = %.9g, expected %.9g (error %.3g > bound %.3g)\n", i, j, (double)got,
                       want, err, bound);
            ++bad;
        }
    }
    return bad == 0;
}

} // namespace

int guest_main(const kvmgpu_boot_info*)
{
    bool ok = true;
    Study s;
    s.n = cmdline().get_u64("order", 256, &ok);
    const uint64_t reps = cmdline().get_u64("reps", 3, &ok);
    const uint64_t samples = cmdline().get_u64("samples", 64, &ok);
    char buf[8];
    const char* mode = cmdline().get_str("mode", buf, sizeof buf, "both");
    const bool gg = strcmp(mode, "gg") == 0 || strcmp(mode, "both") == 0;
    const bool gh = strcmp(mode, "gh") == 0 || strcmp(mode, "both") == 0;
    if (!ok || s.n == 0 || s.n % 32 != 0 || s.n > kMaxOrder || reps == 0 || reps > kMaxReps || (!gg && !gh)) {
        printf(KVMGPU_TAG_MULTIGPU " order must be a multiple of 32 up to %lu, reps in [1, %lu], mode gg, gh or both\n",
               kMaxOrder, kMaxReps);
        return kExitBadCmdline;
    }
    CU_CHECK(cuInit(0));
    int devices = 0;
    CU_CHECK(cuDeviceGetCount(&devices));
    set_up(s, devices);
    print_device_banner("multigpu");
    if (devices < kRoles)
        printf(KVMGPU_TAG_MULTIGPU " %d device(s): the %d roles share them, each in a context of its own "
               "(not the study's case: no bus between roles on one device)\n",
               devices, kRoles);
    enable_peers(s);

    // T: one partial product, device to host.
    uint64_t t_ns[kMaxReps];
    for (uint64_t r = 0; r < reps; ++r) {
        use(s.role[1]);
        const uint64_t t0 = tsc_begin();
        CU_CHECK(cuMemcpyDtoH(s.host_partial, s.role[1].partial, s.half_bytes));
        t_ns[r] = tsc_to_ns(tsc_end() - t0);
    }
    printf(KVMGPU_TAG_MULTIGPU " order=%lu t_ms=%s\n", s.n, ms_text(median_u64(t_ns, reps)).text);

    bool pass = true;
    for (int m = 0; m < 2; ++m) {
        const bool peer = m == 0;
        if ((peer && !gg) || (!peer && !gh))
            continue;
        uint64_t total[kMaxReps], gathered[kMaxReps];
        use(s.role[0]);
        CU_CHECK(cuMemsetD32(s.e, 0, s.n * s.n));
        for (uint64_t r = 0; r < reps; ++r) {
            const uint64_t t0 = tsc_begin();
            compute(s);
            const uint64_t t1 = tsc_end();
            gather(s, peer);
            const uint64_t t2 = tsc_end();
            add(s);
            const uint64_t t3 = tsc_end();
            total[r] = tsc_to_ns(t3 - t0);
            gathered[r] = tsc_to_ns(t2 - t1);
        }
        const bool right = check(s, samples, boot_info().seed ^ (uint64_t)m);
        pass &= right;
        printf(KVMGPU_TAG_MULTIGPU " order=%lu mode=%s reps=%lu total_ms=%s gather_ms=%s check=%s\n", s.n, peer ? "gg" : "gh",
               reps, ms_text(median_u64(total, reps)).text, ms_text(median_u64(gathered, reps)).text,
               right ? "pass" : "FAIL");
    }
    if (!pass) {
        printf(KVMGPU_TAG_MULTIGPU " FAIL: E differs from the CPU's A*B + C*D\n");
        return kExitResultMismatch;
    }
    printf(KVMGPU_TAG_MULTIGPU " PASS (%lu sampled elements of E per mode within float rounding of a double A*B + C*D)\n",
           samples);
    return kExitPass;
}
