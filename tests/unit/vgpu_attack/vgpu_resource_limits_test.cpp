// Security issue 25: every host resource a guest can make the VMM (or its
// GPU worker) take is counted against that VM, released when the guest lets
// go, and one VM at its limits leaves the others of the same process alone.
// Host backend, no KVM, no GPU.
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backend_factory.h"
#include "kvmtool-gpu/bus/bus.h"
#include "kvmtool-gpu/devices/debug_console.h"
#include "kvmtool-gpu/devices/vgpu/alias_budget.h"
#include "kvmtool-gpu/devices/vgpu/backends/device_backends.h"
#include "kvmtool-gpu/devices/vgpu/backends/fake_address_space.h"
#include "tests/support/vgpu_rig.h"
#include "tests/support/worker_vgpu.h"

namespace kvmgpu::vgpu::test {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kListGpa = kDataGpa;                // SG lists
constexpr uint64_t kFramesGpa = kDataGpa + 256 * kPage; // buffers' frames
constexpr uint64_t kOutGpa = kDataGpa + 1024 * kPage;   // copies land here

// Mappings of guest RAM's pages in process pid (0: this one): the lines of
// its maps with the device and inode of the mapping that holds `ram`. An
// alias maps the same pages, so it counts; the allocator's own mappings
// (a sanitizer's included) do not.
uint64_t ram_mappings(pid_t pid, const void* ram) {
    const std::string path = pid == 0 ? std::string("/proc/self/maps") : "/proc/" + std::to_string(pid) + "/maps";
    const auto at = reinterpret_cast<uintptr_t>(ram);
    std::string file; // "dev inode" of the mapping holding ram
    std::vector<std::string> lines;
    std::ifstream f(path);
    for (std::string line; std::getline(f, line);) lines.push_back(line);
    auto file_of = [](const std::string& line) {
        std::istringstream in(line);
        std::string range, perms, offset, dev, inode;
        in >> range >> perms >> offset >> dev >> inode;
        return inode == "0" ? std::string() : dev + " " + inode;
    };
    for (const std::string& line : lines) {
        uintptr_t lo = 0, hi = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && at >= lo && at < hi) file = file_of(line);
    }
    uint64_t n = 0;
    for (const std::string& line : lines)
        if (!file.empty() && file_of(line) == file) ++n;
    return n;
}

// `pages` frames, every other one from kFramesGpa (so no two are adjacent),
// each filled with its index.
std::vector<vgpu_sg_entry> every_other_frame(VgpuRig& rig, uint64_t pages, uint64_t first = 0) {
    std::vector<vgpu_sg_entry> list;
    for (uint64_t i = 0; i < pages; ++i) {
        const uint64_t gpa = kFramesGpa + 2 * (first + i) * kPage;
        std::vector<uint8_t> page(kPage, static_cast<uint8_t>(i + 1));
        rig.put(gpa, page.data(), page.size());
        list.push_back({gpa, kPage});
    }
    return list;
}

Done register_list(VgpuRig& rig, const std::vector<vgpu_sg_entry>& list) {
    rig.put(kListGpa, list.data(), list.size() * sizeof(vgpu_sg_entry));
    uint64_t total = 0;
    for (const auto& e : list) total += e.len;
    return rig.call({.opcode = VGPU_OP_HOST_REGISTER, .args = {kListGpa, list.size(), total, 0}});
}

uint32_t unregister(VgpuRig& rig, uint64_t handle) {
    return rig.call({.opcode = VGPU_OP_HOST_UNREGISTER, .args = {handle}}).status;
}

// The registered buffer reads back as written: page i holds i + 1.
bool reads_back(VgpuRig& rig, uint64_t dptr, uint64_t pages) {
    if (rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kOutGpa, dptr, pages * kPage, 0}}).status != VGPU_SUCCESS)
        return false;
    for (uint64_t i = 0; i < pages; ++i) {
        uint8_t b = 0;
        rig.get(kOutGpa + i * kPage + kPage - 1, &b, 1);
        if (b != static_cast<uint8_t>(i + 1)) return false;
    }
    return true;
}

// Finding 2: the alias went only when its table slot was reused.
TEST(VgpuResourceLimits, AliasesAreUnmappedOnUnregisterAndOnReset) {
    VgpuRig rig;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const auto list = every_other_frame(rig, 8);
    const void* ram = rig.host_ptr(0);
    const uint64_t before = ram_mappings(0, ram);
    const Done r = register_list(rig, list);
    ASSERT_EQ(r.status, VGPU_SUCCESS);
    EXPECT_GE(ram_mappings(0, ram), before + 8) << "one mapping per scattered frame";
    ASSERT_EQ(unregister(rig, r.r0), VGPU_SUCCESS);
    EXPECT_EQ(ram_mappings(0, ram), before) << "unregister leaves the alias mapped";
    for (int i = 0; i < 16; ++i) ASSERT_EQ(register_list(rig, list).status, VGPU_SUCCESS) << i;
    EXPECT_GE(ram_mappings(0, ram), before + 16 * 8);
    rig.reset();
    EXPECT_EQ(ram_mappings(0, ram), before) << "RESET leaves aliases mapped";
}

// "Contiguous guest frames need one mapping": one run needs none at all
// (guest RAM is registered whole), adjacent frames share one.
TEST(VgpuResourceLimits, AliasesTakeOneMappingPerRunAndContiguousBuffersNone) {
    VgpuRig rig;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    std::vector<vgpu_sg_entry> contiguous;
    for (uint64_t i = 0; i < 4; ++i) {
        std::vector<uint8_t> page(kPage, static_cast<uint8_t>(i + 1));
        rig.put(kFramesGpa + i * kPage, page.data(), page.size());
        contiguous.push_back({kFramesGpa + i * kPage, kPage});
    }
    const void* ram = rig.host_ptr(0);
    const uint64_t before = ram_mappings(0, ram);
    const Done one = register_list(rig, contiguous);
    ASSERT_EQ(one.status, VGPU_SUCCESS);
    EXPECT_EQ(ram_mappings(0, ram), before);
    ASSERT_NE(one.r1, 0u);
    EXPECT_EQ(one.r1, rig.host->guest_ram_device_address(rig.host_ptr(kFramesGpa))) << "the RAM window's address";
    EXPECT_TRUE(reads_back(rig, one.r1, 4));
    // Frames 3,4 then 0,1: two runs, two mappings, in the buffer's order.
    const std::vector<vgpu_sg_entry> two_runs = {contiguous[2], contiguous[3], contiguous[0], contiguous[1]};
    const Done two = register_list(rig, two_runs);
    ASSERT_EQ(two.status, VGPU_SUCCESS);
    EXPECT_EQ(ram_mappings(0, ram), before + 2);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kOutGpa, two.r1, 4 * kPage, 0}}).status, VGPU_SUCCESS);
    uint8_t first = 0, last = 0;
    rig.get(kOutGpa, &first, 1);
    rig.get(kOutGpa + 4 * kPage - 1, &last, 1);
    EXPECT_EQ(first, 3);
    EXPECT_EQ(last, 2);
    EXPECT_EQ(unregister(rig, two.r0), VGPU_SUCCESS);
    EXPECT_EQ(unregister(rig, one.r0), VGPU_SUCCESS);
    EXPECT_EQ(ram_mappings(0, ram), before);
}

// Findings 1 and 3: registrations, their bytes, their mappings and the
// driver's cost each have a per-VM limit, and come back when released.
TEST(VgpuResourceLimits, EachRegistrationLimitRefusesWithOutOfMemory) {
    VgpuRig rig{VgpuOptions{.max_registrations = 3, .max_registered_bytes = 64 * kPage, .max_alias_mappings = 20}};
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const auto eight = every_other_frame(rig, 8);
    Done a = register_list(rig, eight), b = register_list(rig, eight);
    ASSERT_EQ(a.status, VGPU_SUCCESS);
    ASSERT_EQ(b.status, VGPU_SUCCESS);
    EXPECT_EQ(register_list(rig, eight).status, VGPU_ERROR_OUT_OF_MEMORY) << "24 mappings > 20";
    ASSERT_EQ(register_list(rig, every_other_frame(rig, 4, 8)).status, VGPU_SUCCESS); // 20 mappings
    EXPECT_EQ(register_list(rig, every_other_frame(rig, 1, 16)).status, VGPU_ERROR_OUT_OF_MEMORY) << "4 registrations > 3";
    ASSERT_EQ(unregister(rig, a.r0), VGPU_SUCCESS);
    a = register_list(rig, eight);
    EXPECT_EQ(a.status, VGPU_SUCCESS) << "released mappings and slots count again";
    EXPECT_TRUE(reads_back(rig, a.r1, 8));

    VgpuRig bytes_rig{VgpuOptions{.max_registered_bytes = 10 * kPage}};
    ASSERT_EQ(bytes_rig.enable(), VGPU_SUCCESS);
    ASSERT_EQ(register_list(bytes_rig, every_other_frame(bytes_rig, 8)).status, VGPU_SUCCESS);
    EXPECT_EQ(register_list(bytes_rig, every_other_frame(bytes_rig, 3)).status, VGPU_ERROR_OUT_OF_MEMORY);
}

TEST(VgpuResourceLimits, RegisteredBytesDefaultToTheVmsRam) {
    VgpuRig rig;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const auto list = every_other_frame(rig, 64); // 256 KiB
    int accepted = 0;
    while (accepted < 64 && register_list(rig, list).status == VGPU_SUCCESS) ++accepted;
    EXPECT_EQ(accepted, static_cast<int>(kRamBytes / (64 * kPage))) << "registered bytes stop at the RAM size";
}

TEST(VgpuResourceLimits, TheDriversMappingCostCountsAgainstTheQuota) {
    VgpuRig rig{VgpuOptions{.device_mem_quota = 200 << 10}};
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    auto free_bytes = [&] { return rig.call({.opcode = VGPU_OP_MEM_GET_INFO}).r0; };
    const uint64_t before = free_bytes();
    const auto list = every_other_frame(rig, 8);
    const Done a = register_list(rig, list);
    ASSERT_EQ(a.status, VGPU_SUCCESS);
    EXPECT_EQ(before - free_bytes(), (64u << 10) + 8 * kPage / 512);
    ASSERT_EQ(register_list(rig, list).status, VGPU_SUCCESS);
    ASSERT_EQ(register_list(rig, list).status, VGPU_SUCCESS);
    EXPECT_EQ(register_list(rig, list).status, VGPU_ERROR_OUT_OF_MEMORY) << "4 x 64 KiB > 200 KiB";
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_ALLOC, .args = {100 << 10}}).status, VGPU_ERROR_OUT_OF_MEMORY);
    ASSERT_EQ(unregister(rig, a.r0), VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_ALLOC, .args = {60 << 10}}).status, VGPU_SUCCESS);
    rig.reset();
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(free_bytes(), before) << "RESET gives every charge back";
}

// Finding 1 across VMs: one VM registers until every limit refuses it; the
// other, in the same process, registers, copies and checks its data.
TEST(VgpuResourceLimits, OneVmAtItsLimitsLeavesAnotherUntouched) {
    const VgpuOptions greedy{.max_registrations = 4096, .max_registered_bytes = 1ull << 40};
    VgpuRig attacker{greedy}, victim;
    ASSERT_EQ(attacker.enable(), VGPU_SUCCESS);
    ASSERT_EQ(victim.enable(), VGPU_SUCCESS);
    const auto big = every_other_frame(attacker, 512);
    int accepted = 0;
    Done last;
    while (accepted < 4096 && (last = register_list(attacker, big)).status == VGPU_SUCCESS) ++accepted;
    EXPECT_EQ(last.status, VGPU_ERROR_OUT_OF_MEMORY) << "after " << accepted;
    EXPECT_LE(uint64_t(accepted) * 512, AliasBudget::process().capacity() / AliasBudget::kMostVms);
    const auto mine = every_other_frame(victim, 256);
    for (int round = 0; round < 3; ++round) {
        const Done r = register_list(victim, mine);
        ASSERT_EQ(r.status, VGPU_SUCCESS) << round;
        EXPECT_TRUE(reads_back(victim, r.r1, 256));
        ASSERT_EQ(unregister(victim, r.r0), VGPU_SUCCESS);
    }
}

TEST(AliasBudget, SharesAreEqualAndComeBack) {
    AliasBudget b(1000);
    b.set_vms_sharing(4);
    EXPECT_EQ(b.reserve(5000), 250u);
    EXPECT_EQ(b.reserve(100), 100u);
    EXPECT_EQ(b.left(), 650u);
    b.release(250);
    EXPECT_EQ(b.left(), 900u);
    b.set_vms_sharing(1);
    EXPECT_EQ(b.reserve(5000), 900u) << "never more than is left";
    EXPECT_EQ(b.reserve(1), 0u);
}

// "Which process holds the aliases": with a GPU worker, the worker; the
// VMM's own mappings do not move.
TEST(VgpuResourceLimits, AWorkersAliasesAreInTheWorkerNotTheVmm) {
    WorkerVgpu w;
    ASSERT_TRUE(w.rig.dev);
    ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
    const pid_t worker = w.worker->worker_pid();
    ASSERT_GT(worker, 0);
    const auto list = every_other_frame(w.rig, 32);
    const void* ram = w.rig.host_ptr(0);
    const uint64_t vmm_before = ram_mappings(0, ram), worker_before = ram_mappings(worker, ram);
    const Done r = register_list(w.rig, list);
    ASSERT_EQ(r.status, VGPU_SUCCESS);
    EXPECT_EQ(ram_mappings(0, ram), vmm_before);
    EXPECT_GE(ram_mappings(worker, ram), worker_before + 32);
    EXPECT_TRUE(reads_back(w.rig, r.r1, 32));
    ASSERT_EQ(unregister(w.rig, r.r0), VGPU_SUCCESS);
    EXPECT_EQ(ram_mappings(worker, ram), worker_before);
}

// Finding 4: a sticky fault on one device frees every device's memory.
TEST(VgpuResourceLimits, AFaultOnOneDeviceFreesEveryDevicesMemory) {
    std::vector<HostBackend*> host;
    std::vector<std::unique_ptr<GpuBackend>> devices;
    for (int i = 0; i < 2; ++i) {
        auto h = make_host_backend();
        host.push_back(h.get());
        devices.push_back(std::move(h));
    }
    VgpuRig rig{VgpuOptions{.device_mem_quota = 64 << 20}, DeviceBackends(std::move(devices))};
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    for (int round = 0; round < 6; ++round) { // six times the quota, were nothing freed
        const Done c1 = rig.call({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 1}});
        ASSERT_EQ(c1.status, VGPU_SUCCESS);
        for (int i = 0; i < 3; ++i) rig.alloc(16 << 20); // on device 1
        const Done c0 = rig.call({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 0}});
        ASSERT_EQ(c0.status, VGPU_SUCCESS);
        uint64_t fn;
        rig.module_with("vector_add", &fn);
        const uint64_t d = rig.alloc(256);
        const std::vector<std::vector<uint8_t>> p = {bytes(d), bytes(d), bytes(d + 128), bytes(uint32_t{64})};
        ASSERT_EQ(rig.launch(fn, p, 1, 1, 64, 1).status, VGPU_ERROR_ILLEGAL_ADDRESS) << round;
        EXPECT_EQ(host[0]->live_allocations(), 0u);
        EXPECT_EQ(host[1]->live_allocations(), 0u) << "device 1 kept what the forgotten handles held";
    }
}

// Finding 5: the host backend's fake addresses are per instance and reused.
TEST(HostBackendAddresses, FreedRangesAreReusedAndInstancesDoNotShare) {
    HostBackend x, y;
    uint64_t a = 0, b = 0;
    ASSERT_EQ(x.mem_alloc(1 << 20, &a), VGPU_SUCCESS);
    ASSERT_EQ(x.mem_free(a), VGPU_SUCCESS);
    ASSERT_EQ(x.mem_alloc(1 << 20, &b), VGPU_SUCCESS);
    EXPECT_EQ(a, b);
    uint64_t c = 0;
    ASSERT_EQ(y.mem_alloc(1 << 20, &c), VGPU_SUCCESS);
    EXPECT_GE(c > b ? c - b : b - c, FakeSliceLease::kSliceSpan) << "each instance in its own slice";
    // A 128 GiB RAM region registered and dropped again and again keeps its address.
    auto* fake_ram = reinterpret_cast<void*>(uintptr_t{1} << 40);
    ASSERT_EQ(x.register_guest_ram(fake_ram, 128ull << 30), VGPU_SUCCESS);
    const uint64_t window = x.guest_ram_device_address(fake_ram);
    for (int i = 0; i < 1000; ++i) {
        ASSERT_EQ(x.unregister_guest_ram(fake_ram), VGPU_SUCCESS);
        ASSERT_EQ(x.register_guest_ram(fake_ram, 128ull << 30), VGPU_SUCCESS);
    }
    EXPECT_EQ(x.guest_ram_device_address(fake_ram), window);
}

TEST(HostBackendAddresses, SlicesComeBackWhenBackendsGo) {
    for (unsigned i = 0; i < FakeSliceLease::kSlices + 10; ++i) {
        HostBackend h(HostBackendOptions{.bounce_bytes = 4096}); // the smallest: 4106 backends come and go
        uint64_t d = 0;
        ASSERT_EQ(h.mem_alloc(4096, &d), VGPU_SUCCESS) << i;
    }
}

TEST(FakeAddressRange, FirstFitWithGuardsAndMerging) {
    FakeAddressRange r(0x100000000ull, 16 * FakeAddressRange::kGranule);
    const uint64_t a = r.reserve(1), b = r.reserve(FakeAddressRange::kGranule);
    EXPECT_EQ(a, 0x100000000ull);
    EXPECT_EQ(b, a + 2 * FakeAddressRange::kGranule) << "a guard after each range";
    EXPECT_EQ(r.reserve(16 * FakeAddressRange::kGranule), 0u);
    EXPECT_FALSE(r.release(a + 1));
    EXPECT_TRUE(r.release(a));
    EXPECT_TRUE(r.release(b));
    EXPECT_EQ(r.reserve(14 * FakeAddressRange::kGranule), a) << "freed neighbours merge";
    EXPECT_EQ(r.reserved_ranges(), 1u);
}

// Finding 6: each VM's console and bus hold back their own log lines.
TEST(PerVmLogLimits, AFloodingVmDoesNotHideAnothersWarnings) {
    memmap::GuestMemory mem;
    DebugConsole flooder(mem, [](std::string_view) {}), quiet(mem, [](std::string_view) {});
    const uint8_t junk[3] = {1, 2, 3};
    for (int i = 0; i < 1000; ++i) flooder.write(0x40, junk);
    EXPECT_GT(flooder.log_lines_held_back(), 0u);
    quiet.write(0x40, junk);
    EXPECT_EQ(quiet.log_lines_held_back(), 0u);

    Bus noisy("vm-a"), other("vm-b");
    uint8_t buf[4];
    for (int i = 0; i < 1000; ++i) noisy.read(0x1234, buf);
    EXPECT_GT(noisy.log_lines_held_back(), 0u);
    other.read(0x1234, buf);
    EXPECT_EQ(other.log_lines_held_back(), 0u);
}

} // namespace
} // namespace kvmgpu::vgpu::test
