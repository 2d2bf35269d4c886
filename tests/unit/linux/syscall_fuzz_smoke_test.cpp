// The system-call fuzz target's body on generated inputs and its committed
// seeds' shape, so it builds and runs in every build (the libFuzzer build
// needs clang: tests/fuzz/run-ci-fuzz.sh).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tests/fuzz/linux_syscall_fuzz_body.h"

namespace {

TEST(LinuxSyscallFuzzSmoke, GeneratedInputsRun) {
    std::mt19937_64 rng(27);
    for (int i = 0; i < 300; ++i) {
        std::vector<uint8_t> input(rng() % 1200);
        for (auto& b : input) b = static_cast<uint8_t>(rng());
        kvmgpu::fuzz::run_linux_syscall_input(input.data(), input.size());
    }
    kvmgpu::fuzz::run_linux_syscall_input(nullptr, 0);
}

} // namespace
