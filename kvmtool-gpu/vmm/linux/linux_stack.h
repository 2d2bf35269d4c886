// The Linux start-up stack a static executable expects at its entry (the
// System V x86-64 ABI's process initialisation): from RSP up, argc, argv[]
// and NULL, envp[] and NULL, the auxiliary vector (pairs ending in AT_NULL),
// then the strings and AT_RANDOM's 16 bytes. Built as bytes for a given top
// address, so it is tested without KVM.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kvmgpu::linux_abi {

struct StartupInfo {
    std::vector<std::string> argv; // argv[0] first
    std::vector<std::string> envp; // "K=V"
    // Auxiliary entries whose values are numbers; AT_RANDOM, AT_EXECFN and
    // AT_PLATFORM (pointers into the stack) and AT_NULL are added here.
    std::vector<std::pair<uint64_t, uint64_t>> auxv;
    std::string execfn;             // AT_EXECFN
    std::string platform = "x86_64"; // AT_PLATFORM
    std::array<uint8_t, 16> random{}; // AT_RANDOM
};

struct StartupStack {
    uint64_t sp = 0;            // RSP at entry: 16-byte aligned, points at argc
    std::vector<uint8_t> bytes; // to be written at [sp, top)
};

// Limits: what one guest may pass (ARG_MAX-like): total string bytes.
constexpr uint64_t kMaxStartupBytes = 128 * 1024;

// AT_RANDOM's 16 bytes (glibc's stack canary and pointer guard): from a
// seed (--seed), the same each run; without one, the host's getrandom(2).
// Throws std::runtime_error when the host gives none.
std::array<uint8_t, 16> startup_random(std::optional<uint64_t> seed);

// Throws std::invalid_argument when the strings exceed kMaxStartupBytes,
// contain a NUL, or `top` is not 16-byte aligned or too low.
StartupStack build_startup_stack(uint64_t top, const StartupInfo& info);

} // namespace kvmgpu::linux_abi
