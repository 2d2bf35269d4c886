// See vgpu_device_fuzz_body.h for the input format and the oracles.
#include "vgpu_device_fuzz_body.h"

#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "kvmtool-gpu/abi/platform_abi.h"
#include "kvmtool-gpu/abi/vgpu_abi.h"
#include "kvmtool-gpu/devices/vgpu/backend_factory.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_device.h"
#include "kvmtool-gpu/util/log.h"
#include "memmap/guest_memory.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/support/host_module_image.h"

namespace kvmgpu::vgpu::fuzz {
namespace {

// ---- the two VMs ------------------------------------------------------------

// A: the attacker. Two RAM regions with a hole, small limits so kernels and
// copies stay cheap (a matmul can touch at most the 128 KiB window).
constexpr uint64_t kLowBytes = 128 << 10;  // [0, 128 KiB)
constexpr uint64_t kHighBase = 1 << 20;    // [1 MiB, 1 MiB + 64 KiB)
constexpr uint64_t kHighBytes = 64 << 10;
constexpr uint64_t kRingGpa = 0x1000;
constexpr uint32_t kEntries = 8;
constexpr uint64_t kScratch = 0x8000; // prologue data; inside the first zero-copy window
constexpr uint64_t kQuota = 64 << 10;
constexpr uint32_t kMaxRing = 64;
// B: the victim, one region.
constexpr uint64_t kVictimBytes = 64 << 10;
constexpr uint64_t kVictimCanary = 0x8000;

[[noreturn]] void violated(const char* what) {
    std::fprintf(stderr, "vgpu_device_fuzz: ORACLE VIOLATED: %s\n", what);
    __builtin_trap();
}

// Best effort: PROT_NONE pages right before and after a region's host
// mapping, so a stray access just outside guest RAM faults instead of
// landing in a neighbouring mapping (ASan does not watch mmap'd memory).
void guard(uint8_t* host, uint64_t bytes) {
    for (uint8_t* at : {host - 4096, host + bytes})
        ::mmap(at, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
}

struct Vm {
    memmap::GuestMemory mem;
    HostBackend* host = nullptr;
    std::unique_ptr<VgpuDevice> dev;
    // The ring as this guest set it up.
    bool enabled = false;
    uint64_t ring_gpa = 0;
    uint32_t entries = 0;
    uint32_t producer = 0;   // what this guest last published
    uint32_t harvested = 0;  // completions up to here were looked at
    uint64_t base = 0;       // device command count when the ring was enabled
    uint64_t next_seq = 1;

    Vm(std::initializer_list<std::pair<uint64_t, uint64_t>> regions, VgpuOptions opts) {
        for (auto [base_gpa, bytes] : regions) {
            mem.add_region(memmap::GuestPhysAddr{base_gpa}, memmap::Backing::create(memmap::PageSize::k4K, bytes));
            guard(mem.regions().back().backing->data(), bytes);
        }
        auto backend = make_host_backend(HostBackendOptions{.total_bytes = 8 << 20, .bounce_bytes = 4096});
        host = backend.get();
        dev = std::make_unique<VgpuDevice>(mem, std::move(backend), opts);
        dev->start();
    }

    uint8_t* at(uint64_t gpa, uint64_t len) {
        auto s = mem.translate(memmap::GuestPhysAddr{gpa}, len);
        return s ? s->data() : nullptr;
    }
    uint8_t* ring() { return at(ring_gpa, vgpu_ring_bytes(entries)); }
    void write_reg(uint64_t off, const void* v, size_t n) { dev->write(off, {static_cast<const uint8_t*>(v), n}); }
    void write32(uint64_t off, uint32_t v) { write_reg(off, &v, 4); }
    void write64(uint64_t off, uint64_t v) { write_reg(off, &v, 8); }
    uint32_t read32(uint64_t off) {
        uint32_t v = 0;
        dev->read(off, {reinterpret_cast<uint8_t*>(&v), 4});
        return v;
    }
    uint64_t commands() const { return dev->counters().commands; }

    // A CONTROL write, keeping the harness's view of the ring in step.
    void control(uint32_t value) { write_any(VGPU_REG_CONTROL, &value, 4); }
    // Any register write; if it was a CONTROL write that (re)started the
    // ring, the harness adopts the new ring, then lets the device settle.
    void write_any(uint64_t off, const void* v, size_t n) {
        const uint64_t before = commands(); // the device is idle here: settle() ran
        const uint32_t was = read32(VGPU_REG_STATUS);
        write_reg(off, v, n);
        uint32_t value = 0;
        std::memcpy(&value, v, std::min<size_t>(n, 4));
        const bool control = off == VGPU_REG_CONTROL && n == 4 && !(value & ~uint32_t{3});
        const uint32_t now = read32(VGPU_REG_STATUS);
        const bool fresh = control && (now & VGPU_STATUS_ENABLED) &&
                           (!(was & VGPU_STATUS_ENABLED) || (value & VGPU_CONTROL_RESET));
        if (!(now & VGPU_STATUS_ENABLED)) {
            enabled = false;
        } else if (fresh) {
            uint64_t gpa = 0;
            dev->read(VGPU_REG_RING_GPA, {reinterpret_cast<uint8_t*>(&gpa), 8});
            enabled = true;
            ring_gpa = gpa;
            entries = read32(VGPU_REG_RING_SIZE);
            base = before;
            producer = load_producer();
            harvested = 0;
        }
        settle();
    }
    bool enable(uint64_t gpa, uint32_t n) {
        if (uint8_t* r = at(gpa, vgpu_ring_bytes(n))) std::memset(r, 0, vgpu_ring_bytes(n));
        write64(VGPU_REG_RING_GPA, gpa);
        write32(VGPU_REG_RING_SIZE, n);
        control(VGPU_CONTROL_ENABLE);
        return enabled;
    }

    uint32_t load_producer() {
        return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(ring())).load(std::memory_order_acquire);
    }
    void publish(uint32_t p) {
        producer = p;
        if (enabled) std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(ring())).store(p, std::memory_order_release);
    }

    // Rings the doorbell and waits until the device has run everything up
    // to the producer word in RAM, or has broken the ring, or is disabled.
    void settle() {
        write32(VGPU_DOORBELL_OFFSET, producer);
        if (!enabled) return;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        for (;;) {
            if (!(read32(VGPU_REG_STATUS) & VGPU_STATUS_ENABLED)) {
                enabled = false;
                return;
            }
            const uint32_t done = static_cast<uint32_t>(commands() - base);
            if (load_producer() == done) break;
            if (std::chrono::steady_clock::now() > deadline) violated("the device did not settle within 10 s");
            std::this_thread::yield();
        }
        // The command count moves before the last completion and the
        // consumer index are written: give those a moment.
        for (int i = 0; i < 1000; ++i) {
            const uint32_t c = std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(
                                   ring() + offsetof(vgpu_ring_header, consumer)))
                                   .load(std::memory_order_acquire);
            if (c == load_producer()) break;
            std::this_thread::yield();
        }
    }

    // Writes one well-formed command at the producer and advances it.
    uint32_t put(uint16_t op, std::initializer_list<uint64_t> args, std::string_view payload = {}) {
        const uint32_t slot = producer & (entries - 1);
        vgpu_command c{};
        c.opcode = op;
        c.payload_len = static_cast<uint32_t>(payload.size());
        c.seq = next_seq++;
        size_t i = 0;
        for (uint64_t a : args) c.arg[i++] = a;
        std::memcpy(ring() + vgpu_command_offset(slot), &c, sizeof c);
        if (!payload.empty()) std::memcpy(ring() + vgpu_payload_offset(entries, slot), payload.data(), payload.size());
        publish(producer + 1);
        return slot;
    }
    vgpu_completion completion(uint32_t slot) {
        vgpu_completion out;
        std::memcpy(&out, ring() + vgpu_completion_offset(entries, slot), sizeof out);
        return out;
    }
    uint64_t result_of(uint32_t slot, const char* what) {
        const vgpu_completion c = completion(slot);
        if (c.status != VGPU_SUCCESS) violated(what);
        return c.result[0];
    }
};

struct World {
    Vm a{{{0, kLowBytes}, {kHighBase, kHighBytes}},
         VgpuOptions{.max_ring = kMaxRing, .device_mem_quota = kQuota, .max_handles = 16,
                     .max_module_bytes = 16 << 10, .log_per_second = 0}};
    Vm b{{{0, kVictimBytes}}, VgpuOptions{.device_mem_quota = kQuota, .max_handles = 16, .log_per_second = 0}};
    std::vector<uint64_t> victim;  // B's handles and device addresses
    std::vector<uint8_t> canary = std::vector<uint8_t>(4096);
    uint64_t b_buf = 0;

    World() {
        set_log_level(LogLevel::Error);
        for (size_t i = 0; i < canary.size(); ++i) canary[i] = static_cast<uint8_t>(i * 7 + 3);
        if (!b.enable(0, kEntries)) violated("victim ring refused");
        std::memcpy(b.at(kVictimCanary, 4096), canary.data(), 4096);
        std::memcpy(b.at(kVictimCanary + 4096, test::kHostModulePtxBytes), test::kHostModulePtx,
                    test::kHostModulePtxBytes);
        const uint32_t s_buf = b.put(VGPU_OP_MEM_ALLOC, {4096});
        const uint32_t s_st = b.put(VGPU_OP_STREAM_CREATE, {0});
        const uint32_t s_ev = b.put(VGPU_OP_EVENT_CREATE, {0});
        const uint32_t s_mod = b.put(VGPU_OP_MODULE_LOAD_DATA, {kVictimCanary + 4096, test::kHostModulePtxBytes});
        const uint32_t s_win = b.put(VGPU_OP_GUEST_RAM_DEVICE_PTR, {kVictimCanary, 4096});
        b.settle();
        b_buf = b.result_of(s_buf, "victim alloc");
        victim = {b_buf, b.result_of(s_st, "victim stream"), b.result_of(s_ev, "victim event"),
                  b.result_of(s_mod, "victim module"), b.result_of(s_win, "victim window")};
        const uint32_t s_fn = b.put(VGPU_OP_MODULE_GET_FUNCTION, {victim[3]}, "vector_add");
        const uint32_t s_cp = b.put(VGPU_OP_MEMCPY_HTOD, {b_buf, kVictimCanary, 4096, 0});
        b.settle();
        victim.push_back(b.result_of(s_fn, "victim function"));
        b.result_of(s_cp, "victim copy");
        victim.push_back(reinterpret_cast<uint64_t>(b.at(kVictimCanary, 1))); // a raw host pointer
    }

    void check_victim() {
        // B's executor is asleep (B runs nothing after set-up), so reading
        // its backend from here does not race with it.
        const uint8_t* dev_mem = b.host->translate(b_buf, 4096);
        if (!dev_mem || std::memcmp(dev_mem, canary.data(), 4096) != 0) violated("the other VM's device memory changed");
        if (std::memcmp(b.at(kVictimCanary, 4096), canary.data(), 4096) != 0) violated("the other VM's guest RAM changed");
        if (b.dev->counters().recoveries != 0) violated("the other VM lost its context");
    }
};

World& world() {
    static World* w = new World; // lives for the process (the fuzzer never returns)
    return *w;
}

// ---- reading the input ------------------------------------------------------

using kvmgpu::fuzz::Input;

// Every opcode of the table (vgpu_ops.h), in its order, and the launch once
// more so launches come twice as often. make_corpus.py reads the same table:
// the seeds name opcodes by their index here.
#define VGPU_FUZZ_OPCODE_(name, number, flags, args, result) VGPU_OP_##name,
constexpr uint16_t kOpcodes[] = {VGPU_OPS(VGPU_FUZZ_OPCODE_) VGPU_OP_LAUNCH_KERNEL_PACKED};
#undef VGPU_FUZZ_OPCODE_
// The sizes of the structured payloads (vgpu_array_abi.h): a descriptor of
// the right size filled with interesting values gets past the size check.
constexpr uint32_t kStructSizes[] = {sizeof(vgpu_array_desc), sizeof(vgpu_copy3d), sizeof(vgpu_tex_resource),
                                     sizeof(vgpu_tex_object)};
constexpr std::string_view kNames[] = {"vector_add", "matmul", "empty_kernel", "_Z10vector_addPKfS0_Pfj", "nope"};

struct Session {
    World& w;
    Vm& a;
    Input in;
    std::vector<uint64_t> known; // this VM's own handles and device addresses

    uint64_t edge(uint8_t i) {
        const uint64_t e[] = {0,           1,          ~0ull,           1ull << 63,        kLowBytes,
                              kLowBytes - 8, kHighBase, kHighBase + kHighBytes, kHighBase - 8, kHighBase + kHighBytes - 8,
                              KVMGPU_VGPU_GPA, KVMGPU_MMIO_BASE, kRingGpa, VGPU_MAX_SG_ENTRIES, VGPU_MAX_SG_ENTRIES + 1ull,
                              0x0D00'0000'0000'0000ull, 0x0E00'0000'0000'0000ull, ~0ull - 4095, 0xFFFFFFFFull, 4096,
                              2ull << 20 /* a VMM granule */, 4ull << 20, ~0ull - (2ull << 20) + 1, 3 /* READWRITE */};
        return e[i % std::size(e)];
    }
    uint64_t ram_gpa() {
        const bool high = in.get<uint8_t>() & 1;
        const uint64_t off = in.get<uint32_t>();
        return high ? kHighBase + off % kHighBytes : off % kLowBytes;
    }
    uint64_t value() {
        const uint8_t sel = in.get<uint8_t>();
        switch (sel % 8) {
        case 0: return in.get<uint64_t>();
        case 1: return known.empty() ? 0 : known[in.get<uint8_t>() % known.size()] + in.get<int8_t>() * 8;
        case 2: return w.victim[in.get<uint8_t>() % w.victim.size()] + in.get<int8_t>();
        case 3: return ram_gpa();
        case 4: return edge(in.get<uint8_t>());
        case 5: return in.get<uint16_t>();
        case 6: return (in.get<uint8_t>() & 1 ? kHighBase + kHighBytes : kLowBytes) - in.get<uint8_t>();
        default: return reinterpret_cast<uint64_t>(a.mem.regions().front().backing->data()) + in.get<uint16_t>();
        }
    }

    void op_command() {
        if (!a.enabled) return;
        const uint32_t slot = (a.producer + in.get<uint8_t>()) & (a.entries - 1);
        vgpu_command c{};
        const uint8_t o = in.get<uint8_t>();
        c.opcode = o < 240 ? kOpcodes[o % std::size(kOpcodes)] : in.get<uint16_t>();
        const uint8_t f = in.get<uint8_t>();
        c.flags = f < 250 ? (f & 1) : in.get<uint16_t>();
        c.seq = a.next_seq++;
        for (auto& arg : c.arg) arg = value();
        uint8_t payload[VGPU_PAYLOAD_BYTES] = {};
        uint32_t len = 0;
        switch (in.get<uint8_t>() % 5) {
        case 0: break;
        case 4: { // an array, copy or texture descriptor, word by word
            len = kStructSizes[in.get<uint8_t>() % std::size(kStructSizes)];
            for (uint32_t at = 0; at + 8 <= len; at += 8) {
                const uint64_t v = value();
                std::memcpy(payload + at, &v, 8);
            }
            break;
        }
        case 1: { // raw bytes
            auto b = in.bytes(in.get<uint16_t>() % (VGPU_PAYLOAD_BYTES + 1));
            std::memcpy(payload, b.data(), b.size());
            len = static_cast<uint32_t>(b.size());
            break;
        }
        case 2: { // a kernel name
            const std::string_view n = kNames[in.get<uint8_t>() % std::size(kNames)];
            std::memcpy(payload, n.data(), n.size());
            len = static_cast<uint32_t>(n.size());
            break;
        }
        default: { // a packed launch's parameter buffer: values at their offsets
            // Layouts: mostly the reference kernels' own (8, 8, 8, 4 bytes
            // at 0, 8, 16, 24), else sizes a real kernel might take (1 .. 64
            // bytes, structs) in any number at their natural alignment, so
            // buffers of many lengths meet the device model's check against
            // the kernel's layout (arg5's length, fuzzed too, is what it checks).
            constexpr uint16_t kSizes[] = {8, 4, 1, 2, 12, 16, 24, 64};
            const uint8_t shape = in.get<uint8_t>();
            const uint32_t n = shape < 128 ? shape % 6 : shape % 12;
            uint32_t off = 0;
            for (uint32_t i = 0; i < n && off < VGPU_PAYLOAD_BYTES; ++i) {
                const uint8_t pick = in.get<uint8_t>();
                const uint16_t size = shape < 128 ? (i == 3 ? 4 : 8) : kSizes[pick % std::size(kSizes)];
                const uint32_t align = std::min<uint32_t>(size & -size, 8); // lowest set bit: 12 -> 4, 24 -> 8
                off = std::min<uint32_t>((off + align - 1) & ~(align - 1), VGPU_PAYLOAD_BYTES);
                for (uint32_t b = 0; b < size && off + b < VGPU_PAYLOAD_BYTES; b += 8) {
                    const uint64_t v = value();
                    std::memcpy(payload + off + b, &v, std::min<uint32_t>({8u, size - b, VGPU_PAYLOAD_BYTES - off - b}));
                }
                off += size;
            }
            len = std::min<uint32_t>(off, VGPU_PAYLOAD_BYTES);
            break;
        }
        }
        const uint16_t tweak = in.get<uint16_t>();
        c.payload_len = tweak < 0xFF00 ? len : tweak; // now and then a payload_len that lies
        std::memcpy(a.ring() + vgpu_command_offset(slot), &c, sizeof c);
        std::memcpy(a.ring() + vgpu_payload_offset(a.entries, slot), payload, sizeof payload);
    }

    void op_publish() {
        const uint8_t n = in.get<uint8_t>();
        a.publish(n == 0xFF ? in.get<uint32_t>() : a.producer + 1 + n % a.entries);
        a.settle();
        harvest();
    }

    // Results of the guest's own commands become values it can use later.
    void harvest() {
        if (!a.enabled) return;
        const uint32_t done = static_cast<uint32_t>(a.commands() - a.base);
        if (done - a.harvested > a.entries) a.harvested = done - a.entries;
        for (; a.harvested != done; ++a.harvested) {
            const vgpu_completion c = a.completion(a.harvested & (a.entries - 1));
            if (c.status == VGPU_SUCCESS && c.result[0] != 0 && known.size() < 48) known.push_back(c.result[0]);
        }
    }

    void op_poke() {
        const uint64_t gpa = in.get<uint8_t>() % 4 == 0 ? a.ring_gpa + in.get<uint16_t>() % 4608 : ram_gpa();
        auto b = in.bytes(in.get<uint8_t>() % 65);
        if (uint8_t* p = a.at(gpa, b.size())) std::memcpy(p, b.data(), b.size());
    }

    void op_sg_list() {
        const uint64_t gpa = ram_gpa();
        const uint32_t n = in.get<uint8_t>() % 33;
        for (uint32_t i = 0; i < n; ++i) {
            const vgpu_sg_entry e{value(), in.get<uint8_t>() % 4 ? uint64_t{in.get<uint16_t>()} : value()};
            if (uint8_t* p = a.at(gpa + 16 * i, 16)) std::memcpy(p, &e, 16);
        }
    }

    void op_reg_write() {
        const uint16_t o = in.get<uint16_t>();
        const uint64_t off = o & 0x8000 ? (o & 0x3FFF) : o % 0x40; // mostly the registers, else anywhere
        const size_t width = 1 + in.get<uint8_t>() % 8;
        const uint64_t v = value();
        a.write_any(off, &v, width);
    }

    void op_reg_read() {
        const uint64_t off = in.get<uint16_t>() % (KVMGPU_VGPU_SIZE + 0x10);
        const size_t width = 1 + in.get<uint8_t>() % 8;
        uint8_t buf[16];
        std::memset(buf, 0xCD, sizeof buf);
        a.dev->read(off, {buf, width});
        for (size_t i = width; i < sizeof buf; ++i)
            if (buf[i] != 0xCD) violated("a register read wrote past its width");
    }

    void op_reset() {
        a.control(VGPU_CONTROL_RESET);
        const uint8_t how = in.get<uint8_t>();
        if (how % 4 != 0) {
            a.enable(kRingGpa, kEntries);
        } else { // anywhere, any size
            const uint64_t gpa = value() & ~uint64_t{0xFFF};
            a.enable(gpa, uint32_t{1} << (in.get<uint8_t>() % 8 + 2));
        }
    }

    void op_burst() {
        if (!a.enabled) return;
        const uint32_t n = 1 + in.get<uint8_t>() % a.entries;
        for (uint32_t i = 0; i < n; ++i) a.put(i % 2 ? VGPU_OP_INIT : VGPU_OP_NOP, {});
        a.settle();
        harvest();
    }
};

// RESET, check nothing survived it, then a fresh ring and the prologue that
// gives this VM its first handles. Any failure here means the device did
// not carry on after the previous input.
void prologue(Session& s) {
    Vm& a = s.a;
    a.control(VGPU_CONTROL_RESET);
    if (a.enabled || a.read32(VGPU_REG_STATUS) != 0) violated("RESET left the device enabled or broken");
    if (a.host->live_allocations() != 0) violated("RESET left backend allocations behind");
    for (const memmap::Region& r : a.mem.regions()) std::memset(r.backing->data(), 0, r.size());
    if (!a.enable(kRingGpa, kEntries)) violated("a valid ring was refused after RESET");
    std::memcpy(a.at(kScratch, test::kHostModulePtxBytes), test::kHostModulePtx, test::kHostModulePtxBytes);
    const uint32_t info = a.put(VGPU_OP_MEM_GET_INFO, {});
    const uint32_t d0 = a.put(VGPU_OP_MEM_ALLOC, {4096});
    const uint32_t d1 = a.put(VGPU_OP_MEM_ALLOC, {16384});
    const uint32_t st = a.put(VGPU_OP_STREAM_CREATE, {0});
    const uint32_t ev = a.put(VGPU_OP_EVENT_CREATE, {0});
    const uint32_t mod = a.put(VGPU_OP_MODULE_LOAD_DATA, {kScratch, test::kHostModulePtxBytes});
    const uint32_t w1 = a.put(VGPU_OP_GUEST_RAM_DEVICE_PTR, {kScratch, kLowBytes - kScratch});
    const uint32_t w2 = a.put(VGPU_OP_GUEST_RAM_DEVICE_PTR, {kHighBase, kHighBytes});
    a.settle();
    const vgpu_completion i = a.completion(info);
    if (i.status != VGPU_SUCCESS || i.result[0] != kQuota || i.result[1] != kQuota)
        violated("after RESET the quota is not wholly free");
    s.known = {a.result_of(d0, "alloc"), a.result_of(d1, "alloc"), a.result_of(st, "stream"), a.result_of(ev, "event"),
               a.result_of(mod, "module"), a.result_of(w1, "window"), a.result_of(w2, "window")};
    const uint64_t m = s.known[4];
    const uint32_t f0 = a.put(VGPU_OP_MODULE_GET_FUNCTION, {m}, "vector_add");
    const uint32_t f1 = a.put(VGPU_OP_MODULE_GET_FUNCTION, {m}, "matmul");
    const uint32_t f2 = a.put(VGPU_OP_MODULE_GET_FUNCTION, {m}, "empty_kernel");
    a.settle();
    for (uint32_t f : {f0, f1, f2}) s.known.push_back(a.result_of(f, "function"));
    a.harvested = static_cast<uint32_t>(a.commands() - a.base);
}

} // namespace

void run_device_input(const uint8_t* data, size_t size, VgpuCounterSnapshot* seen) {
    World& w = world();
    Session s{w, w.a, Input(data, size), {}};
    prologue(s);
    const VgpuCounterSnapshot before = w.a.dev->counters();
    for (int ops = 0; ops < 64 && !s.in.empty(); ++ops) {
        switch (s.in.get<uint8_t>() % 10) {
        case 0: case 1: s.op_command(); break;
        case 2: s.op_publish(); break;
        case 3: s.op_poke(); break;
        case 4: s.op_sg_list(); break;
        case 5: s.op_reg_write(); break;
        case 6: s.op_reg_read(); break;
        case 7: s.op_reset(); break;
        case 8: s.op_burst(); break;
        default: s.op_publish(); break;
        }
    }
    s.a.settle();
    w.check_victim();
    if (seen) {
        const VgpuCounterSnapshot after = w.a.dev->counters();
        *seen = after;
        seen->commands -= before.commands, seen->errors -= before.errors, seen->broken -= before.broken;
        seen->recoveries -= before.recoveries, seen->bytes_htod -= before.bytes_htod;
        seen->bytes_dtoh -= before.bytes_dtoh, seen->bytes_dtod -= before.bytes_dtod;
        for (size_t i = 0; i < seen->per_opcode.size(); ++i) seen->per_opcode[i] -= before.per_opcode[i];
    }
}

} // namespace kvmgpu::vgpu::fuzz
