// Boots the real `hello` guest (guest-stub/) on each backing the host can
// provide, and checks what it leaves behind: a value in memory, one in RBX.
#include <filesystem>

#include "kvmtool-gpu/abi/platform_abi.h"
#include "tests/kvm/kvm_fixture.h"

namespace kvmgpu::test {
namespace {

class HelloGuest : public KvmTest, public ::testing::WithParamInterface<memmap::PageSize> {};

TEST_P(HelloGuest, BootsAndChecksItself) {
    const std::string image = guest_image("hello");
    if (!std::filesystem::exists(image)) GTEST_SKIP() << "hello guest not built: " << image;
    const auto page = GetParam();
    auto o = quiet_options(image);
    o.host_pages = page;
    o.ram_bytes = page == memmap::PageSize::k1G ? (1ull << 30) : (128ull << 20);
    const char* pool = page == memmap::PageSize::k2M ? "hugepages-2048kB" : "hugepages-1048576kB";
    if (page != memmap::PageSize::k4K && free_huge_pages(pool) * memmap::bytes(page) < o.ram_bytes)
        GTEST_SKIP() << "not enough free " << memmap::to_string(page) << " huge pages reserved (" << pool << ")";
    VirtualMachine vm(*kvm_, o);
    const auto r = vm.run();
    ASSERT_TRUE(r.passed()) << r.detail << " code " << r.exit_code << "\n" << r.register_dump;
    EXPECT_EQ(r.final_regs.rbx, KVMGPU_HELLO_RBX_MAGIC);
    const auto info = vm.memory().read_obj<kvmgpu_boot_info>(memmap::GuestPhysAddr{KVMGPU_BOOT_INFO_GPA});
    ASSERT_TRUE(info);
    EXPECT_EQ(info->guest_result, KVMGPU_HELLO_MEMORY_MAGIC);
    EXPECT_GT(r.timings.first_instruction_ns, 0u);
    EXPECT_FALSE(console_.empty());
}

INSTANTIATE_TEST_SUITE_P(Backings, HelloGuest,
                         ::testing::Values(memmap::PageSize::k4K, memmap::PageSize::k2M, memmap::PageSize::k1G),
                         [](const auto& info) { return std::string("pages_") + std::string(memmap::to_string(info.param)); });

} // namespace
} // namespace kvmgpu::test
