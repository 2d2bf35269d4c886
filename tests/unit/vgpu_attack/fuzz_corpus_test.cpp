// The device fuzz target's seed corpus (tests/fuzz/corpus/vgpu_device) as a
// regression suite in every build, gcc included: each seed runs through the
// same harness and oracles as under libFuzzer, and together the seeds must
// get past validation (successful copies, launches, SG transfers, broken
// rings), so the corpus keeps steering the fuzzer into the device.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "tests/fuzz/vgpu_device_fuzz_body.h"

namespace kvmgpu::vgpu {
namespace {

TEST(FuzzCorpus, VgpuDeviceSeedsRunCleanAndReachTheDevice) {
    // $KVMGPU_FUZZ_CORPUS, else fuzz_corpus/ beside this binary (put there at build time).
    const char* env = std::getenv("KVMGPU_FUZZ_CORPUS");
    const std::filesystem::path root =
        env ? std::filesystem::path(env) : std::filesystem::read_symlink("/proc/self/exe").parent_path() / "fuzz_corpus";
    const std::filesystem::path dir = root / "vgpu_device";
    ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
    VgpuCounterSnapshot sum;
    int seeds = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        std::ifstream f(entry.path(), std::ios::binary);
        const std::vector<uint8_t> data{std::istreambuf_iterator<char>(f), {}};
        SCOPED_TRACE(entry.path().filename().string());
        VgpuCounterSnapshot c;
        fuzz::run_device_input(data.data(), data.size(), &c);
        std::printf("seed %-20s %3llu commands, %3llu errors, %llu broken, %llu recoveries\n",
                    entry.path().filename().c_str(), (unsigned long long)c.commands, (unsigned long long)c.errors,
                    (unsigned long long)c.broken, (unsigned long long)c.recoveries);
        sum.commands += c.commands, sum.errors += c.errors, sum.broken += c.broken, sum.recoveries += c.recoveries;
        sum.bytes_htod += c.bytes_htod, sum.bytes_dtoh += c.bytes_dtoh, sum.bytes_dtod += c.bytes_dtod;
        for (size_t i = 0; i < c.per_opcode.size(); ++i) sum.per_opcode[i] += c.per_opcode[i];
        ++seeds;
    }
    EXPECT_GE(seeds, 10);
    EXPECT_GT(sum.commands, sum.errors); // mostly commands that pass validation
    EXPECT_GT(sum.errors, 0u);           // and some that must not
    EXPECT_GT(sum.bytes_htod, 0u);
    EXPECT_GT(sum.bytes_dtoh, 0u);
    EXPECT_GT(sum.bytes_dtod, 0u);
    EXPECT_GE(sum.broken, 2u);     // broken_ring, producer_behind
    EXPECT_GE(sum.recoveries, 1u); // matmul_fault, other_vm
    for (uint16_t op : {VGPU_OP_LAUNCH_KERNEL_PACKED, VGPU_OP_MEMCPY_HTOD_SG, VGPU_OP_MEMCPY_DTOH_SG, VGPU_OP_MODULE_LOAD_DATA,
                        VGPU_OP_EVENT_ELAPSED_TIME, VGPU_OP_MEMSET_D32})
        EXPECT_GT(sum.per_opcode[op], 0u) << "opcode " << op;
}

} // namespace
} // namespace kvmgpu::vgpu
