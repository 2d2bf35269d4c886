#include "tests/support/vgpu_rig.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

#include "kvmtool-gpu/devices/vgpu/backend_factory.h"

namespace kvmgpu::vgpu::test {

namespace {
constexpr uint64_t kSlotMemory = 1 << 16; // seqs wait() can still find
} // namespace

VgpuRig::VgpuRig(VgpuOptions opts, HostBackendOptions host_opts)
    : VgpuRig(opts, make_host_backend(host_opts)) {}

VgpuRig::VgpuRig(VgpuOptions opts, DeviceBackends backends) {
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, kRamBytes));
    host = backends.count() == 1 ? dynamic_cast<HostBackend*>(&backends.at(0)) : nullptr;
    dev = std::make_shared<VgpuDevice>(mem, std::move(backends), opts);
    dev->start();
    ring_ = host_ptr(kRingGpa);
}

VgpuRig::VgpuRig(VgpuOptions opts, const EngineMaker& make) {
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, kRamBytes));
    ring_ = host_ptr(kRingGpa);
    // KVMGPU_TEST_WORKER_SANDBOX=on: every worker of these rigs is sandboxed
    // (device-check.sh sandbox runs the GPU worker tests so).
    if (const char* s = std::getenv("KVMGPU_TEST_WORKER_SANDBOX"); s && std::string_view(s) == "on")
        opts.worker_sandbox = true;
    auto engine = make(mem, opts);
    if (!engine) return;
    dev = std::make_shared<VgpuDevice>(mem, std::move(engine));
    dev->start();
}

VgpuRig::~VgpuRig() {
    if (dev) dev->stop();
}

void VgpuRig::reg_write32(uint64_t off, uint32_t v) { dev->write(off, {reinterpret_cast<const uint8_t*>(&v), 4}); }
void VgpuRig::reg_write64(uint64_t off, uint64_t v) { dev->write(off, {reinterpret_cast<const uint8_t*>(&v), 8}); }
uint32_t VgpuRig::reg_read32(uint64_t off) {
    uint32_t v = 0;
    dev->read(off, {reinterpret_cast<uint8_t*>(&v), 4});
    return v;
}
uint64_t VgpuRig::reg_read64(uint64_t off) {
    uint64_t v = 0;
    dev->read(off, {reinterpret_cast<uint8_t*>(&v), 8});
    return v;
}

uint32_t VgpuRig::enable(uint64_t gpa, uint32_t n) {
    if (gpa == kRingGpa) {
        std::vector<uint8_t> zero(vgpu_ring_bytes(n), 0); // the guest clears its ring first
        put(gpa, zero.data(), zero.size());
        ring_ = host_ptr(gpa);
        entries = n;
        producer_ = flushed_ = 0;
    }
    reg_write64(VGPU_REG_RING_GPA, gpa);
    reg_write32(VGPU_REG_RING_SIZE, n);
    reg_write32(VGPU_REG_CONTROL, VGPU_CONTROL_ENABLE);
    return reg_read32(VGPU_REG_ERROR);
}

void VgpuRig::reset() { reg_write32(VGPU_REG_CONTROL, VGPU_CONTROL_RESET); }

uint64_t VgpuRig::post(const Cmd& c) {
    const uint32_t slot = producer_ & (entries - 1);
    vgpu_command d{};
    d.opcode = c.opcode;
    d.flags = c.flags;
    d.payload_len = c.payload_len >= 0 ? static_cast<uint32_t>(c.payload_len) : static_cast<uint32_t>(c.payload.size());
    d.seq = next_seq_++;
    for (size_t i = 0; i < c.args.size() && i < 6; ++i) d.arg[i] = c.args[i];
    std::memcpy(ring_ + vgpu_command_offset(slot), &d, sizeof d);
    std::memset(ring_ + vgpu_payload_offset(entries, slot), 0, VGPU_PAYLOAD_BYTES);
    if (!c.payload.empty())
        std::memcpy(ring_ + vgpu_payload_offset(entries, slot), c.payload.data(),
                    std::min<size_t>(c.payload.size(), VGPU_PAYLOAD_BYTES));
    slot_of_[d.seq] = slot;
    if (d.seq > kSlotMemory) slot_of_.erase(d.seq - kSlotMemory); // long runs (stress tests) stay small
    set_producer(++producer_);
    return d.seq;
}

void VgpuRig::set_producer(uint32_t p) {
    std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(ring_ + offsetof(vgpu_ring_header, producer)))
        .store(p, std::memory_order_release);
}

uint32_t VgpuRig::consumer() const {
    return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(ring_ + offsetof(vgpu_ring_header, consumer)))
        .load(std::memory_order_acquire);
}

void VgpuRig::doorbell() { reg_write32(VGPU_DOORBELL_OFFSET, producer_); }

void VgpuRig::flush() {
    if (flushed_ == producer_) return;
    const uint32_t old = flushed_;
    flushed_ = producer_;
    std::atomic_thread_fence(std::memory_order_seq_cst); // producer store before the kick_event load
    const uint32_t event = std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(ring_ + offsetof(vgpu_ring_header, kick_event)))
                               .load(std::memory_order_relaxed);
    if (vgpu_need_kick(event, producer_, old)) {
        doorbell();
        ++kicks_sent;
    } else {
        ++kicks_suppressed;
    }
}

Done VgpuRig::wait(uint64_t seq) {
    Done d;
    // A guard against a hang, not a speed check: generous, so a loaded CI machine never trips it.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    const uint32_t slot = slot_of_.at(seq);
    uint8_t* rec = ring_ + vgpu_completion_offset(entries, slot);
    auto& done_seq = *reinterpret_cast<uint64_t*>(rec);
    while (std::atomic_ref<uint64_t>(done_seq).load(std::memory_order_acquire) != seq) {
        if (std::chrono::steady_clock::now() > deadline) {
            ADD_FAILURE() << "command seq " << seq << " never completed";
            return d;
        }
        std::this_thread::yield();
    }
    vgpu_completion c;
    std::memcpy(&c, rec, sizeof c);
    d.status = c.status;
    d.r0 = c.result[0];
    d.r1 = c.result[1];
    d.payload.assign(ring_ + vgpu_payload_offset(entries, slot), ring_ + vgpu_payload_offset(entries, slot) + VGPU_PAYLOAD_BYTES);
    return d;
}

uint64_t VgpuRig::alloc(uint64_t bytes) {
    const Done d = call({.opcode = VGPU_OP_MEM_ALLOC, .args = {bytes}});
    EXPECT_EQ(d.status, VGPU_SUCCESS);
    return d.r0;
}

uint64_t VgpuRig::module_with(std::string_view fn_name, uint64_t* function, std::span<const uint8_t> image) {
    if (image.empty()) image = {reinterpret_cast<const uint8_t*>(kHostModulePtx), kHostModulePtxBytes};
    put(kDataGpa, image.data(), image.size());
    const Done m = call({.opcode = VGPU_OP_MODULE_LOAD_DATA, .args = {kDataGpa, image.size()}});
    EXPECT_EQ(m.status, VGPU_SUCCESS);
    const Done f = call({.opcode = VGPU_OP_MODULE_GET_FUNCTION,
                         .args = {m.r0},
                         .payload = std::vector<uint8_t>(fn_name.begin(), fn_name.end())});
    EXPECT_EQ(f.status, VGPU_SUCCESS);
    *function = f.r0;
    return m.r0;
}

Cmd VgpuRig::launch_cmd(uint64_t fn, std::span<const std::vector<uint8_t>> params, Dim3 grid, Dim3 block,
                       uint64_t stream) {
    std::vector<uint8_t> buffer;
    const Done info = call({.opcode = VGPU_OP_FUNC_GET_PARAM_INFO, .args = {fn, 0}});
    bool fits = info.status == VGPU_SUCCESS && info.r0 == params.size() &&
                info.r0 * sizeof(vgpu_param_desc) <= info.payload.size();
    if (fits) {
        buffer.assign(info.r1, 0);
        for (size_t i = 0; i < params.size() && fits; ++i) {
            vgpu_param_desc d;
            std::memcpy(&d, info.payload.data() + i * sizeof d, sizeof d);
            fits = d.size == params[i].size() && uint64_t{d.offset} + d.size <= buffer.size();
            if (fits) std::memcpy(buffer.data() + d.offset, params[i].data(), d.size);
        }
    }
    if (!fits) {
        buffer.clear();
        for (const auto& p : params) buffer.insert(buffer.end(), p.begin(), p.end());
    }
    EXPECT_LE(buffer.size(), VGPU_PAYLOAD_BYTES) << "launch_cmd puts the parameter buffer in the payload only";
    const vgpu_launch_args a{fn, stream, {grid.x, grid.y, grid.z}, {block.x, block.y, block.z}, 0,
                             static_cast<uint32_t>(buffer.size())};
    Cmd c{.opcode = VGPU_OP_LAUNCH_KERNEL_PACKED, .args = std::vector<uint64_t>(6), .payload = std::move(buffer)};
    std::memcpy(c.args.data(), &a, sizeof a);
    return c;
}

} // namespace kvmgpu::vgpu::test
