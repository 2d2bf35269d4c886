// A VM without KVM for the vGPU tests: guest RAM (4 KiB backing), a vGPU on
// the host backend, and a guest-side driver that writes commands into the
// ring in that RAM, rings the doorbell through BusDevice::write, and polls
// the completion record, as the guest stub does.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "kvmtool-gpu/abi/vgpu_abi.h"
#include "kvmtool-gpu/devices/vgpu/backends/device_backends.h"
#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"
#include "kvmtool-gpu/devices/vgpu/command_engine.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_device.h"
#include "memmap/guest_memory.h"
#include "tests/support/host_module_image.h"

namespace kvmgpu::vgpu::test {

inline constexpr uint64_t kRamBytes = 8ull << 20;
inline constexpr uint64_t kRingGpa = 0x100000;
inline constexpr uint32_t kRingEntries = 16;
inline constexpr uint64_t kDataGpa = 0x200000; // free guest RAM for test data

// One command as a test writes it.
struct Cmd {
    uint16_t opcode = VGPU_OP_NOP;
    std::vector<uint64_t> args = {};
    std::vector<uint8_t> payload = {};
    uint16_t flags = 0;
    int64_t payload_len = -1; // -1: payload.size()
};

struct Done {
    uint32_t status = 0xFFFFFFFF;
    uint64_t r0 = 0, r1 = 0;
    std::vector<uint8_t> payload; // the slot's payload after completion
};

// Makes the rig's engine once its guest RAM exists (e.g. in a worker process).
using EngineMaker = std::function<std::unique_ptr<CommandEngine>(const memmap::GuestMemory&, const VgpuOptions&)>;

class VgpuRig {
public:
    explicit VgpuRig(VgpuOptions opts = {}, HostBackendOptions host = {.bounce_bytes = 8192});
    // Any backend, or one per device, inline (the GPU tests pass a CudaBackend).
    VgpuRig(VgpuOptions opts, DeviceBackends backends);
    // Any engine; dev stays null if `make` gives none (the test says why).
    VgpuRig(VgpuOptions opts, const EngineMaker& make);
    ~VgpuRig();

    memmap::GuestMemory mem;
    std::shared_ptr<VgpuDevice> dev;
    HostBackend* host = nullptr; // owned by dev; null for other backends and several devices

    // Registers, as the guest writes and reads them.
    void reg_write32(uint64_t off, uint32_t v);
    void reg_write64(uint64_t off, uint64_t v);
    uint32_t reg_read32(uint64_t off);
    uint64_t reg_read64(uint64_t off);
    // Sets RING_GPA / RING_SIZE, writes ENABLE; returns VGPU_REG_ERROR.
    uint32_t enable(uint64_t gpa = kRingGpa, uint32_t entries = kRingEntries);
    void reset();

    // Puts a command in the next slot and publishes it (no doorbell).
    uint64_t post(const Cmd& c);
    void doorbell();
    // Kicks as the guest library does: only when the device's event index
    // lies in what was published since the last flush (vgpu_abi.h).
    void flush();
    uint64_t kicks_sent = 0, kicks_suppressed = 0;
    // Waits (up to 10 s) for the completion of `seq`.
    Done wait(uint64_t seq);
    Done call(const Cmd& c) { const uint64_t s = post(c); doorbell(); return wait(s); }
    // Publishes a raw producer value (for the broken-ring test).
    void set_producer(uint32_t p);
    uint32_t consumer() const;

    // Guest RAM access for test data.
    void put(uint64_t gpa, const void* src, uint64_t len) { ASSERT_TRUE(mem.write(memmap::GuestPhysAddr{gpa}, src, len)); }
    void get(uint64_t gpa, void* dst, uint64_t len) { ASSERT_TRUE(mem.read(memmap::GuestPhysAddr{gpa}, dst, len)); }
    uint8_t* host_ptr(uint64_t gpa) { return mem.translate(memmap::GuestPhysAddr{gpa}, 1)->data(); }

    // Short forms for common commands; each asserts nothing, returns Done.
    uint64_t alloc(uint64_t bytes); // asserts success
    // MODULE_LOAD_DATA of `image` (default: a dummy, enough for the host
    // backend) placed in guest RAM, then MODULE_GET_FUNCTION; expects success.
    uint64_t module_with(std::string_view fn_name, uint64_t* function, std::span<const uint8_t> image = {});
    // LAUNCH_KERNEL_PACKED of `fn` with `params` (one value each) laid out
    // as the guest library lays them out: at the offsets FUNC_GET_PARAM_INFO
    // gives. Values that do not fit the kernel's layout (their count or a
    // size) go back to back, a buffer the device model refuses unless its
    // length happens to be the kernel's.
    Cmd launch_cmd(uint64_t fn, std::span<const std::vector<uint8_t>> params, Dim3 grid, Dim3 block,
                   uint64_t stream = 0);
    Done launch(uint64_t fn, std::span<const std::vector<uint8_t>> params, uint32_t gx, uint32_t gy, uint32_t bx,
                uint32_t by, uint64_t stream = 0) {
        return call(launch_cmd(fn, params, {gx, gy, 1}, {bx, by, 1}, stream));
    }

    uint32_t entries = kRingEntries;

private:
    uint8_t* ring_ = nullptr;
    uint32_t producer_ = 0;
    uint32_t flushed_ = 0; // producer_ at the last flush()
    uint64_t next_seq_ = 1;
    std::map<uint64_t, uint32_t> slot_of_; // seq -> slot it was posted in
};

template <typename T>
std::vector<uint8_t> bytes(const T& v) {
    std::vector<uint8_t> out(sizeof v);
    std::memcpy(out.data(), &v, sizeof v);
    return out;
}

} // namespace kvmgpu::vgpu::test
