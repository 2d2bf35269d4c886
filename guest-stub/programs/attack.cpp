// attack: a hostile guest. It does not use the guest CUDA API: it writes the
// vGPU's registers and its own command ring directly, with values a correct
// driver never would, and checks that every attack is refused with an error
// (a status in the completion, VGPU_REG_ERROR, or a broken ring) and that
// the device still works after RESET. Exit 0 only if every attack was
// refused and the device carried on.
//
// Exit codes: 1 an attack was not refused; 2 the device did not carry on
// (a good command failed, or no completion came); 3 no vGPU.
// Cmdline: fault=1 also launches a faulting kernel on a real GPU (on the
// host backend it always runs; on CUDA an illegal address is sticky for the
// whole VMM process, see kvmtool-gpu/devices/vgpu/README.md).
#include "guest-stub/kernels/kernels_image.h"
#include "guest-stub/runtime/runtime.h"

using namespace guest;

namespace {

enum AttackExit : uint32_t { kNotRefused = 1, kNoCarryOn = 2, kNoDevice = 3 };

constexpr uint32_t kEntries = 16;
constexpr uint32_t kNoCompletion = 0xFFFFFFFFu;

uint64_t reg(uint32_t off) { return KVMGPU_VGPU_GPA + off; }
uint32_t read_reg(uint32_t off) { return mmio_read32(reg(off)); }

// One byte-wide register write (mmio.h has 32/64-bit ones only).
void mmio_write8(uint64_t addr, uint8_t v) { asm volatile("movb %0, (%1)" : : "q"(v), "r"(addr) : "memory"); }

struct Ring {
    uint8_t* base = nullptr;
    uint32_t producer = 0;
    uint64_t seq = 1;
    uint64_t timeout = 0;

    vgpu_ring_header* header() { return reinterpret_cast<vgpu_ring_header*>(base); }
    vgpu_command* command(uint32_t slot) { return reinterpret_cast<vgpu_command*>(base + vgpu_command_offset(slot)); }
    volatile vgpu_completion* completion(uint32_t slot)
    {
        return reinterpret_cast<volatile vgpu_completion*>(base + vgpu_completion_offset(kEntries, slot));
    }
    uint8_t* payload(uint32_t slot) { return base + vgpu_payload_offset(kEntries, slot); }

    // Zeroes the ring, writes RING_GPA/RING_SIZE, ENABLE. Returns STATUS.
    uint32_t enable()
    {
        memset(base, 0, vgpu_ring_bytes(kEntries));
        producer = 0;
        mmio_write64(reg(VGPU_REG_RING_GPA), reinterpret_cast<uintptr_t>(base));
        mmio_write32(reg(VGPU_REG_RING_SIZE), kEntries);
        mmio_write32(reg(VGPU_REG_CONTROL), VGPU_CONTROL_ENABLE);
        return read_reg(VGPU_REG_STATUS);
    }

    void publish(uint32_t p)
    {
        compiler_barrier(); // descriptors before the index (x86: stores stay in order)
        header()->producer = p;
        compiler_barrier();
        mmio_write32(reg(VGPU_DOORBELL_OFFSET), p); // a kick in every doorbell mode
    }

    // Writes one command (any field values) and waits for its completion.
    // Returns its status, kNoCompletion if none came within the time-out.
    uint32_t call(uint16_t op, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0,
                  uint64_t a4 = 0, uint64_t a5 = 0, const void* pl = nullptr, uint32_t pl_len = 0,
                  uint16_t flags = 0, uint64_t* r0 = nullptr, int64_t lie_len = -1)
    {
        const uint32_t slot = producer % kEntries;
        vgpu_command* c = command(slot);
        c->opcode = op;
        c->flags = flags;
        c->payload_len = lie_len >= 0 ? (uint32_t)lie_len : pl_len;
        c->seq = seq;
        c->arg[0] = a0, c->arg[1] = a1, c->arg[2] = a2, c->arg[3] = a3, c->arg[4] = a4, c->arg[5] = a5;
        if (pl_len)
            memcpy(payload(slot), pl, pl_len);
        const uint64_t want = seq++;
        publish(++producer);
        const uint64_t t0 = rdtsc();
        while (completion(slot)->seq != want) {
            if (rdtsc() - t0 > timeout)
                return kNoCompletion;
            cpu_relax();
        }
        compiler_barrier();
        if (r0)
            *r0 = completion(slot)->result[0];
        return completion(slot)->status;
    }

    // Waits (bounded) for STATUS to equal `want`.
    bool status_becomes(uint32_t want)
    {
        const uint64_t t0 = rdtsc();
        while (read_reg(VGPU_REG_STATUS) != want)
            if (rdtsc() - t0 > timeout)
                return false;
        return true;
    }
};

Ring g_ring;
uint32_t g_refused = 0, g_not_refused = 0;

void expect(const char* what, uint32_t got, uint32_t want)
{
    if (got == want) {
        ++g_refused;
        return;
    }
    ++g_not_refused;
    printf("attack: NOT REFUSED: %s: status %u, expected %u\n", what, got, want);
}

// A command that must come back with `want` (an error status).
#define CALL_EXPECT(want, what, ...) expect(what, g_ring.call(__VA_ARGS__), want)

// ENABLE from raw register values (RESET first); must be refused.
void bad_ring(const char* what, uint64_t gpa, uint32_t entries)
{
    mmio_write32(reg(VGPU_REG_CONTROL), VGPU_CONTROL_RESET);
    mmio_write64(reg(VGPU_REG_RING_GPA), gpa);
    mmio_write32(reg(VGPU_REG_RING_SIZE), entries);
    mmio_write32(reg(VGPU_REG_CONTROL), VGPU_CONTROL_ENABLE);
    expect(what, read_reg(VGPU_REG_ERROR), VGPU_ERROR_INVALID_VALUE);
    expect(what, read_reg(VGPU_REG_STATUS) & VGPU_STATUS_ENABLED, 0);
}

void registers()
{
    const uint64_t ram = ram_size();
    const uint32_t max_ring = read_reg(VGPU_REG_MAX_RING);
    const uint64_t ring = reinterpret_cast<uintptr_t>(g_ring.base);
    bad_ring("ring size 0", ring, 0);
    bad_ring("ring size 3", ring, 3);
    bad_ring("ring size 4 (below VGPU_MIN_RING)", ring, 4);
    bad_ring("ring size 2 * MAX_RING", ring, max_ring * 2);
    bad_ring("ring size 2^31", ring, 0x80000000u);
    bad_ring("ring size 2^32 - 1", ring, 0xFFFFFFFFu);
    bad_ring("ring not 4 KiB aligned", ring + 64, kEntries);
    bad_ring("ring at the end of RAM", ram - 4096, kEntries);
    bad_ring("ring past RAM", ram, kEntries);
    bad_ring("ring in the MMIO window", KVMGPU_VGPU_GPA, kEntries);
    bad_ring("ring at 2^63", 1ull << 63, kEntries);
    bad_ring("ring at 2^64 - 4096 (wraps)", ~0ull & ~0xFFFull, kEntries);
    // Unknown CONTROL bits; writes to read-only registers; odd widths.
    mmio_write32(reg(VGPU_REG_CONTROL), 0x80000000u);
    expect("unknown CONTROL bits", read_reg(VGPU_REG_ERROR), VGPU_ERROR_INVALID_VALUE);
    mmio_write32(reg(VGPU_REG_MAGIC), 0);
    mmio_write32(reg(VGPU_REG_MAX_RING), 1u << 30);
    mmio_write64(reg(VGPU_REG_STATUS), ~0ull);
    mmio_write8(reg(VGPU_REG_CONTROL + 1), 0xFF);
    mmio_write8(reg(VGPU_REG_RING_SIZE + 3), 0xFF); // staged only
    expect("MAGIC is read-only", read_reg(VGPU_REG_MAGIC) == VGPU_MAGIC, 1);
    expect("MAX_RING is read-only", read_reg(VGPU_REG_MAX_RING), max_ring);
    expect("STATUS is read-only", read_reg(VGPU_REG_STATUS), 0);
    // Reads past the register block: zeros.
    expect("read past the registers", mmio_read32(reg(0x800)), 0);
}

void ring_indices()
{
    // Producer far ahead, behind the consumer, and half-way round: each
    // breaks the ring; RESET + ENABLE recovers.
    const uint32_t bad[] = {kEntries + 2, 0xFFFFFFFFu, 0x80000000u};
    for (uint32_t p : bad) {
        expect("NOP before", g_ring.call(VGPU_OP_NOP), VGPU_SUCCESS);
        g_ring.publish(g_ring.producer + p);
        expect("producer beyond the ring breaks it", g_ring.status_becomes(VGPU_STATUS_BROKEN), 1);
        mmio_write32(reg(VGPU_REG_CONTROL), VGPU_CONTROL_ENABLE);
        expect("ENABLE on a broken ring", read_reg(VGPU_REG_STATUS), VGPU_STATUS_BROKEN);
        mmio_write32(reg(VGPU_REG_CONTROL), VGPU_CONTROL_RESET);
        expect("RESET clears the broken ring", read_reg(VGPU_REG_STATUS), 0);
        expect("ENABLE after RESET", g_ring.enable(), VGPU_STATUS_ENABLED);
    }
    // Scribbling the device's consumer word changes nothing.
    g_ring.header()->consumer = 12345;
    expect("NOP after a scribbled consumer", g_ring.call(VGPU_OP_NOP), VGPU_SUCCESS);
    // (The completion is written before the consumer index: wait for it.)
    const uint64_t t0 = rdtsc();
    while (g_ring.header()->consumer != g_ring.producer && rdtsc() - t0 < g_ring.timeout)
        cpu_relax();
    expect("consumer rewritten by the device", g_ring.header()->consumer, g_ring.producer);
    // ENABLE while enabled.
    mmio_write32(reg(VGPU_REG_CONTROL), VGPU_CONTROL_ENABLE);
    expect("ENABLE while enabled", read_reg(VGPU_REG_ERROR), VGPU_ERROR_INVALID_VALUE);
}

void commands(uint8_t* data)
{
    const uint64_t ram = ram_size();
    const uint64_t buf = reinterpret_cast<uintptr_t>(data);
    uint64_t d = 0;
    expect("alloc", g_ring.call(VGPU_OP_MEM_ALLOC, 4096, 0, 0, 0, 0, 0, nullptr, 0, 0, &d), VGPU_SUCCESS);
    const uint32_t E = VGPU_ERROR_INVALID_VALUE, H = VGPU_ERROR_INVALID_HANDLE;

    // Guest-physical addresses outside RAM, and lengths that wrap.
    const uint64_t outside[] = {ram, ram - 8, KVMGPU_MMIO_BASE, KVMGPU_VGPU_GPA, 1ull << 63, ~0ull - 15};
    for (uint64_t gpa : outside) {
        CALL_EXPECT(E, "HTOD from outside RAM", VGPU_OP_MEMCPY_HTOD, d, gpa, 16, 0);
        CALL_EXPECT(E, "DTOH to outside RAM", VGPU_OP_MEMCPY_DTOH, gpa, d, 16, 0);
        CALL_EXPECT(E, "module image outside RAM", VGPU_OP_MODULE_LOAD_DATA, gpa, 16);
        CALL_EXPECT(E, "zero-copy pointer outside RAM", VGPU_OP_GUEST_RAM_DEVICE_PTR, gpa, 16);
        CALL_EXPECT(E, "SG list outside RAM", VGPU_OP_MEMCPY_HTOD_SG, d, gpa, 1, 0, 0);
    }
    CALL_EXPECT(E, "length wrapping 2^64", VGPU_OP_MEMCPY_HTOD, d, buf, 0 - buf, 0);
    CALL_EXPECT(E, "length 2^64 - 1", VGPU_OP_MEMCPY_DTOH, buf, d, ~0ull, 0);
    CALL_EXPECT(E, "memset_d32 count * 4 wraps", VGPU_OP_MEMSET_D32, d, 0, 1ull << 62, 0);
    CALL_EXPECT(E, "device range past the allocation", VGPU_OP_MEMCPY_HTOD, d + 1, buf, 4096, 0);
    CALL_EXPECT(E, "device pointer that wraps", VGPU_OP_MEMCPY_HTOD, ~0ull - 7, buf, 16, 0);
    CALL_EXPECT(E, "a host-looking pointer as device memory", VGPU_OP_MEMCPY_HTOD, 0x7fff00001000ull, buf, 16, 0);
    CALL_EXPECT(E, "guest-physical address as device memory", VGPU_OP_MEMCPY_DTOD, buf, d, 16, 0);

    // Scatter-gather lists: too long, entries outside RAM or wrapping.
    auto* sg = reinterpret_cast<vgpu_sg_entry*>(data + 8192);
    const uint64_t list = buf + 8192;
    CALL_EXPECT(E, "SG count > VGPU_MAX_SG_ENTRIES", VGPU_OP_MEMCPY_HTOD_SG, d, list, VGPU_MAX_SG_ENTRIES + 1ull, 0, 0);
    CALL_EXPECT(E, "SG strategy unknown", VGPU_OP_MEMCPY_HTOD_SG, d, list, 1, 0, 99);
    sg[0] = {ram - 8, 16};
    CALL_EXPECT(E, "SG entry leaving RAM", VGPU_OP_MEMCPY_DTOH_SG, d, list, 1, 0, 0);
    sg[0] = {buf, 0 - buf};
    CALL_EXPECT(E, "SG entry wrapping 2^64", VGPU_OP_MEMCPY_DTOH_SG, d, list, 1, 0, 0);
    sg[0] = {buf, 0};
    CALL_EXPECT(E, "SG entry of length 0", VGPU_OP_MEMCPY_HTOD_SG, d, list, 1, 0, 0);
    for (int i = 0; i < 64; ++i)
        sg[i] = {buf, 128}; // the same range again and again: 8 KiB > the 4 KiB allocation
    CALL_EXPECT(E, "SG total larger than the allocation", VGPU_OP_MEMCPY_HTOD_SG, d, list, 64, 0, 0);

    // Handles never issued, forged, freed, or of the wrong kind.
    CALL_EXPECT(H, "stream never issued", VGPU_OP_STREAM_SYNCHRONIZE, 0x5300001200000001ull);
    CALL_EXPECT(H, "event never issued", VGPU_OP_EVENT_RECORD, 0x4500000000000001ull, 0);
    CALL_EXPECT(H, "function never issued", VGPU_OP_LAUNCH_KERNEL_PACKED, 0x4600000000000001ull, 0, 1 | 1ull << 32,
                1 | 1ull << 32, 1 | 1ull << 32, 0);
    CALL_EXPECT(H, "module never issued", VGPU_OP_MODULE_UNLOAD, 0x4d00000000000001ull);
    uint64_t s = 0;
    expect("stream create", g_ring.call(VGPU_OP_STREAM_CREATE, 0, 0, 0, 0, 0, 0, nullptr, 0, 0, &s), VGPU_SUCCESS);
    CALL_EXPECT(H, "stream used as an event", VGPU_OP_EVENT_SYNCHRONIZE, s);
    CALL_EXPECT(H, "stream with another generation", VGPU_OP_STREAM_SYNCHRONIZE, s ^ (1ull << 40));
    expect("stream destroy", g_ring.call(VGPU_OP_STREAM_DESTROY, s), VGPU_SUCCESS);
    CALL_EXPECT(H, "stream already destroyed", VGPU_OP_STREAM_SYNCHRONIZE, s);
    CALL_EXPECT(H, "stream destroyed twice", VGPU_OP_STREAM_DESTROY, s);
    CALL_EXPECT(H, "destroyed stream as a copy's stream", VGPU_OP_MEMCPY_HTOD, d, buf, 16, s);
    CALL_EXPECT(H, "default stream destroyed", VGPU_OP_STREAM_DESTROY, 0);
    expect("free", g_ring.call(VGPU_OP_MEM_FREE, d), VGPU_SUCCESS);
    CALL_EXPECT(E, "allocation freed twice", VGPU_OP_MEM_FREE, d);
    CALL_EXPECT(E, "copy into freed memory", VGPU_OP_MEMCPY_HTOD, d, buf, 16, 0);

    // Allocations past the quota.
    CALL_EXPECT(VGPU_ERROR_OUT_OF_MEMORY, "allocation of 2^64 - 1 bytes", VGPU_OP_MEM_ALLOC, ~0ull);
    CALL_EXPECT(VGPU_ERROR_OUT_OF_MEMORY, "allocation of 2^50 bytes", VGPU_OP_MEM_ALLOC, 1ull << 50);
    CALL_EXPECT(E, "allocation of 0 bytes", VGPU_OP_MEM_ALLOC, 0);

    // Descriptors: opcodes, flags, payload lengths that lie, flags on events.
    CALL_EXPECT(VGPU_ERROR_NOT_SUPPORTED, "opcode 0xFFFF", 0xFFFF);
    CALL_EXPECT(VGPU_ERROR_NOT_SUPPORTED, "opcode VGPU_OP_MAX_", VGPU_OP_MAX_);
    expect("unknown flag bits", g_ring.call(VGPU_OP_NOP, 0, 0, 0, 0, 0, 0, nullptr, 0, 0x8000), E);
    expect("payload_len > VGPU_PAYLOAD_BYTES",
           g_ring.call(VGPU_OP_NOP, 0, 0, 0, 0, 0, 0, nullptr, 0, 0, nullptr, 0x7FFFFFFF), E);
    CALL_EXPECT(E, "interprocess event", VGPU_OP_EVENT_CREATE, 4);
    CALL_EXPECT(VGPU_ERROR_INVALID_DEVICE, "device ordinal 1", VGPU_OP_DEVICE_GET_NAME, 1);
    CALL_EXPECT(E, "module larger than any limit", VGPU_OP_MODULE_LOAD_DATA, buf, 1ull << 40);
}

// Loads the embedded kernels; a launch whose output runs past its allocation.
void faulting_kernel(uint8_t* data)
{
    const uint64_t buf = reinterpret_cast<uintptr_t>(data);
    memcpy(data, kvmgpu_kernels_image, kvmgpu_kernels_image_size);
    uint64_t m = 0, f = 0, d = 0;
    expect("module load", g_ring.call(VGPU_OP_MODULE_LOAD_DATA, buf, kvmgpu_kernels_image_size, 0, 0, 0, 0, nullptr, 0,
                                      0, &m),
           VGPU_SUCCESS);
    const char name[] = "vector_add";
    expect("get function",
           g_ring.call(VGPU_OP_MODULE_GET_FUNCTION, m, 0, 0, 0, 0, 0, name, sizeof name - 1, 0, &f), VGPU_SUCCESS);
    CALL_EXPECT(VGPU_ERROR_INVALID_VALUE, "function name with a NUL", VGPU_OP_MODULE_GET_FUNCTION, m, 0, 0, 0, 0, 0,
                name, sizeof name);
    expect("alloc", g_ring.call(VGPU_OP_MEM_ALLOC, 256, 0, 0, 0, 0, 0, nullptr, 0, 0, &d), VGPU_SUCCESS);
    // The parameter buffer, laid out as the kernel's: a, b, c (device
    // pointers) at 0, 8, 16, n at 24. c is 16: no device memory there on
    // any backend, so the kernel faults on its first store.
    uint8_t p[3 * 8 + 4];
    const uint64_t near_null = 16;
    const uint32_t n = 64;
    memcpy(p, &d, 8), memcpy(p + 8, &d, 8), memcpy(p + 16, &near_null, 8), memcpy(p + 24, &n, 4);
    CALL_EXPECT(VGPU_ERROR_INVALID_VALUE, "parameter buffer a byte short of the kernel's", VGPU_OP_LAUNCH_KERNEL_PACKED,
                f, 0, 1 | 1ull << 32, 1 | 1ull << 32, 1 | 1ull << 32, uint64_t{sizeof p - 1} << 32, p, sizeof p - 1);
    CALL_EXPECT(VGPU_ERROR_ILLEGAL_ADDRESS, "kernel storing to a bad device pointer", VGPU_OP_LAUNCH_KERNEL_PACKED, f,
                0, 1 | 1ull << 32, 1 | 64ull << 32, 1 | 1ull << 32, uint64_t{sizeof p} << 32, p, sizeof p);
}

// RESET, a fresh ring, and a real round trip: the device carried on.
bool carries_on(uint8_t* data)
{
    mmio_write32(reg(VGPU_REG_CONTROL), VGPU_CONTROL_RESET);
    if (g_ring.enable() != VGPU_STATUS_ENABLED)
        return false;
    const uint64_t buf = reinterpret_cast<uintptr_t>(data);
    for (uint32_t i = 0; i < 4096; ++i)
        data[i] = (uint8_t)(i * 13 + 5);
    uint64_t d = 0;
    if (g_ring.call(VGPU_OP_MEM_ALLOC, 4096, 0, 0, 0, 0, 0, nullptr, 0, 0, &d) != VGPU_SUCCESS ||
        g_ring.call(VGPU_OP_MEMCPY_HTOD, d, buf, 4096, 0) != VGPU_SUCCESS ||
        g_ring.call(VGPU_OP_MEMCPY_DTOH, buf + 4096, d, 4096, 0) != VGPU_SUCCESS ||
        g_ring.call(VGPU_OP_MEM_FREE, d) != VGPU_SUCCESS || g_ring.call(VGPU_OP_NOP) != VGPU_SUCCESS)
        return false;
    return memcmp(data, data + 4096, 4096) == 0;
}

} // namespace

int guest_main(const kvmgpu_boot_info*)
{
    if (read_reg(VGPU_REG_MAGIC) != VGPU_MAGIC || read_reg(VGPU_REG_VERSION) != VGPU_ABI_VERSION) {
        printf("attack: no vGPU at 0x%lx\n", (uint64_t)KVMGPU_VGPU_GPA);
        return kNoDevice;
    }
    const uint32_t backend = read_reg(VGPU_REG_BACKEND);
    g_ring.base = static_cast<uint8_t*>(pinned_alloc(vgpu_ring_bytes(kEntries), 4096));
    g_ring.timeout = seconds_to_tsc(20);
    auto* data = static_cast<uint8_t*>(pinned_alloc(1 << 20, 4096));

    registers();
    if (g_ring.enable() != VGPU_STATUS_ENABLED || g_ring.call(VGPU_OP_NOP) != VGPU_SUCCESS) {
        printf("attack: FAIL: a valid ring does not work after the register attacks\n");
        return kNoCarryOn;
    }
    ring_indices();
    commands(data);
    if (backend == VGPU_BACKEND_HOST || cmdline().get_bool("fault", false))
        faulting_kernel(data);
    else
        printf("attack: faulting kernel skipped on this backend (sticky for the whole VMM; fault=1 runs it)\n");

    const bool ok = carries_on(data);
    printf("attack: %u attacks refused, %u not refused; device %s after RESET\n", g_refused, g_not_refused,
           ok ? "works" : "DOES NOT WORK");
    if (g_not_refused != 0)
        return kNotRefused;
    return ok ? (int)kExitPass : (int)kNoCarryOn;
}
