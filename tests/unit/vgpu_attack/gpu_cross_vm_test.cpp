// Two VMs in one VMM process on a real GPU (label gpu; skips without one):
// VM A's own kernel is handed VM B's device memory and B's zero-copy guest
// RAM address as raw pointers, which no dispatch check can see (a kernel
// computes its own addresses). Only the GPU's address spaces stand between
// them, so this asks the GPU, in both ways a CUDA backend can run:
//   worker process per VM (the default): separate processes, separate
//     contexts. B's data must be intact and B must carry on (A's launch may
//     fault, or succeed on A's own memory at the same address).
//   inline (--gpu-worker inline): both contexts in one process, guest RAM
//     registered with CU_MEMHOSTREGISTER_PORTABLE. Whether A's kernel can
//     reach B's pages is the GPU's answer; the test records it (and checks
//     B's data against what it reports), docs/security.md says which.
// Each test runs in a process of its own under ctest (a sticky fault poisons
// a process's CUDA).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "kvmtool-gpu/devices/vgpu_worker/engine_factory.h"
#include "tests/support/gpu_test_kernels.h"
#include "tests/support/vgpu_rig.h"


namespace kvmgpu::vgpu::test {
namespace {

struct Outcome {
    uint32_t on_b_memory = 0, on_b_ram = 0;
    bool b_memory_checked = false, b_memory_changed = false, b_ram_changed = false, b_carries_on = false;
};

EngineMaker cuda(GpuWorker worker) {
    return [worker](const memmap::GuestMemory& mem, const VgpuOptions& o) {
        std::string why;
        auto e = make_engine(mem, o, BackendChoice::Cuda, worker, &why);
        EXPECT_TRUE(e) << why;
        return e;
    };
}

Outcome attack(GpuWorker worker) {
    Outcome out;
    VgpuRig a(VgpuOptions{}, cuda(worker)), b(VgpuOptions{}, cuda(worker));
    if (!a.dev || !b.dev) return out;
    EXPECT_EQ(a.enable(), VGPU_SUCCESS);
    EXPECT_EQ(b.enable(), VGPU_SUCCESS);

    // B: device memory and guest RAM with a known pattern.
    std::vector<uint8_t> canary(4096);
    for (size_t i = 0; i < canary.size(); ++i) canary[i] = static_cast<uint8_t>(i * 7 + 1);
    const uint64_t b_buf = b.alloc(4096);
    b.put(kDataGpa, canary.data(), canary.size());
    EXPECT_EQ(b.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {b_buf, kDataGpa, 4096, 0}}).status, VGPU_SUCCESS);
    b.put(kDataGpa + 8192, canary.data(), canary.size());
    const Done w = b.call({.opcode = VGPU_OP_GUEST_RAM_DEVICE_PTR, .args = {kDataGpa + 8192, 4096}});
    EXPECT_EQ(w.status, VGPU_SUCCESS);

    // A: vector_add(a, b, c = B's, n = 16) on its own context.
    auto launch_into = [&](uint64_t target) {
        uint64_t fn;
        a.module_with("vector_add", &fn, test_fatbin());
        const uint64_t mine = a.alloc(64);
        const std::vector<std::vector<uint8_t>> p = {bytes(mine), bytes(mine), bytes(target), bytes(uint32_t{16})};
        return a.launch(fn, p, 1, 1, 16, 1).status;
    };
    out.on_b_memory = launch_into(b_buf);
    if (worker == GpuWorker::Process || out.on_b_memory == VGPU_SUCCESS) out.on_b_ram = launch_into(w.r0);

    // (Inline, a sticky fault in A may have ended CUDA for the whole process:
    // then B's memory cannot be read back, only its RAM.)
    std::vector<uint8_t> got(4096);
    out.b_memory_checked =
        b.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa + 16384, b_buf, 4096, 0}}).status == VGPU_SUCCESS;
    b.get(kDataGpa + 16384, got.data(), got.size());
    out.b_memory_changed = out.b_memory_checked && got != canary;
    b.get(kDataGpa + 8192, got.data(), got.size());
    out.b_ram_changed = got != canary;
    out.b_carries_on = b.call({.opcode = VGPU_OP_MEM_ALLOC, .args = {64}}).status == VGPU_SUCCESS;
    std::printf("cross-VM kernel (%s): on B's memory -> %s, on B's RAM -> %s; B's memory %s, B's RAM %s, B %s\n",
                to_string(worker), status_name(out.on_b_memory), status_name(out.on_b_ram),
                !out.b_memory_checked ? "unreadable" : out.b_memory_changed ? "CHANGED" : "intact",
                out.b_ram_changed ? "CHANGED" : "intact",
                out.b_carries_on ? "carries on" : "DOES NOT carry on");
    return out;
}

// Probed in a worker process: the test process must not load libcuda
// before the worker-process test forks its workers.
bool have_gpu() {
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 1 << 20));
    std::string why;
    return make_engine(mem, VgpuOptions{}, BackendChoice::Cuda, GpuWorker::Process, &why) != nullptr;
}

TEST(CrossVmGpu, WorkerProcessesKeepVmsApart) {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA backend";
    const Outcome o = attack(GpuWorker::Process);
    // The launch itself may succeed: B's addresses can also be valid in A's
    // own worker (forked alike, their allocators hand out the same
    // addresses), and then A writes only its own memory. What counts is
    // that B's data is untouched.
    EXPECT_TRUE(o.b_memory_checked);
    EXPECT_FALSE(o.b_memory_changed);
    EXPECT_FALSE(o.b_ram_changed);
    EXPECT_TRUE(o.b_carries_on);
}

TEST(CrossVmGpu, InlineContextsWhatTheGpuAllows) {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA backend";
    const Outcome o = attack(GpuWorker::Inline);
    // Whatever the GPU allowed, the report must match B's data.
    if (o.on_b_memory != VGPU_SUCCESS) {
        EXPECT_FALSE(o.b_memory_changed);
    }
    if (o.on_b_ram != VGPU_SUCCESS) {
        EXPECT_FALSE(o.b_ram_changed);
    }
}

} // namespace
} // namespace kvmgpu::vgpu::test
