// share: one VM's part of `kvmtool-gpu bench share` (several VMs on one
// GPU), and the roles the isolation tests give a misbehaving VM.
//
// role=work (default): after set-up it prints "SHARE-READY", then repeats
// one unit of work for `seconds`, timing a small synchronous call (a
// one-word cuMemsetD32: the per-call latency this VM sees while the others
// run) after every unit, and ends with one line
//   SHARE: role=work work=bandwidth units=U bytes=B launches=L elapsed_ns=E
//          lat_n=K lat_p50_ns=.. lat_p99_ns=.. lat_max_ns=.. check=ok
// The VMM measures throughput itself (the vGPU's byte and launch counters
// over a window in which every VM is working); the line is for the record
// and the checks.
//   work=bandwidth: a unit copies `size` bytes host->device and back, from
//     a pinned and from a pageable buffer (the library's default strategy).
//     check: a round trip of each buffer at the end matches.
//   work=compute: a unit is one matmul of side `n` (inputs 0.25 and 0.5, so
//     every element of the product is exactly n/8). check: sampled elements.
//   work=small: a unit is `batch` matmuls of side `n` (small: few blocks,
//     most SMs idle; --gpu-share mps lets other VMs' kernels use them), then
//     one synchronize. check: as compute.
//   recover=1 (the others of a fault intruder's group): a failed call does
//     not end the run. Under MPS a fault in another VM's kernel fails every
//     VM's work and the VMM replaces every GPU worker, so every device
//     object is gone: the VM makes its work again (new allocations, module,
//     stream) until that passes, and counts the calls that failed and the
//     time from the first failure to a unit that passed again (failed=,
//     lost_ms=, outages= on its SHARE: line). Its data check at the end
//     is of the work made last.
// role=fault: works `fault_after_ms`, then launches vector_add on an address
//   no allocation holds; that call must fail (not pass), and the VM must be
//   able to allocate, copy and check afterwards (the worker was replaced).
// role=quota: allocates 16 MiB device buffers until the VM's quota refuses
//   one (CUDA_ERROR_OUT_OF_MEMORY), frees them, then works as role=work.
// role=register: registers one pageable buffer of `size` bytes (scattered
//   frames: a host alias of many mappings each time) again and again until
//   the VMM refuses (CUDA_ERROR_OUT_OF_MEMORY: the VM's registration limits),
//   unregisters them all, registers and unregisters it 50 times more, then
//   works as role=work. It attacks after SHARE-READY, while the others work.
// role=storm: writes the vGPU doorbell as fast as it can for `seconds`,
//   with nothing in the ring (every kick is empty work for the VMM).
// Exit: 0 pass; 1 a check failed; 64 a CUDA call failed unexpectedly.
#include "guest-stub/programs/bench_guest.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/platform.h"
#include "guest-stub/programs/program_common.h"
#include "guest-stub/runtime/heap.h"
#include "guest-stub/runtime/mmio.h"
#include "guest-stub/runtime/sort.h"
#include "kvmtool-gpu/abi/console_tags.h"
#include "kvmtool-gpu/abi/platform_abi.h"

using namespace guest;

namespace {

constexpr uint64_t kMaxLatencySamples = 8192;
constexpr uint64_t kQuotaChunk = 16ull << 20;
constexpr unsigned kMaxQuotaChunks = 4096;

uint64_t g_latency[kMaxLatencySamples];

struct Totals {
    uint64_t units = 0, bytes = 0, launches = 0, lat_n = 0;
};

// The first failing call's status, returned from the enclosing function.
#define TRY(call)                                                                                                      \
    do {                                                                                                               \
        const CUresult r_ = (call);                                                                                    \
        if (r_ != CUDA_SUCCESS)                                                                                        \
            return r_;                                                                                                 \
    } while (0)

// A one-word memset, synchronous: what one small CUDA call costs this VM.
CUresult time_small_call(CUdeviceptr word, Totals* t)
{
    const uint64_t t0 = tsc_begin();
    TRY(cuMemsetD32(word, 0, 1));
    const uint64_t ns = tsc_to_ns(tsc_end() - t0);
    if (t->lat_n < kMaxLatencySamples)
        g_latency[t->lat_n++] = ns;
    return CUDA_SUCCESS;
}

class BandwidthWork {
public:
    explicit BandwidthWork(uint64_t bytes) : bytes_(bytes)
    {
        pinned_ = static_cast<uint8_t*>(pinned_alloc(bytes));
        pageable_ = static_cast<uint8_t*>(pageable_alloc(bytes));
        fill(pinned_, 1);
        fill(pageable_, 2);
    }
    // The device side, again after the VM's objects were lost.
    CUresult setup()
    {
        TRY(cuMemAlloc(&dev_, bytes_));
        TRY(cuStreamCreate(&stream_, 0));
        return CUDA_SUCCESS;
    }
    CUresult unit(Totals* t)
    {
        for (uint8_t* host : buffers()) {
            TRY(cuMemcpyHtoDAsync(dev_, host, bytes_, stream_));
            TRY(cuMemcpyDtoHAsync(host, dev_, bytes_, stream_));
        }
        TRY(cuStreamSynchronize(stream_));
        t->bytes += 4 * bytes_;
        return CUDA_SUCCESS;
    }
    // Each buffer went to the device and back unchanged, and a cleared
    // buffer gets its bytes back from the device.
    bool check()
    {
        bool ok = intact(pinned_, 1) && intact(pageable_, 2);
        for (uint8_t* host : buffers()) {
            CU_CHECK(cuMemcpyHtoD(dev_, host, bytes_));
            const uint32_t salt = host == pinned_ ? 1 : 2;
            memset(host, 0, bytes_);
            CU_CHECK(cuMemcpyDtoH(host, dev_, bytes_));
            ok = ok && intact(host, salt);
        }
        return ok;
    }

private:
    struct Buffers {
        uint8_t* p[2];
        uint8_t* const* begin() const { return p; }
        uint8_t* const* end() const { return p + 2; }
    };
    Buffers buffers() const { return {{pinned_, pageable_}}; }
    void fill(uint8_t* p, uint32_t salt)
    {
        uint32_t* w = reinterpret_cast<uint32_t*>(p);
        for (uint64_t i = 0; i < bytes_ / 4; ++i)
            w[i] = (uint32_t)(i * 2654435761u) ^ salt;
    }
    bool intact(const uint8_t* p, uint32_t salt)
    {
        const uint32_t* w = reinterpret_cast<const uint32_t*>(p);
        for (uint64_t i = 0; i < bytes_ / 4; ++i)
            if (w[i] != ((uint32_t)(i * 2654435761u) ^ salt)) {
                printf("share: word %lu of the %s buffer is 0x%08x\n", i, salt == 1 ? "pinned" : "pageable", w[i]);
                return false;
            }
        return true;
    }
    uint64_t bytes_;
    uint8_t *pinned_, *pageable_;
    CUdeviceptr dev_ = 0;
    CUstream stream_ = nullptr;
};

class ComputeWork {
public:
    ComputeWork(unsigned n, unsigned batch) : n_(n), batch_(batch) {}
    CUresult setup()
    {
        if (kvmgpu_kernels_is_placeholder)
            printf("share: kernel image is a placeholder (built without nvcc)\n");
        TRY(cuModuleLoadData(&module_, kvmgpu_kernels_image));
        TRY(cuModuleGetFunction(&fn_, module_, "matmul"));
        const size_t words = (size_t)n_ * n_;
        TRY(cuMemAlloc(&a_, words * 4));
        TRY(cuMemAlloc(&b_, words * 4));
        TRY(cuMemAlloc(&c_, words * 4));
        TRY(cuMemsetD32(a_, 0x3e800000u, words)); // 0.25f
        TRY(cuMemsetD32(b_, 0x3f000000u, words)); // 0.5f
        TRY(cuStreamCreate(&stream_, 0));
        return CUDA_SUCCESS;
    }
    CUresult unit(Totals* t)
    {
        void* params[] = {&a_, &b_, &c_, &n_};
        const unsigned g = (n_ + 15) / 16;
        for (unsigned k = 0; k < batch_; ++k)
            TRY(cuLaunchKernel(fn_, g, g, 1, 16, 16, 1, 0, stream_, params, nullptr));
        TRY(cuStreamSynchronize(stream_));
        t->launches += batch_;
        return CUDA_SUCCESS;
    }
    // Every element of c is n * 0.25 * 0.5, exact in binary32 for the
    // sides allowed: 64 sampled elements.
    bool check()
    {
        const float want = (float)n_ * 0.125f;
        XorShift64 pick(n_);
        for (int i = 0; i < 64; ++i) {
            const uint64_t at = pick.below((uint64_t)n_ * n_);
            float got = 0;
            CU_CHECK(cuMemcpyDtoH(&got, c_ + at * 4, 4));
            if (got != want) {
                printf("share: c[%lu] = %.9g, expected %.9g\n", at, (double)got, (double)want);
                return false;
            }
        }
        return true;
    }

private:
    unsigned n_, batch_;
    CUmodule module_ = nullptr;
    CUfunction fn_ = nullptr;
    CUdeviceptr a_ = 0, b_ = 0, c_ = 0;
    CUstream stream_ = nullptr;
};

// Latency percentile p (0..100) of the samples, sorted.
uint64_t percentile(const uint64_t* sorted, uint64_t n, unsigned p)
{
    if (n == 0)
        return 0;
    const uint64_t i = (n * p + 99) / 100;
    return sorted[i == 0 ? 0 : i - 1];
}

// Allocates until the quota refuses; true when it refused with OUT_OF_MEMORY.
bool exhaust_quota()
{
    static CUdeviceptr held[kMaxQuotaChunks];
    unsigned n = 0;
    CUresult r = CUDA_SUCCESS;
    while (n < kMaxQuotaChunks && (r = cuMemAlloc(&held[n], kQuotaChunk)) == CUDA_SUCCESS)
        ++n;
    printf("share: quota: %u x 16 MiB allocated, then %s\n", n, r == CUDA_SUCCESS ? "the table bound" : "refused");
    for (unsigned i = 0; i < n; ++i)
        CU_CHECK(cuMemFree(held[i]));
    return r == CUDA_ERROR_OUT_OF_MEMORY;
}

// Registers until refused; true when the refusal is OUT_OF_MEMORY and the
// churn after it all succeeds. A hostile guest skips its library (which
// refuses a second registration of the same pages, as CUDA does) and sends
// the vGPU the same buffer's page list again and again.
bool exhaust_registrations(uint64_t bytes)
{
    using guest::cuda::Call;
    static uint64_t held[kMaxQuotaChunks];
    const void* buf = pageable_alloc(bytes);
    const uint64_t max_entries = bytes / 4096 + 2;
    void* list = pinned_alloc(max_entries * sizeof(vgpu_sg_entry));
    uint64_t count = 0;
    if (build_sg(buf, bytes, static_cast<vgpu_sg_entry*>(list), max_entries, &count) != SgResult::kOk)
        return false;
    const Call reg = guest::cuda::command<VGPU_OP_HOST_REGISTER>(
        {reinterpret_cast<uintptr_t>(list) /* pinned: GPA == VA */, count, bytes, 0});
    auto unregister = [](uint64_t h) {
        Call u = guest::cuda::command<VGPU_OP_HOST_UNREGISTER>({h});
        return guest::cuda::call_sync(u);
    };
    unsigned n = 0;
    CUresult r = CUDA_SUCCESS;
    uint64_t res[2];
    while (n < kMaxQuotaChunks && (r = guest::cuda::call_sync(reg, res)) == CUDA_SUCCESS)
        held[n++] = res[0];
    const char* name = "?";
    cuGetErrorName(r, &name);
    printf("share: register: %u x %lu bytes (%lu pieces) registered, then %s\n", n, bytes, count,
           r == CUDA_SUCCESS ? "the table bound" : name);
    for (unsigned i = 0; i < n; ++i)
        if (unregister(held[i]) != CUDA_SUCCESS)
            return false;
    for (unsigned i = 0; i < 50; ++i)
        if (guest::cuda::call_sync(reg, res) != CUDA_SUCCESS || unregister(res[0]) != CUDA_SUCCESS) {
            printf("share: register: churn failed at %u\n", i);
            return false;
        }
    return r == CUDA_ERROR_OUT_OF_MEMORY;
}

// The fault role's bad launch: vector_add writing where nothing is
// allocated. Returns the status the launch and the synchronize gave.
CUresult launch_fault()
{
    CUmodule m;
    CUfunction add = load_kernel("share", "vector_add", &m);
    CUdeviceptr bad = 0x10; // below every allocation, on any backend
    unsigned n = 1024;
    void* params[] = {&bad, &bad, &bad, &n};
    CUresult r = cuLaunchKernel(add, 4, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr);
    CUresult s = cuCtxSynchronize();
    return r != CUDA_SUCCESS ? r : s;
}

// After a fault: a new allocation takes a copy and gives it back.
bool works_after_fault()
{
    const uint64_t bytes = 1 << 20;
    uint8_t* host = static_cast<uint8_t*>(pinned_alloc(bytes));
    for (uint64_t i = 0; i < bytes; ++i)
        host[i] = (uint8_t)(i * 7);
    CUdeviceptr d;
    if (cuMemAlloc(&d, bytes) != CUDA_SUCCESS || cuMemcpyHtoD(d, host, bytes) != CUDA_SUCCESS)
        return false;
    memset(host, 0, bytes);
    if (cuMemcpyDtoH(host, d, bytes) != CUDA_SUCCESS)
        return false;
    for (uint64_t i = 0; i < bytes; ++i)
        if (host[i] != (uint8_t)(i * 7))
            return false;
    return cuMemFree(d) == CUDA_SUCCESS;
}

struct Outages {
    uint64_t outages = 0, failed = 0, lost_ns = 0;
};
constexpr uint64_t kRecoverSeconds = 120; // the VMM's own bounds are shorter

// recover=1, after a call failed with `first`: makes the work again (its
// device objects are gone with the VM's GPU worker) until a unit passes,
// counting every failed call. False when it does not come back in time.
template <class Make, class Unit>
bool recover_work(CUresult first, Outages* o, Make make, Unit unit)
{
    const uint64_t from = tsc_end();
    const uint64_t bound = from + seconds_to_tsc(kRecoverSeconds);
    ++o->outages;
    ++o->failed;
    const char* name = "?";
    cuGetErrorName(first, &name);
    printf("share: a call failed with %s: making the work again\n", name);
    for (Totals scratch;;) {
        CUresult r = make();
        if (r == CUDA_SUCCESS)
            r = unit(&scratch);
        if (r == CUDA_SUCCESS)
            break;
        ++o->failed;
        if (tsc_end() > bound) {
            cuGetErrorName(r, &name);
            printf("share: FAIL: the work did not come back within %lu s (last: %s)\n", kRecoverSeconds, name);
            return false;
        }
        const uint64_t pause = tsc_end() + seconds_to_tsc(1) / 100; // 10 ms between tries
        while (tsc_end() < pause)
            cpu_relax();
    }
    o->lost_ns += tsc_to_ns(tsc_end() - from);
    return true;
}

// Set to nonzero by the VMM when the common window has ended (SHARE-READY
// gives it the address): the work stops then; `seconds` only bounds it, for
// a VMM that never says.
volatile uint32_t g_window_over = 0;

bool working(uint64_t until) { return tsc_end() < until && g_window_over == 0; }

void announce_ready()
{
    uint64_t gpa = 0;
    if (guest::platform::virt_to_phys(const_cast<const uint32_t*>(&g_window_over), &gpa))
        printf(KVMGPU_TAG_SHARE_READY " stop=0x%lx\n", gpa);
    else
        printf(KVMGPU_TAG_SHARE_READY "\n");
}

void storm(uint64_t until)
{
    uint64_t kicks = 0;
    while (working(until)) {
        for (int i = 0; i < 64; ++i)
            mmio_write32(KVMGPU_VGPU_GPA + VGPU_DOORBELL_OFFSET, 0);
        kicks += 64;
    }
    printf(KVMGPU_TAG_SHARE " role=storm kicks=%lu\n", kicks);
}

} // namespace

int guest_main(const kvmgpu_boot_info*)
{
    bool ok = true;
    const Cmdline& cl = cmdline();
    const uint64_t seconds = cl.get_u64("seconds", 2, &ok);
    const uint64_t size = cl.get_u64("size", 16u << 20, &ok);
    const uint64_t n = cl.get_u64("n", 512, &ok);
    const uint64_t fault_after_ms = cl.get_u64("fault_after_ms", 500, &ok);
    const uint64_t batch = cl.get_u64("batch", 16, &ok);
    const bool recover = cl.get_u64("recover", 0, &ok) != 0;
    char work_buf[16], role_buf[16];
    const char* work = cl.get_str("work", work_buf, sizeof work_buf, "bandwidth");
    const char* role = cl.get_str("role", role_buf, sizeof role_buf, "work");
    const bool small = strcmp(work, "small") == 0;
    const bool compute = strcmp(work, "compute") == 0 || small;
    if (!ok || seconds == 0 || seconds > 3600 || size < 4096 || size > (1ull << 30) || size % 4 != 0 || n < 16 ||
        n > 8192 || n % 16 != 0 || batch == 0 || batch > 1024 || (!compute && strcmp(work, "bandwidth") != 0)) {
        printf("share: seconds=1..3600, size=4K..1G (a multiple of 4), n=16..8192 (a multiple of 16), "
               "batch=1..1024, work=bandwidth|compute|small\n");
        return kExitBadCmdline;
    }
    if (strcmp(role, "storm") == 0) {
        announce_ready();
        storm(tsc_end() + seconds_to_tsc(seconds));
        return kExitPass;
    }
    const bool fault = strcmp(role, "fault") == 0, quota = strcmp(role, "quota") == 0;
    const bool registers = strcmp(role, "register") == 0;
    if (!fault && !quota && !registers && strcmp(role, "work") != 0) {
        printf("share: role must be work, fault, quota, register or storm\n");
        return kExitBadCmdline;
    }

    open_device("share");
    if (quota && !exhaust_quota()) {
        printf("share: FAIL: the quota did not refuse an allocation with CUDA_ERROR_OUT_OF_MEMORY\n");
        return kExitCheckFailed;
    }

    CUdeviceptr word = 0;
    BandwidthWork* bw = nullptr;
    ComputeWork* cw = nullptr;
    if (compute) {
        static ComputeWork c((unsigned)n, small ? (unsigned)batch : 1);
        cw = &c;
    } else {
        static BandwidthWork b(size);
        bw = &b;
    }
    // The device objects: the small call's word and the work's.
    auto make = [&]() -> CUresult {
        TRY(cuMemAlloc(&word, 4));
        return bw ? bw->setup() : cw->setup();
    };
    auto unit = [&](Totals* u) { return bw ? bw->unit(u) : cw->unit(u); };
    Totals t;
    CU_CHECK(make());
    // One unit before READY: modules loaded, buffers touched, the GPU warm.
    CU_CHECK(unit(&t));
    t = Totals{};
    Outages lost;
    announce_ready();
    // The register intruder attacks while the others work (and measure).
    if (registers && !exhaust_registrations(size)) {
        printf("share: FAIL: registrations were not refused with CUDA_ERROR_OUT_OF_MEMORY, or did not come back\n");
        return kExitCheckFailed;
    }

    const uint64_t start = tsc_end();
    const uint64_t until = start + seconds_to_tsc(seconds);
    const uint64_t fault_at = start + seconds_to_tsc(1) * fault_after_ms / 1000;
    while (working(until)) {
        if (fault && tsc_end() >= fault_at) {
            const CUresult r = launch_fault();
            const char* name = "?";
            cuGetErrorName(r, &name);
            const bool recovered = works_after_fault();
            printf(KVMGPU_TAG_SHARE " role=fault status=%s recovered=%s\n", name, recovered ? "yes" : "no");
            return r != CUDA_SUCCESS && recovered ? kExitPass : kExitCheckFailed;
        }
        CUresult r = unit(&t);
        if (r == CUDA_SUCCESS)
            r = time_small_call(word, &t);
        if (r == CUDA_SUCCESS) {
            ++t.units;
            continue;
        }
        if (!recover) {
            const char* name = "?";
            cuGetErrorName(r, &name);
            printf("share: a call of the work failed with %s\n", name);
            return kExitCudaError;
        }
        if (!recover_work(r, &lost, make, unit))
            return kExitCheckFailed;
    }
    const uint64_t elapsed = tsc_to_ns(tsc_end() - start);
    const bool checked = bw ? bw->check() : cw->check();
    sort_u64(g_latency, t.lat_n);
    printf(KVMGPU_TAG_SHARE " role=%s work=%s units=%lu bytes=%lu launches=%lu elapsed_ns=%lu lat_n=%lu lat_p50_ns=%lu "
           "lat_p99_ns=%lu lat_max_ns=%lu outages=%lu failed=%lu lost_ms=%lu check=%s ended=%s\n",
           role, work, t.units, t.bytes, t.launches, elapsed, t.lat_n, percentile(g_latency, t.lat_n, 50),
           percentile(g_latency, t.lat_n, 99), t.lat_n ? g_latency[t.lat_n - 1] : 0, lost.outages, lost.failed,
           lost.lost_ns / 1000000, checked ? "ok" : "FAIL", g_window_over != 0 ? "window" : "bound");
    printf(KVMGPU_TAG_SHARE_DONE "\n");
    return checked ? kExitPass : kExitCheckFailed;
}
