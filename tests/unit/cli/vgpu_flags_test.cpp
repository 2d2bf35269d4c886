// Every per-VM limit of the vGPU has a flag of `kvmtool-gpu run` (and the
// bench commands), a default that bounds what one guest can take, and a
// refusal for values that would disable or overflow it. Enforcement by the
// device model is tested in tests/unit/vgpu_attack (Attack.*Quota*,
// .HandleTablesFillUpPerVm, .ModuleImageLargerThanMaxModuleBytes,
// .RingLargerThanMaxRing) and tests/unit/vgpu (VgpuKernels.HandleTablesAreBounded,
// VgpuMemory.AllocationCountIsBounded).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kvmtool-gpu/cli/vgpu_flags.h"

namespace kvmgpu::cli {
namespace {

VgpuConfig parse(std::vector<std::string> args) {
    ArgParser p(vgpu_option_names(), {});
    p.parse(args);
    auto c = parse_vgpu_flags(p);
    if (!c) throw UsageError("--vgpu none");
    return *c;
}

TEST(VgpuLimitFlags, DefaultsBoundEveryGuest) {
    const VgpuConfig c = parse({});
    EXPECT_EQ(c.options.device_mem_quota, 4ull << 30);
    EXPECT_EQ(c.options.max_handles, 65536u);
    EXPECT_EQ(c.options.max_module_bytes, 64ull << 20);
    EXPECT_EQ(c.options.max_ring, 4096u);
    EXPECT_EQ(c.options.max_ring, VGPU_DEFAULT_MAX_RING);
    // Each default is also what VgpuOptions{} gives a library user.
    const vgpu::VgpuOptions lib;
    EXPECT_EQ(lib.device_mem_quota, c.options.device_mem_quota);
    EXPECT_EQ(lib.max_handles, c.options.max_handles);
    EXPECT_EQ(lib.max_module_bytes, c.options.max_module_bytes);
    EXPECT_EQ(lib.max_ring, c.options.max_ring);
    // Every limit is named in --help.
    const std::string help = vgpu_options_help();
    for (const char* flag : {"--gpu-mem-quota", "--max-handles", "--max-module", "--ring-max"})
        EXPECT_NE(help.find(flag), std::string::npos) << flag;
}

TEST(VgpuLimitFlags, EachFlagSetsItsLimit) {
    const VgpuConfig c =
        parse({"--gpu-mem-quota", "256M", "--max-handles", "64", "--max-module", "1M", "--ring-max", "256"});
    EXPECT_EQ(c.options.device_mem_quota, 256ull << 20);
    EXPECT_EQ(c.options.max_handles, 64u);
    EXPECT_EQ(c.options.max_module_bytes, 1ull << 20);
    EXPECT_EQ(c.options.max_ring, 256u);
    EXPECT_EQ(parse({"--ring-max=65536"}).options.max_ring, 65536u); // the largest accepted
    EXPECT_EQ(parse({"--max-handles=16777216"}).options.max_handles, 1u << 24);
}

TEST(VgpuLimitFlags, NonsenseIsAUsageError) {
    const std::vector<std::vector<std::string>> bad = {
        {"--ring-max", "100"},         // not a power of two
        {"--ring-max", "4"},           // below VGPU_MIN_RING
        {"--ring-max", "131072"},      // above 65536
        {"--ring-max", "4294971392"},  // 2^32 + 4096: must not wrap to 4096
        {"--max-handles", "0"},
        {"--max-handles", "16777217"}, // above 2^24
        {"--max-handles", "4294967297"}, // 2^32 + 1: must not wrap to 1
        {"--max-module", "0"},
        {"--gpu-mem-quota", "lots"},
        {"--max-handles", "-1"},
    };
    for (const auto& args : bad) EXPECT_THROW(parse(args), UsageError) << args[0] << " " << args[1];
}

TEST(GpusFlag, ListsTheGuestsDevices) {
    EXPECT_EQ(parse({}).gpus, std::vector<int>{0});
    EXPECT_EQ(parse({"--gpus", "1"}).gpus, std::vector<int>{1});
    EXPECT_EQ(parse({"--gpus", "0,1,2,3"}).gpus, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(parse({"--gpus=0,0,0,0"}).gpus, (std::vector<int>{0, 0, 0, 0}));
    EXPECT_NE(std::string(vgpu_options_help()).find("--gpus"), std::string::npos);
    for (const char* bad : {"", ",", "0,", ",0", "a", "-1", "0;1", "64", "1000", "0,,1", " 0", "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0"})
        EXPECT_THROW(parse({"--gpus", bad}), UsageError) << "'" << bad << "'";
}

} // namespace
} // namespace kvmgpu::cli

namespace kvmgpu::cli {
namespace {

// --gpu-remote and --gpu-key go together, and the key file must be private.
TEST(GpuRemoteFlags, TheAddressAndTheKeyGoTogether) {
    EXPECT_THROW(parse({"--gpu-remote", "gpu-host:18515"}), UsageError);
    EXPECT_THROW(parse({"--gpu-key", "/some/key"}), UsageError);
    EXPECT_THROW(parse({"--gpu-remote", "gpu-host:18515", "--gpu-key", "/nonexistent/key"}), UsageError);
    const std::string help = vgpu_options_help();
    for (const char* flag : {"--gpu-remote", "--gpu-key"}) EXPECT_NE(help.find(flag), std::string::npos) << flag;
}

} // namespace
} // namespace kvmgpu::cli
