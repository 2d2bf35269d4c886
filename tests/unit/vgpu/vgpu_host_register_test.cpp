// Registering a guest buffer (cuMemHostRegister on pageable memory): its
// scattered pages get one device address through a host alias, in the
// buffer's order; unregistering takes it away; bad lists are refused; on
// huge host pages there is no alias (no device address).
#include <sys/mman.h>

#include <cstring>

#include "kvmtool-gpu/devices/vgpu/backend_factory.h"
#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"
#include "kvmtool-gpu/devices/vgpu/host_alias.h"
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kListGpa = kDataGpa;              // the SG list
constexpr uint64_t kPagesGpa = kDataGpa + 64 * kPage; // the buffer's frames
constexpr uint64_t kOutGpa = kDataGpa + 128 * kPage;  // copies land here

struct VgpuHostRegister : ::testing::Test {
    VgpuRig rig{VgpuOptions{.max_handles = 8}};
    void SetUp() override { ASSERT_EQ(rig.enable(), VGPU_SUCCESS); }

    Done register_list(const std::vector<vgpu_sg_entry>& list, uint64_t total = ~0ull, uint64_t flags = 0) {
        rig.put(kListGpa, list.data(), list.size() * sizeof(vgpu_sg_entry));
        if (total == ~0ull) {
            total = 0;
            for (const auto& e : list) total += e.len;
        }
        return rig.call({.opcode = VGPU_OP_HOST_REGISTER, .args = {kListGpa, list.size(), total, flags}});
    }
};

// Frames 5, 2, 7 (in that order) hold 'A', 'B', 'C' pages; the buffer
// starts 100 bytes into frame 5 and ends 300 bytes into frame 7.
std::vector<vgpu_sg_entry> scattered(VgpuRig& rig) {
    for (uint64_t f : {5, 2, 7}) {
        std::vector<uint8_t> page(kPage, static_cast<uint8_t>(f == 5 ? 'A' : f == 2 ? 'B' : 'C'));
        rig.put(kPagesGpa + f * kPage, page.data(), page.size());
    }
    return {{kPagesGpa + 5 * kPage + 100, kPage - 100}, {kPagesGpa + 2 * kPage, kPage}, {kPagesGpa + 7 * kPage, 300}};
}

TEST_F(VgpuHostRegister, ScatteredPagesGetOneDeviceAddressInTheBuffersOrder) {
    const Done r = register_list(scattered(rig), ~0ull, 0x2 /* DEVICEMAP */);
    ASSERT_EQ(r.status, VGPU_SUCCESS);
    ASSERT_NE(r.r1, 0u);
    const uint64_t bytes = (kPage - 100) + kPage + 300;
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kOutGpa, r.r1, bytes, 0}}).status, VGPU_SUCCESS);
    std::vector<uint8_t> got(bytes);
    rig.get(kOutGpa, got.data(), bytes);
    EXPECT_EQ(got[0], 'A');
    EXPECT_EQ(got[kPage - 101], 'A');
    EXPECT_EQ(got[kPage - 100], 'B');
    EXPECT_EQ(got[2 * kPage - 101], 'B');
    EXPECT_EQ(got[2 * kPage - 100], 'C');
    EXPECT_EQ(got[bytes - 1], 'C');
    // Writes through the device address land in the guest's own frames.
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {r.r1 + kPage - 100, 'z', 16, 0}}).status, VGPU_SUCCESS);
    uint8_t frame2[16];
    rig.get(kPagesGpa + 2 * kPage, frame2, sizeof frame2);
    EXPECT_EQ(frame2[0], 'z');
    EXPECT_EQ(frame2[15], 'z');
    // Only the buffer is the VM's: one byte past it is not.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {r.r1, 0, bytes + 1, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    // Unregistered: the address is gone.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_HOST_UNREGISTER, .args = {r.r0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {r.r1, 0, 16, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_HOST_UNREGISTER, .args = {r.r0}}).status,
              VGPU_ERROR_HOST_MEMORY_NOT_REGISTERED);
}

TEST_F(VgpuHostRegister, BadListsAreRefused) {
    auto list = scattered(rig);
    EXPECT_EQ(register_list(list, 5).status, VGPU_ERROR_INVALID_VALUE);               // wrong total
    EXPECT_EQ(register_list(list, ~0ull, 0x4).status, VGPU_ERROR_INVALID_VALUE);      // IOMEMORY
    auto mid = list;
    mid[1].len = 100; // the second piece ends inside a page, and a third follows
    EXPECT_EQ(register_list(mid).status, VGPU_ERROR_INVALID_VALUE);
    auto outside = list;
    outside[2].gpa = kRamBytes - 100;
    outside[2].len = 300; // past the end of RAM
    EXPECT_EQ(register_list(outside).status, VGPU_ERROR_INVALID_VALUE);
    auto empty = list;
    empty[1].len = 0;
    EXPECT_EQ(register_list(empty).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_HOST_REGISTER, .args = {kListGpa, 0, 0, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_HOST_REGISTER, .args = {kRamBytes - 8, 4, 4096, 0}}).status,
              VGPU_ERROR_INVALID_VALUE); // the list itself outside RAM
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_HOST_UNREGISTER, .args = {12345}}).status,
              VGPU_ERROR_HOST_MEMORY_NOT_REGISTERED);
}

TEST_F(VgpuHostRegister, TheTableIsBoundedAndResetUnregistersAll) {
    const auto list = scattered(rig);
    for (int i = 0; i < 8; ++i) ASSERT_EQ(register_list(list).status, VGPU_SUCCESS) << i;
    EXPECT_EQ(register_list(list).status, VGPU_ERROR_OUT_OF_MEMORY);
    const uint64_t dptr = register_list(list).r1; // refused: 0
    EXPECT_EQ(dptr, 0u);
    rig.reset();
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(register_list(list).status, VGPU_SUCCESS);
}

TEST(HostAlias, MapsTheSamePagesInOrder) {
    const size_t bytes = 4 * kPage;
    auto* ram = static_cast<uint8_t*>(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(ram, MAP_FAILED);
    for (int p = 0; p < 4; ++p) std::memset(ram + p * kPage, '0' + p, kPage);
    std::vector<memmap::HostRun> runs = {{ram + 3 * kPage, {}, kPage}, {ram, {}, 2 * kPage}, {ram + 2 * kPage, {}, 10}};
    std::string why;
    auto alias = HostAlias::make(runs, &why);
    ASSERT_TRUE(alias) << why;
    EXPECT_EQ(alias->bytes(), 3 * kPage + 10);
    EXPECT_EQ(alias->data()[0], '3');
    EXPECT_EQ(alias->data()[kPage], '0');
    EXPECT_EQ(alias->data()[2 * kPage], '1');
    EXPECT_EQ(alias->data()[3 * kPage + 9], '2');
    alias->data()[kPage] = 'x'; // the same page, not a copy
    EXPECT_EQ(ram[0], 'x');
    runs[1].len = kPage + 1; // ends inside a page, and a piece follows
    EXPECT_FALSE(HostAlias::make(runs, &why));
    ::munmap(ram, bytes);
}

// Guest RAM on 2 MiB host pages: registered, but no alias and no address.
TEST(HostRegisterOnHugePages, NoDeviceAddress) {
    std::unique_ptr<memmap::Backing> huge;
    try {
        huge = memmap::Backing::create(memmap::PageSize::k2M, 2ull << 20);
    } catch (const std::exception& e) {
        GTEST_SKIP() << "no 2 MiB huge page: " << e.what();
    }
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, std::move(huge));
    DeviceBackends host(make_host_backend());
    VgpuCounters counters;
    CommandDispatch d(mem, host, VgpuOptions{}, counters, 1);
    const vgpu_sg_entry list[2] = {{8 * kPage, kPage}, {2 * kPage, kPage}};
    ASSERT_TRUE(mem.write(memmap::GuestPhysAddr{0}, list, sizeof list));
    GuestCommand c{};
    c.desc.opcode = VGPU_OP_HOST_REGISTER;
    c.desc.arg[0] = 0, c.desc.arg[1] = 2, c.desc.arg[2] = 2 * kPage;
    const CommandResult r = d.execute(c);
    EXPECT_EQ(r.status, VGPU_SUCCESS);
    EXPECT_EQ(r.result[1], 0u);
    GuestCommand u{};
    u.desc.opcode = VGPU_OP_HOST_UNREGISTER;
    u.desc.arg[0] = r.result[0];
    EXPECT_EQ(d.execute(u).status, VGPU_SUCCESS);
}

} // namespace
} // namespace kvmgpu::vgpu::test
