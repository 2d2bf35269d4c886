#include "vgpu_fuzz_body.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string_view>

#include "kvmtool-gpu/devices/vgpu/backends/device_backends.h"
#include "kvmtool-gpu/devices/vgpu/backend_factory.h"
#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"
#include "kvmtool-gpu/devices/vgpu/command_ring.h"
#include "memmap/backing.h"
#include "memmap/guest_memory.h"
#include "tests/support/host_module_image.h"

namespace kvmgpu::vgpu::fuzz {

namespace {
constexpr uint64_t kRam = 2ull << 20;
constexpr uint32_t kEntries = 8;
constexpr uint64_t kDataGpa = 64 << 10; // input bytes past the ring land here

memmap::GuestMemory& guest_ram() {
    static memmap::GuestMemory* mem = [] {
        auto* m = new memmap::GuestMemory; // lives for the process: fuzzers never exit cleanly anyway
        m->add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, kRam));
        return m;
    }();
    return *mem;
}
constexpr uint64_t kKinds = 13;
struct Known {
    uint64_t value[kKinds] = {};
};

// Runs one harness-made command (not fuzz input) and returns result0.
uint64_t exec(CommandDispatch& d, uint16_t op, std::initializer_list<uint64_t> args, std::string_view payload = {}) {
    GuestCommand c{};
    c.desc.opcode = op;
    c.desc.payload_len = static_cast<uint32_t>(payload.size());
    size_t i = 0;
    for (uint64_t a : args) c.desc.arg[i++] = a;
    if (!payload.empty()) std::memcpy(c.payload.data(), payload.data(), payload.size());
    return d.execute(c).result[0];
}

Known make_known(CommandDispatch& d, uint8_t* ram) {
    Known k;
    k.value[0] = exec(d, VGPU_OP_MEM_ALLOC, {64 << 10});
    k.value[1] = exec(d, VGPU_OP_STREAM_CREATE, {0});
    std::memcpy(ram + kDataGpa, test::kHostModulePtx, test::kHostModulePtxBytes);
    k.value[2] = exec(d, VGPU_OP_MODULE_LOAD_DATA, {kDataGpa, test::kHostModulePtxBytes});
    k.value[3] = exec(d, VGPU_OP_MODULE_GET_FUNCTION, {k.value[2]}, "vector_add");
    k.value[4] = exec(d, VGPU_OP_EVENT_CREATE, {0});
    k.value[5] = exec(d, VGPU_OP_GUEST_RAM_DEVICE_PTR, {kDataGpa, 64 << 10});
    k.value[6] = exec(d, VGPU_OP_BLAS_CREATE, {});
    k.value[7] = exec(d, VGPU_OP_RAND_CREATE, {100});
    k.value[8] = exec(d, VGPU_OP_FFT_PLAN, {1, 64, 1, 1, 0x29, 1});
    k.value[9] = exec(d, VGPU_OP_GRAPH_CREATE, {0});
    k.value[10] = exec(d, VGPU_OP_GRAPH_ADD_EMPTY_NODE, {k.value[9]});
    k.value[11] = exec(d, VGPU_OP_GRAPH_INSTANTIATE, {k.value[9], 0});
    // A 2-dimensional Sobol32 generator (0 where the host has no cuRAND tables).
    k.value[12] = exec(d, VGPU_OP_RAND_CREATE, {201});
    exec(d, VGPU_OP_RAND_SET_DIMENSIONS, {k.value[12], 2});
    return k;
}

void substitute(uint8_t* word, const Known& k) {
    uint64_t v;
    std::memcpy(&v, word, 8);
    if ((v & ~0xFFFFull) != kMagic) return;
    const uint64_t kind = (v >> 8) & 0xFF, n = v & 0xFF;
    if (kind >= kKinds) return;
    v = k.value[kind] + (kind == 0 || kind == 5 ? 64 * n : 0);
    std::memcpy(word, &v, 8);
}
} // namespace

// Input layout: [0] how the producer moves, then the ring image (header,
// descriptors, completions, payloads), then guest data.
void run_one(const uint8_t* data, size_t size, VgpuCounterSnapshot* seen) {
    if (size == 0) return;
    memmap::GuestMemory& mem = guest_ram();
    uint8_t* ram = mem.regions().front().backing->data();
    std::memset(ram, 0, kRam);
    DeviceBackends backend(make_host_backend(HostBackendOptions{.total_bytes = 8ull << 20, .bounce_bytes = 4096}));
    backend.register_guest_ram(ram, kRam);
    VgpuCounters counters;
    // The quota holds a cuBLAS handle's and two cuRAND generators' charges and 1 MiB more.
    const VgpuOptions opts{.device_mem_quota = kBlasHandleCharge + 2 * kRandGeneratorCharge + (1ull << 20), .max_handles = 16, .max_module_bytes = 64 << 10,
                           .log_per_second = 0};
    CommandDispatch dispatch(mem, backend, opts, counters, 1);
    dispatch.refresh_ram_windows();
    const Known known = make_known(dispatch, ram);
    const VgpuCounterSnapshot before = counters.snapshot();

    const uint8_t steps = data[0];
    ++data, --size;
    const uint64_t ring_bytes = vgpu_ring_bytes(kEntries);
    std::memcpy(ram, data, std::min<uint64_t>(size, ring_bytes));
    if (size > ring_bytes) std::memcpy(ram + kDataGpa, data + ring_bytes, std::min<uint64_t>(size - ring_bytes, kRam - kDataGpa));

    for (uint32_t slot = 0; slot < kEntries; ++slot) {
        for (int a = 0; a < 6; ++a) substitute(ram + vgpu_command_offset(slot) + offsetof(vgpu_command, arg) + 8 * a, known);
        for (uint32_t w = 0; w + 8 <= VGPU_PAYLOAD_BYTES; w += 4)
            substitute(ram + vgpu_payload_offset(kEntries, slot) + w, known);
    }
    RingError why;
    auto ring = CommandRing::attach(mem, 0, kEntries, kEntries, &why);
    if (!ring) __builtin_trap(); // the ring itself is valid: attach must accept it

    // High bit set: the guest's own producer value stands (may be broken).
    // Otherwise up to four rounds, each publishing a few more commands.
    const std::atomic<bool> stop{false};
    uint32_t producer = 0;
    for (int round = 0; round < 4; ++round) {
        if (!(steps & 0x80)) {
            producer += (steps >> (2 * round)) & 3 ? ((steps >> (2 * round)) & 3) * 3 : 1;
            std::memcpy(ram + offsetof(vgpu_ring_header, producer), &producer, 4);
        }
        uint32_t done = 0;
        if (ring->run_pass(dispatch, kEntries, stop, &done) == CommandRing::Pass::Broken) break;
    }
    dispatch.reset();
    if (seen) { // what the input's own commands did, without the harness's
        *seen = counters.snapshot();
        seen->commands -= before.commands, seen->errors -= before.errors;
        for (size_t i = 0; i < seen->per_opcode.size(); ++i) seen->per_opcode[i] -= before.per_opcode[i];
    }
}

} // namespace kvmgpu::vgpu::fuzz
