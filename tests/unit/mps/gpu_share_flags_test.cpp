// --gpu-share and the MPS flags: defaults, the values each accepts, one
// clear refusal for each bad one, and the per-client limit variables.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kvmtool-gpu/cli/gpu_share_flags.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"
#include "tests/unit/mps/fake_mps.h"

namespace kvmgpu::cli {
namespace {

GpuShareOptions share(std::vector<std::string> args) {
    ArgParser p(vgpu_option_names(), {});
    p.parse(args);
    return parse_gpu_share_flags(p);
}

std::string refusal(std::vector<std::string> args) {
    try {
        ArgParser p(vgpu_option_names(), {});
        p.parse(args);
        parse_vgpu_flags(p);
    } catch (const UsageError& e) {
        return e.what();
    }
    return "";
}

TEST(GpuShareFlags, ContextsIsTheDefaultAndStartsNothing) {
    test::FakeMpsPath fake; // an MPS program on PATH that must not be called
    ArgParser p(vgpu_option_names(), {});
    p.parse({"--vgpu", "host"});
    const auto c = parse_vgpu_flags(p);
    ASSERT_TRUE(c && c->share);
    EXPECT_EQ(c->share->mode(), GpuShareMode::Contexts);
    EXPECT_EQ(c->share->describe(), "contexts");
    EXPECT_EQ(c->share->group(), nullptr);
    EXPECT_TRUE(fake.record().empty()) << fake.record_text();
    EXPECT_EQ(share({}).fallback, MpsFallback::Stop);
}

TEST(GpuShareFlags, AcceptsTheirRanges) {
    const auto o = share({"--gpu-share", "mps", "--mps-thread-percentage", "100", "--mps-mem-limit", "4G",
                          "--mps-fallback", "contexts", "--mps-pipe", "/run/mps"});
    EXPECT_EQ(o.mode, GpuShareMode::Mps);
    EXPECT_EQ(o.thread_percentage, 100u);
    EXPECT_EQ(o.pinned_mem_limit, 4ull << 30);
    EXPECT_EQ(o.fallback, MpsFallback::Contexts);
    EXPECT_EQ(o.mps_pipe, "/run/mps");
    EXPECT_EQ(share({"--gpu-share", "mps", "--mps-thread-percentage", "1"}).thread_percentage, 1u);
}

TEST(GpuShareFlags, RefusesBadValuesInOneLine) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"--gpu-share", "time-slicing"}, "--gpu-share 'time-slicing': expected contexts or mps"},
        {{"--gpu-share", "mps", "--mps-thread-percentage", "0"}, "1..100"},
        {{"--gpu-share", "mps", "--mps-thread-percentage", "101"}, "1..100"},
        {{"--gpu-share", "mps", "--mps-thread-percentage", "-5"}, "--mps-thread-percentage"},
        {{"--gpu-share", "mps", "--mps-thread-percentage", "50%"}, "--mps-thread-percentage"},
        {{"--gpu-share", "mps", "--mps-mem-limit", "0"}, "--mps-mem-limit"},
        {{"--gpu-share", "mps", "--mps-mem-limit", "512K"}, "at least 1M"},
        {{"--gpu-share", "mps", "--mps-mem-limit", "1537K"}, "whole MiB"},
        {{"--gpu-share", "mps", "--mps-fallback", "ignore"}, "expected contexts or stop"},
        {{"--gpu-share", "mps", "--mps-pipe", ""}, "--mps-pipe: empty path"},
        // An MPS knob without MPS would be silently ignored.
        {{"--mps-thread-percentage", "50"}, "need --gpu-share mps"},
        {{"--mps-pipe", "/tmp"}, "need --gpu-share mps"},
        // MPS clients are worker processes, and the host backend is no client.
        {{"--gpu-share", "mps", "--gpu-worker", "inline"}, "not --gpu-worker inline"},
        {{"--gpu-share", "mps", "--vgpu", "host"}, "--vgpu host runs no CUDA"},
    };
    for (const auto& [args, want] : cases) {
        const std::string got = refusal(args);
        EXPECT_NE(got.find(want), std::string::npos) << "args[0..]=" << args[0] << " " << args.back() << ": " << got;
        EXPECT_EQ(got.find('\n'), std::string::npos) << got;
    }
}

TEST(GpuShareFlags, LimitsBecomeTheClientsVariables) {
    GpuShareOptions o;
    o.mode = GpuShareMode::Mps;
    EXPECT_TRUE(mps_limit_env(o, std::vector<int>{0}).empty());
    o.thread_percentage = 25;
    o.pinned_mem_limit = 3ull << 30;
    const auto env = mps_limit_env(o, std::vector<int>{1, 0, 1});
    ASSERT_EQ(env.size(), 2u);
    EXPECT_EQ(env[0], (std::pair<std::string, std::string>{"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "25"}));
    EXPECT_EQ(env[1], (std::pair<std::string, std::string>{"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=3072M,1=3072M"}));
}

TEST(GpuShareFlags, HelpNamesEveryFlag) {
    const std::string help = vgpu_options_help();
    for (const auto& name : gpu_share_option_names()) EXPECT_NE(help.find("--" + name), std::string::npos) << name;
}

} // namespace
} // namespace kvmgpu::cli
